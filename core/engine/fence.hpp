// iWARP's WRITE fence: a WRITE completes there once TCP has its data, so before the
// peer reads what was written, a one-byte READ behind the WRITEs on each QP must
// answer (PointResources::fence_writes says when it is used).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/engine/loop_resources.hpp"

namespace rdmasweep {

// Returns once every WRITE posted on the lanes' QPs has landed at the peer. Every lane
// at once: with --cq-scope process they share one CQ.
void fence_writes(const std::vector<LoopResources*>& lanes, std::chrono::milliseconds timeout);

// What fence_writes polls, routed by qp_num: its own READs counted down, and any WR of
// a loop still queued retired in its QP's send-queue count (SendQueue), as the loop
// would have retired it.
struct FenceRoute {
  static constexpr uint64_t kFence = ~uint64_t{0};  // its READs' wr_id: no WrId of the loops'

  std::vector<std::vector<SendQueue>*> sq;                  // per lane, per QP
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> where;  // qp_num -> (lane, QP index)
  size_t left = 0;                                          // fence READs not yet completed
  // True for a fence READ's completion.
  bool take(const ibv_wc& wc);
};

}  // namespace rdmasweep
