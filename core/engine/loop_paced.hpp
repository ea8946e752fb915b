// The paced bandwidth initiator (--rate): message k of the point is due at a time the
// schedule sets (constant or Poisson gaps), posted when due and never before, to the
// QPs in turn, every one signaled; a message whose QP is full waits, is posted late
// and counted so, never skipped. Each completion gives two latencies: from when the
// message was due (what a paced user sees: queueing included) and from its post.
// Internal to core/loop_paced.cpp and the unit tests.
#pragma once

#include <cmath>
#include <vector>

#include "core/config/rate.hpp"
#include "core/engine/loop_common.hpp"
#include "core/engine/send_queue.hpp"

namespace rdmasweep::detail {

// A post more than this after its due time counts as late (a loop turn takes far less).
constexpr int64_t kLateNs = 1000;

// Due times, in ns from the point's start: message k at the sum of the first k gaps.
// Poisson gaps are drawn before the loop (kPoissonGaps of them from a seeded generator,
// scaled to a mean of exactly `gap`, then cycled), so the loop does no log() per message.
class PaceSchedule {
 public:
  static constexpr size_t kPoissonGaps = 4096;
  PaceSchedule(double gap_ns, ArrivalProcess arrivals, uint64_t seed = 1);
  // The due time of the next message; advances.
  double next() {
    const double d = due_;
    due_ += gaps_.empty() ? gap_ : gaps_[i_++ & (kPoissonGaps - 1)];
    return d;
  }
  double gap() const { return gap_; }

 private:
  double gap_, due_ = 0;
  std::vector<double> gaps_;
  size_t i_ = 0;
};

struct PacedPlan {
  uint32_t nqp = 0;
  uint32_t depth = 0;
  uint32_t batch = 16;
  uint64_t per_qp = 0;    // count mode: messages per QP
  double duration = 0;    // > 0: schedule messages for this many seconds instead
  double interval = 0;    // timeline samples (--interval); 0: none
  double gap_ns = 0;      // the schedule's mean gap (this loop's share of the rate)
  ArrivalProcess arrivals = ArrivalProcess::Constant;
  const char* posted = "RDMA_WRITE";
};

// Ops: int post(uint32_t qp, ibv_send_wr* wr); int poll(int n, ibv_wc* wc). `sq` carries
// over from the previous point, as the flat-out loop's does. On an interrupt the loop
// stops posting, drains for up to kInterruptDrain, then throws RunAborted("interrupted").
template <class Ops>
PacedStats paced_initiator_loop(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const PacedPlan& p,
                                IdleWatch& watch) {
  const uint32_t nqp = p.nqp;
  const uint64_t total = p.duration > 0 ? UINT64_MAX : p.per_qp * nqp;
  PaceSchedule sched(p.gap_ns, p.arrivals);
  // Per QP and send-queue slot, the due and post times of the message in it.
  std::vector<int64_t> due(size_t{nqp} * p.depth), posted_at(size_t{nqp} * p.depth);
  std::vector<uint64_t> first(nqp);
  uint64_t outstanding = 0;  // a reused QP's WRs still in flight count too
  for (uint32_t i = 0; i < nqp; ++i) {
    first[i] = sq[i].posted;
    outstanding += sq[i].outstanding();
  }
  std::vector<ibv_wc> wc(p.batch);
  PacedStats st;
  TimelineRecorder timeline(st.timeline, p.interval, p.duration);
  uint64_t done = 0;
  const double cpu0 = loop_cpu_seconds();
  const Clock::time_point start = Clock::now();
  timeline.start(start);
  const int64_t deadline = static_cast<int64_t>(p.duration * 1e9);
  bool stopping = false, aborting = false;
  int64_t abort_by = 0;
  uint64_t k = 0;
  uint32_t q = 0;  // the next message's QP: each in turn
  double next_due = sched.next();
  while (!(stopping || k == total) || outstanding > 0) {
    int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    while (!stopping && k < total && next_due <= static_cast<double>(now)) {
      SendQueue& s = sq[q];
      if (s.outstanding() >= p.depth) break;  // late: its QP is full until a completion
      ibv_send_wr* w = wrs.chain(q);
      w->wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted));
      w->send_flags |= IBV_SEND_SIGNALED;
      ibv_send_wr* after = w->next;  // the chain's rest (validate() allows no post list with --rate)
      w->next = nullptr;
      if (int rc = ops.post(q, w)) fail_post(rc, "ibv_post_send", q);
      w->next = after;
      const size_t slot = size_t{q} * p.depth + s.posted % p.depth;
      due[slot] = static_cast<int64_t>(next_due);
      posted_at[slot] = now;
      if (const double late = static_cast<double>(now) - next_due; late > kLateNs) {
        ++st.late;
        st.late_sum_ns += late;
        if (late > st.late_max_ns) st.late_max_ns = late;
      }
      ++s.posted;
      ++outstanding;
      ++k;
      next_due = sched.next();
      if (++q == nqp) q = 0;
    }
    const int got = ops.poll(static_cast<int>(p.batch), wc.data());
    if (got < 0) throw verbs::Error("ibv_poll_cq failed (" + std::to_string(got) + ")");
    if (got > 0) {
      now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
      for (int i = 0; i < got; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], p.posted);
        const uint32_t wq = WrId::qp(wc[i].wr_id), seq = WrId::seq(wc[i].wr_id);
        const uint64_t before = sq[wq].completed;
        if (!sq[wq].retire(seq)) continue;
        outstanding -= sq[wq].completed - before;
        done += sq[wq].completed - before;
        const size_t slot = size_t{wq} * p.depth + seq % p.depth;
        st.from_due.record(static_cast<uint64_t>(std::max<int64_t>(0, now - due[slot])));
        st.from_post.record(static_cast<uint64_t>(now - posted_at[slot]));
      }
    }
    if (got > 0 && timeline.due(start + std::chrono::nanoseconds(now)))
      timeline.record(start + std::chrono::nanoseconds(now), done);
    watch.tick(outstanding == 0 ? 1 : got);  // with nothing in flight, no completion is owed
    if (!aborting && watch.interrupted()) {
      aborting = stopping = true;
      watch.draining();
      abort_by = now + std::chrono::duration_cast<std::chrono::nanoseconds>(kInterruptDrain).count();
    } else if (aborting && now >= abort_by) {
      break;
    } else if (deadline > 0 && now >= deadline) {
      stopping = true;
    }
  }
  if (aborting) throw RunAborted("interrupted");
  const Clock::time_point end = Clock::now();
  timeline.finish(end, done);
  st.seconds = seconds_between(start, end);
  st.began = start;
  st.ended = end;
  st.cpu_seconds = loop_cpu_seconds() - cpu0;
  // The schedule's own rate: its k messages over the k gaps they span (the next one
  // would have been due at next_due).
  st.offered_per_second = k > 0 ? static_cast<double>(k) / (next_due * 1e-9) : 0;
  st.per_qp.resize(nqp);
  for (uint32_t i = 0; i < nqp; ++i) st.per_qp[i] = sq[i].completed - first[i];
  return st;
}

}  // namespace rdmasweep::detail
