// The paced bandwidth loop's setup: the schedule, the plan, the Ops.
#include "core/engine/loop_paced.hpp"

#include <numeric>

#include "core/engine/loop_validate.hpp"
#include "core/engine/send_credits.hpp"

namespace rdmasweep {

using namespace detail;

namespace detail {

PaceSchedule::PaceSchedule(double gap_ns, ArrivalProcess arrivals, uint64_t seed) : gap_(gap_ns) {
  if (arrivals != ArrivalProcess::Poisson) return;
  gaps_.resize(kPoissonGaps);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;  // xorshift64*: the same gaps on every run
  for (double& g : gaps_) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const double u = static_cast<double>((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;  // [0, 1)
    g = -std::log1p(-u);  // exponential, mean 1
  }
  // Scaled to a mean of exactly gap_ns: every full cycle offers exactly the rate.
  const double scale = gap_ns * static_cast<double>(kPoissonGaps) / std::accumulate(gaps_.begin(), gaps_.end(), 0.0);
  for (double& g : gaps_) g *= scale;
}

}  // namespace detail

PacedStats run_paced_initiator(LoopResources& r, uint64_t per_qp, double duration, const RunControl& ctl,
                               double interval) {
  const TestConfig& c = r.cfg;
  PacedPlan p;
  p.nqp = static_cast<uint32_t>(r.qps.size());
  p.depth = c.knobs.tx_depth;
  p.batch = c.knobs.poll_batch;
  p.per_qp = per_qp;
  p.duration = duration;
  p.interval = interval;
  // This loop's share of the point's rate: a point's threads each run one.
  p.gap_ns = 1e9 * c.knobs.threads / rate_messages_per_second(c.knobs.rate, c.work.size);
  p.arrivals = c.knobs.arrivals;
  p.posted = posted_name(c.work.op);
  p.await_peer = r.role == Role::Target;
  SendWrs wrs = make_send_wrs(r, 1, opcode_of(c.work.op), r.use_inline ? IBV_SEND_INLINE : 0);
  IdleWatch watch(ctl);
  Poller poller(r, watch);
  CreditReads credits = make_credit_reads(r);  // SEND on iWARP
  CreditReads* cr = credits.window != 0 ? &credits : nullptr;
  return with_initiator_ops(r, poller, [&](auto& ops, Arrivals* in) {
    return paced_initiator_loop(ops, wrs, r.sq, p, watch, in, cr);
  });
}

}  // namespace rdmasweep
