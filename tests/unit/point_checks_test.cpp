// The point protocol's checks (core/point/point_checks.hpp): the one place where what
// one end sent is held against what the other got, for the client/server and the mesh.
#include "core/point/point_checks.hpp"

#include <gtest/gtest.h>

#include "core/config/knobs.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

static std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const verbs::Error& e) {
    return e.what();
  }
  return "";
}

TEST(PointChecks, EqualCountsPassAndTheFirstDifferenceIsNamed) {
  EXPECT_EQ(refusal([] { check_received("the server", {5, 7}, "the client", {5, 7}); }), "");
  EXPECT_EQ(refusal([] { check_received("the server", {5, 6, 2}, "the client", {5, 7, 3}); }),
            "the server received 6 messages on QP 1 but the client sent 7");
  // A receiver that reported fewer QPs than were sent on got nothing on the rest.
  EXPECT_EQ(refusal([] { check_received("rank 1 (b)", {4}, "rank 0 (a)", {4, 9}); }),
            "rank 1 (b) received 0 messages on QP 1 but rank 0 (a) sent 9");
  // More than was sent is as wrong as less.
  EXPECT_NE(refusal([] { check_received("the server", {8}, "the client", {7}); }), "");
}

TEST(PointChecks, AtomicsLeaveTheirCountInTheTargetsWords) {
  TestConfig c;
  c.work.op = Op::Faa;
  c.work.qps = 2;
  EXPECT_EQ(refusal([&] { check_atomic_sum(c, {3, 4}, 7); }), "");
  EXPECT_NE(refusal([&] { check_atomic_sum(c, {3, 4}, 6); }).find("sum to 6"), std::string::npos);
  EXPECT_NE(refusal([&] { check_atomic_sum(c, {3, 4}, std::nullopt); }).find("same rdmasweep version"), std::string::npos);
}

}  // namespace rdmasweep
