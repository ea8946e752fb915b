#include "core/engine/wr_id.hpp"

#include <gtest/gtest.h>

namespace rdmasweep {

TEST(WrId, RoundTripsQpIndexAndSequence) {
  const uint32_t qps[] = {0, 1, 15, 1023, 4095, WrId::kMaxQps - 1};
  const uint32_t seqs[] = {0, 1, 31, 0x7fffffffu, 0xffffffffu};
  for (uint32_t q : qps)
    for (uint32_t s : seqs) {
      uint64_t id = WrId::encode(q, s);
      EXPECT_EQ(WrId::qp(id), q);
      EXPECT_EQ(WrId::seq(id), s);
    }
}

TEST(WrId, DistinctPairsGiveDistinctIds) {
  EXPECT_NE(WrId::encode(1, 0), WrId::encode(0, 1));
  EXPECT_NE(WrId::encode(2, 5), WrId::encode(5, 2));
}

static_assert(WrId::qp(WrId::encode(7, 9)) == 7 && WrId::seq(WrId::encode(7, 9)) == 9, "codec is constexpr");

}  // namespace rdmasweep
