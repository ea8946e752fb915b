// Latency (ping-pong) loops: one round trip in flight per QP, all QPs at once.
// SEND: the pong is a SEND back. WRITE: each side watches the last byte of its
// region for the ping's tag (as perftest does). READ: the READ's own completion.
// The loops themselves are templates in loop_lat.hpp.
#include <algorithm>

#include "core/engine/loop_lat.hpp"
#include "core/engine/loop_validate.hpp"

namespace rdmasweep {

using namespace detail;


namespace detail {
LatPlan lat_plan(const TestConfig& c, uint64_t warmup, uint64_t iters, double duration) {
  LatPlan p;
  p.nqp = c.work.qps;
  p.op = c.work.op;
  p.depth = c.knobs.tx_depth;
  p.every = effective_signal_every(c);
  p.batch = c.knobs.poll_batch;
  p.warmup = warmup;
  p.iters = iters;
  p.duration = duration;
  // WRITE pongs are seen in memory, or as receive completions with --events.
  p.in_memory = p.op == Op::Write && !write_with_imm(c);
  return p;
}
}  // namespace detail

LatStats run_lat_initiator(LoopResources& r, uint64_t warmup, uint64_t iters, double duration, const RunControl& ctl,
                           double interval) {
  LatPlan p = lat_plan(r.cfg, warmup, iters, duration);
  p.interval = interval;
  p.nqp = static_cast<uint32_t>(r.qps.size());
  const size_t last = r.cfg.work.size - 1;
  for (uint32_t q = 0; q < p.nqp; ++q) {
    p.tx_tag.push_back(r.tx_region(q) + last);
    p.rx_tag.push_back(r.rx_region(q) + last);
  }
  SendWrs wrs = make_send_wrs(r, 1, write_with_imm(r.cfg) ? IBV_WR_RDMA_WRITE_WITH_IMM : opcode_of(p.op),
                              r.use_inline ? IBV_SEND_INLINE : 0);
  Receives receives(r);
  IdleWatch watch(ctl);  // one for the loop and its Poller (the waits of --events)
  Poller poller(r, watch);
  VerbsOps ops(r, poller, &receives);
  if (r.cfg.knobs.validate) {
    CheckedOps checked(r, ops, &receives);
    return lat_initiator_loop(checked, wrs, r.sq, p, watch);
  }
  return lat_initiator_loop(ops, wrs, r.sq, p, watch);
}

LoopStats run_lat_responder(LoopResources& r, const bool* finished, const RunControl& ctl, uint64_t warmup) {
  LatPlan p = lat_plan(r.cfg, warmup, 0, 0);
  p.nqp = static_cast<uint32_t>(r.qps.size());
  const size_t last = r.cfg.work.size - 1;
  for (uint32_t q = 0; q < p.nqp; ++q) p.rx_tag.push_back(r.rx_region(q) + last);
  SendWrs wrs = make_send_wrs(r, 1, write_with_imm(r.cfg) ? IBV_WR_RDMA_WRITE_WITH_IMM : opcode_of(p.op),
                              r.use_inline ? IBV_SEND_INLINE : 0, /*echo=*/p.op == Op::Write);
  Receives receives(r);
  IdleWatch watch(ctl);
  Poller poller(r, watch);
  VerbsOps ops(r, poller, &receives);
  if (r.cfg.knobs.validate) {
    CheckedOps checked(r, ops, &receives);
    return lat_responder_loop(checked, wrs, r.sq, p, finished, watch);
  }
  return lat_responder_loop(ops, wrs, r.sq, p, finished, watch);
}

}  // namespace rdmasweep
