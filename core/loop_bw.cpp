// Bandwidth / message-rate loops. Nothing but post, poll and count.
#include <algorithm>

#include "core/loop_bw.hpp"

namespace rdmasweep {

using namespace detail;

namespace {
// The real device calls; inlined into the loop.
struct VerbsOps {
  std::vector<ibv_qp*> qp;
  Poller& poller;
  int post(uint32_t q, ibv_send_wr* w) {
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp[q], w, &bad);
  }
  int poll(int, ibv_wc* wc) { return poller.poll(wc); }
};
}  // namespace

namespace detail {
BwPlan bw_plan(const TestConfig& c, uint64_t per_qp, double duration) {
  BwPlan p;
  p.nqp = c.work.qps;
  p.depth = c.knobs.tx_depth;
  p.post_list = c.knobs.post_list;
  p.every = effective_signal_every(c);
  p.batch = c.knobs.poll_batch;
  p.per_qp = per_qp;
  p.duration = duration;
  p.posted = posted_name(c.work.op);
  return p;
}
}  // namespace detail

LoopStats run_bw_initiator(TestResources& r, uint64_t per_qp, double duration, const RunControl& ctl) {
  BwPlan p = bw_plan(r.cfg, per_qp, duration);
  p.nqp = static_cast<uint32_t>(r.qps.size());
  SendWrs wrs = make_send_wrs(r, p.post_list, opcode_of(r.cfg.work.op), r.use_inline ? IBV_SEND_INLINE : 0);
  IdleWatch watch(ctl);  // one for the loop and its Poller (the waits of --events)
  Poller poller(r, watch);
  VerbsOps ops{{}, poller};
  for (const verbs::QueuePair& qp : r.qps) ops.qp.push_back(qp.get());
  return bw_initiator_loop(ops, wrs, r.sq, p, watch);
}

LoopStats run_bw_receiver(TestResources& r, std::vector<uint64_t>& expected, const RunControl& ctl, uint64_t warmup) {
  const uint32_t nqp = static_cast<uint32_t>(r.qps.size());
  const uint32_t batch = r.cfg.knobs.poll_batch;
  Receives receives(r);
  std::vector<uint64_t> received(nqp, 0);
  std::vector<ibv_wc> wc(batch);
  auto count_unfinished = [&] {
    uint32_t n = 0;
    for (uint32_t q = 0; q < nqp; ++q) n += received[q] < expected[q];
    return n;
  };
  // The peer's DONE (via on_idle) may lower the targets: recount after every check.
  RunControl local = ctl;
  uint32_t unfinished = count_unfinished();
  local.on_idle = [&] {
    if (ctl.on_idle) ctl.on_idle();
    unfinished = count_unfinished();
  };
  IdleWatch watch(local);
  Poller poller(r, watch);

  // QPs still in the client's warm-up; the CPU window opens when none is left.
  uint32_t warming = warmup > 0 ? nqp : 0;
  double cpu0 = loop_cpu_seconds();
  Clock::time_point start{};
  bool started = false;
  while (unfinished > 0) {
    int got = poller.poll(wc.data());
    if (got > 0 && !started) {
      start = Clock::now();
      started = true;
    }
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], "RECV");
      uint32_t q = receives.complete(wc[i]);
      uint64_t n = ++received[q];
      if (n == warmup && --warming == 0) cpu0 = loop_cpu_seconds();
      if (n == expected[q]) --unfinished;
    }
    watch.tick(got);
  }
  LoopStats st;
  st.seconds = started ? seconds_between(start, Clock::now()) : 0;
  st.cpu_seconds = warming == 0 ? loop_cpu_seconds() - cpu0 : 0;
  st.per_qp = std::move(received);
  return st;
}

}  // namespace rdmasweep
