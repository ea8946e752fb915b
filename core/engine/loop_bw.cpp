// Bandwidth / message-rate loops. Nothing but post, poll and count.
#include <algorithm>

#include "core/engine/loop_bw.hpp"
#include "core/engine/loop_validate.hpp"

namespace rdmasweep {

using namespace detail;


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

LoopStats run_bw_initiator(LoopResources& r, uint64_t per_qp, double duration, const RunControl& ctl, double interval) {
  BwPlan p = bw_plan(r.cfg, per_qp, duration);
  p.interval = interval;
  p.nqp = static_cast<uint32_t>(r.qps.size());
  p.await_peer = r.role == Role::Target;
  SendWrs wrs = make_send_wrs(r, p.post_list, opcode_of(r.cfg.work.op), r.use_inline ? IBV_SEND_INLINE : 0);
  IdleWatch watch(ctl);  // one for the loop and its Poller (the waits of --events)
  Poller poller(r, watch);
  CreditReads credits = make_credit_reads(r);
  CreditReads* cr = credits.window != 0 ? &credits : nullptr;
  return with_initiator_ops(r, poller, [&](auto& ops, Arrivals* in) {
    return bw_initiator_loop(ops, wrs, r.sq, p, watch, in, cr);
  });
}

LoopStats run_bw_receiver(LoopResources& r, std::vector<uint64_t>& expected, const RunControl& ctl, uint64_t warmup,
                          const bool* sender_done) {
  Receives receives(r);
  ReceiveCount count(expected, static_cast<uint32_t>(r.qps.size()), is_ud(r.cfg) ? sender_done : nullptr);
  // The peer's DONE (via on_idle) may lower the targets: recount after every check
  // (UD: and watch the arrivals for the quiet that ends the loop).
  RunControl local = ctl;
  local.on_idle = [&] {
    if (ctl.on_idle) ctl.on_idle();
    count.idle();
  };
  IdleWatch watch(local);
  Poller poller(r, watch);
  VerbsOps ops(r, poller, &receives);
  const BwPlan p = bw_plan(r.cfg, 0, 0);  // the receiver reads its batch only
  if (r.cfg.knobs.validate) {
    CheckedOps checked(r, ops, &receives);
    return bw_receiver_loop(checked, count, p, warmup, watch);
  }
  return bw_receiver_loop(ops, count, p, warmup, watch);
}

}  // namespace rdmasweep
