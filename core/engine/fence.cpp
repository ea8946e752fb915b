#include "core/engine/fence.hpp"

#include <algorithm>
#include <string>

#include "core/engine/wr_id.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

bool FenceRoute::take(const ibv_wc& wc) {
  const auto at = where.find(wc.qp_num);
  if (at == where.end()) return false;
  const auto [lane, q] = at->second;
  if (wc.wr_id == kFence) {
    --left;
    return true;
  }
  // A WR of the loop still queued (a WRITE ping's completion the latency loop left
  // behind): retired as the loop would have, or the QP's count lags for its life and
  // a reused shape waits for a completion this fence took.
  if (!(wc.opcode & IBV_WC_RECV) && !WrId::is_credit(wc.wr_id) && WrId::qp(wc.wr_id) == q)
    (*sq[lane])[q].retire(WrId::seq(wc.wr_id));
  return false;
}

void fence_writes(const std::vector<LoopResources*>& lanes, std::chrono::milliseconds timeout) {
  // One byte, not zero: Soft-iWARP answers a zero-length READ that comes in while it is
  // sending (--bidir) with a stale SGE of its last WQE and ends the connection.
  FenceRoute route;
  std::vector<ibv_cq*> cqs;  // each once: --cq-scope process gives every lane the same
  for (uint32_t l = 0; l < lanes.size(); ++l) {
    LoopResources& res = *lanes[l];
    route.sq.push_back(&res.sq);
    ibv_cq* cq = res.completion_queue().get();
    if (std::find(cqs.begin(), cqs.end(), cq) == cqs.end()) cqs.push_back(cq);
    for (uint32_t q = 0; q < res.qps.size(); ++q) {
      route.where[res.qps[q].qpn()] = {l, q};
      ibv_sge sge{reinterpret_cast<uintptr_t>(res.fence_word.get()), 1, res.fence_mr.lkey()};
      ibv_send_wr wr = verbs::signaled_read(FenceRoute::kFence, &sge, res.remote.rx_region(q), res.remote.rkey_of(q));
      ibv_send_wr* bad = nullptr;
      verbs::check_rc(ibv_post_send(res.qps[q].get(), &wr, &bad),
                      "ibv_post_send(one-byte READ behind QP " + std::to_string(q) + "'s WRITEs)");
      ++route.left;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (route.left > 0) {
    int polled = 0;
    for (ibv_cq* cq : cqs) {
      ibv_wc wc[16];
      const int n = ibv_poll_cq(cq, 16, wc);
      if (n < 0) throw verbs::Error("ibv_poll_cq failed while waiting for the WRITEs to land");
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS)
          throw verbs::CompletionError(verbs::completion_error(wc[i], 0, "one-byte READ behind the WRITEs"),
                                       wc[i].status);
        route.take(wc[i]);
      }
      polled += n;
    }
    if (polled == 0 && std::chrono::steady_clock::now() > deadline)
      throw verbs::Error("the WRITEs had not landed at the peer " + std::to_string(timeout.count() / 1000) +
                         " s after their completions (no answer to a one-byte READ behind them)");
  }
}

}  // namespace rdmasweep
