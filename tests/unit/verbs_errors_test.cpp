// The verbs layer's error conventions that need no device.
#include <gtest/gtest.h>

#include <cerrno>

#include "core/verbs/errors.hpp"

namespace rdmasweep::verbs {

// A provider can fail a create without setting errno (Soft-iWARP's did): the message
// then says so instead of naming a stale errno left by an earlier call.
TEST(VerbsErrors, ACreateThatGivesNoReasonIsNotBlamedOnAStaleErrno) {
  errno = EINVAL;
  int* p = create_clearing_errno([]() -> int* { return nullptr; });
  try {
    check_ptr(p, "ibv_create_qp(RC)");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ibv_create_qp(RC) failed: the provider gave no reason (errno 0)");
    EXPECT_EQ(e.errnum(), 0);
  }
  p = create_clearing_errno([]() -> int* {
    errno = ENOMEM;
    return nullptr;
  });
  try {
    check_ptr(p, "ibv_create_cq");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.errnum(), ENOMEM);
  }
}

}  // namespace rdmasweep::verbs
