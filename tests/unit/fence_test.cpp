// iWARP's WRITE fence (fence_writes in core/engine/fence.cpp) polls the CQ for its
// one-byte READs. A WR of the loop still queued there (a WRITE latency ping's
// completion) must be retired in its QP's send-queue count as the loop would have:
// dropped, the count lags for the QP's life and a reused shape waits for it.
#include "core/engine/fence.hpp"

#include <gtest/gtest.h>

#include "core/engine/wr_id.hpp"

namespace rdmasweep {
namespace {

ibv_wc completion(uint32_t qp_num, uint64_t wr_id, ibv_wc_opcode op = IBV_WC_RDMA_WRITE) {
  ibv_wc wc{};
  wc.qp_num = qp_num;
  wc.wr_id = wr_id;
  wc.opcode = op;
  wc.status = IBV_WC_SUCCESS;
  return wc;
}

}  // namespace

TEST(Fence, ALoopsQueuedCompletionIsRetiredNotDropped) {
  std::vector<SendQueue> lane0(2), lane1(1);
  for (SendQueue* s : {&lane0[0], &lane0[1], &lane1[0]}) s->posted = 8;  // 8 WRs posted, none seen complete
  FenceRoute r;
  r.sq = {&lane0, &lane1};
  r.where = {{100, {0, 0}}, {101, {0, 1}}, {200, {1, 0}}};  // two lanes on one CQ (--cq-scope process)
  r.left = 3;
  EXPECT_FALSE(r.take(completion(101, WrId::encode(1, 7))));  // the last ping of lane 0's QP 1
  EXPECT_EQ(lane0[1].outstanding(), 0u);
  EXPECT_EQ(lane0[0].outstanding(), 8u);
  EXPECT_FALSE(r.take(completion(200, WrId::encode(0, 3))));  // lane 1's QP 0, by its qp_num
  EXPECT_EQ(lane1[0].outstanding(), 4u);
  EXPECT_EQ(lane0[0].outstanding(), 8u) << "routed by wr_id's QP index alone, it would have gone to lane 0";
  EXPECT_TRUE(r.take(completion(100, FenceRoute::kFence, IBV_WC_RDMA_READ)));
  EXPECT_TRUE(r.take(completion(200, FenceRoute::kFence, IBV_WC_RDMA_READ)));
  EXPECT_EQ(r.left, 1u);
}

TEST(Fence, ReceivesCreditReadsAndStrangersRetireNothing) {
  std::vector<SendQueue> lane(1);
  lane[0].posted = 4;
  FenceRoute r;
  r.sq = {&lane};
  r.where = {{100, {0, 0}}};
  r.left = 1;
  EXPECT_FALSE(r.take(completion(100, WrId::encode(0, 3), IBV_WC_RECV)));
  EXPECT_FALSE(r.take(completion(100, WrId::credit(0), IBV_WC_RDMA_READ)));
  EXPECT_FALSE(r.take(completion(999, WrId::encode(0, 3))));  // no QP of this point
  EXPECT_FALSE(r.take(completion(999, FenceRoute::kFence, IBV_WC_RDMA_READ)));
  EXPECT_EQ(lane[0].outstanding(), 4u);
  EXPECT_EQ(r.left, 1u);
}

}  // namespace rdmasweep
