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
#include "core/engine/send_credits.hpp"
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
  bool await_peer = false;  // as BwPlan's
  const char* posted = "RDMA_WRITE";
};

// One paced loop's state: the schedule, each send-queue slot's due and post times, and
// where the loop stands. Everything is sized before the loop runs.
template <class Ops>
class PacedLoop {
 public:
  PacedLoop(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const PacedPlan& p, Arrivals* in = nullptr,
            CreditReads* cr = nullptr)
      : ops_(ops), wrs_(wrs), sq_(sq), p_(p), in_(in), cr_(cr), sched_(p.gap_ns, p.arrivals),
        total_(p.duration > 0 ? UINT64_MAX : p.per_qp * p.nqp), due_(size_t{p.nqp} * p.depth),
        posted_at_(size_t{p.nqp} * p.depth), first_(p.nqp), wc_(p.batch) {
    for (uint32_t i = 0; i < p.nqp; ++i) {
      first_[i] = sq[i].posted;
      outstanding_ += sq[i].outstanding();  // a reused QP's WRs still in flight count too
    }
  }

  PacedStats run(IdleWatch& watch) {
    if (in_ != nullptr && p_.await_peer) await_first_arrival(ops_, wc_.data(), static_cast<int>(p_.batch), *in_, watch);
    TimelineRecorder timeline(st_.timeline, p_.interval, p_.duration);
    // The window opens with the schedule's clock: whatever holds this end up from here
    // on (a busy host's pause) makes the messages due meanwhile late, as it should.
    watch.window_opened();
    const double cpu0 = loop_cpu_seconds();
    start_ = Clock::now();
    timeline.start(start_);
    const int64_t deadline = static_cast<int64_t>(p_.duration * 1e9);
    int64_t abort_by = 0;
    next_due_ = sched_.next();
    while (!(stopping_ || k_ == total_) || outstanding_ > 0 || awaiting() || (cr_ != nullptr && cr_->in_flight > 0)) {
      int64_t now = since_start();
      post_due(now);
      const int got = ops_.poll(static_cast<int>(p_.batch), wc_.data());
      if (got < 0) fail_poll(got);
      if (got > 0) {
        now = since_start();
        take(got, now);
        if (sends_end_ == 0 && timeline.due(start_ + std::chrono::nanoseconds(now)))  // none past the window
          timeline.record(start_ + std::chrono::nanoseconds(now), done_);
      }
      if (sends_end_ == 0 && (stopping_ || k_ == total_) && outstanding_ == 0) sends_end_ = since_start();
      // With nothing in flight, no completion is owed, unless the peer's SENDs are.
      watch.tick(outstanding_ == 0 && !awaiting() ? 1 : got);
      if (!aborting_ && watch.interrupted()) {
        aborting_ = stopping_ = true;
        watch.draining();
        abort_by = now + std::chrono::duration_cast<std::chrono::nanoseconds>(kInterruptDrain).count();
      } else if (aborting_ && now >= abort_by) {
        break;
      } else if (deadline > 0 && (now >= deadline || watch.wound_up())) {
        stopping_ = true;
      }
    }
    if (aborting_) throw RunAborted("interrupted");
    return finish(timeline, cpu0);
  }

 private:
  // --bidir SEND: the peer's messages still to arrive (never once interrupted).
  bool awaiting() const { return in_ != nullptr && in_->missing > 0 && !aborting_; }

  int64_t since_start() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
  }

  // Posts every message due by `now` whose QP has room (and, on credit, the receiver's
  // count allows), each alone and signaled.
  void post_due(int64_t now) {
    while (!stopping_ && k_ < total_ && next_due_ <= static_cast<double>(now)) {
      SendQueue& s = sq_[q_];
      uint32_t depth = p_.depth;
      if (cr_ != nullptr) {
        // SEND on iWARP: late until the receiver has reposted (its count READ when half the window is used).
        const uint64_t target = p_.duration > 0 ? UINT64_MAX : first_[q_] + p_.per_qp;
        if (s.posted >= credit_limit(ops_, *cr_, q_, s, target, depth, 1)) return;
        if (s.reading) depth -= cr_->reserve;
      }
      if (s.outstanding() >= depth) {  // late: its QP is full until a completion
        held_full_ = true;
        return;
      }
      ibv_send_wr* w = wrs_.chain(q_);
      w->wr_id = WrId::encode(q_, static_cast<uint32_t>(s.posted));
      w->send_flags |= IBV_SEND_SIGNALED;
      ibv_send_wr* after = w->next;  // the chain's rest (validate() allows no post list with --rate)
      w->next = nullptr;
      if (int rc = ops_.post(q_, w)) fail_post(rc, "ibv_post_send", q_);
      w->next = after;
      const size_t slot = size_t{q_} * p_.depth + s.posted % p_.depth;
      due_[slot] = static_cast<int64_t>(next_due_);
      posted_at_[slot] = now;
      if (const double late = static_cast<double>(now) - next_due_; late > kLateNs) {
        ++st_.late;
        st_.late_full += held_full_;
        st_.late_sum_ns += late;
        if (late > st_.late_max_ns) st_.late_max_ns = late;
      }
      held_full_ = false;
      ++s.posted;
      ++outstanding_;
      ++k_;
      next_due_ = sched_.next();
      if (++q_ == p_.nqp) q_ = 0;
    }
  }

  // One poll's completions, each message's two latencies recorded at `now`.
  void take(int got, int64_t now) {
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = wc_[i];
      if (wc.status != IBV_WC_SUCCESS) fail_completion(wc, in_ ? "SEND or RECV" : p_.posted);
      if (in_ != nullptr && (wc.opcode & IBV_WC_RECV)) {  // the peer's SEND: reposted and counted
        in_->take(ops_.recv(wc));
        continue;
      }
      if (cr_ != nullptr && WrId::is_credit(wc.wr_id)) {  // the receiver's count
        cr_->take(sq_[WrId::credit_qp(wc.wr_id)], WrId::credit_qp(wc.wr_id));
        continue;
      }
      const uint32_t wq = WrId::qp(wc.wr_id), seq = WrId::seq(wc.wr_id);
      const uint64_t before = sq_[wq].completed;
      if (!sq_[wq].retire(seq)) continue;
      outstanding_ -= sq_[wq].completed - before;
      done_ += sq_[wq].completed - before;
      const size_t slot = size_t{wq} * p_.depth + seq % p_.depth;
      st_.from_due.record(static_cast<uint64_t>(std::max<int64_t>(0, now - due_[slot])));
      st_.from_post.record(static_cast<uint64_t>(now - posted_at_[slot]));
    }
  }

  PacedStats finish(TimelineRecorder& timeline, double cpu0) {
    // The window ends with this side's last completion, not after the peer's last SEND.
    const Clock::time_point end = sends_end_ > 0 ? start_ + std::chrono::nanoseconds(sends_end_) : Clock::now();
    timeline.finish(end, done_);
    st_.seconds = seconds_between(start_, end);
    st_.began = start_;
    st_.ended = end;
    st_.cpu_seconds = loop_cpu_seconds() - cpu0;
    // The schedule's own rate: its k messages over the k gaps they span (the next one
    // would have been due at next_due_).
    st_.offered_per_second = k_ > 0 ? static_cast<double>(k_) / (next_due_ * 1e-9) : 0;
    st_.per_qp.resize(p_.nqp);
    for (uint32_t i = 0; i < p_.nqp; ++i) st_.per_qp[i] = sq_[i].completed - first_[i];
    return std::move(st_);
  }

  Ops& ops_;
  SendWrs& wrs_;
  std::vector<SendQueue>& sq_;
  const PacedPlan& p_;
  Arrivals* in_;
  CreditReads* cr_;  // SEND on iWARP: the receiver's credit; null: none
  PaceSchedule sched_;
  const uint64_t total_;
  std::vector<int64_t> due_, posted_at_;  // per QP and send-queue slot: the message in it
  std::vector<uint64_t> first_;
  std::vector<ibv_wc> wc_;
  PacedStats st_;
  Clock::time_point start_{};
  double next_due_ = 0;
  int64_t sends_end_ = 0;  // ns since start: this side's last completion (0: not yet)
  uint64_t k_ = 0, outstanding_ = 0, done_ = 0;
  uint32_t q_ = 0;  // the next message's QP: each in turn
  bool held_full_ = false;  // the next message found its QP full once due
  bool stopping_ = false, aborting_ = false;
};

// Ops: int post(uint32_t qp, ibv_send_wr* wr); int poll(int n, ibv_wc* wc); uint32_t
// recv(const ibv_wc&) (with `in` only). `sq` carries over from the previous point, as the
// flat-out loop's does. On an interrupt the loop stops posting, drains for up to
// kInterruptDrain, then throws RunAborted("interrupted"). `in` (--bidir SEND): the peer's
// SENDs complete here too, are reposted and counted, and the loop goes on until
// `in->expect` arrived on every QP; the window still ends with this side's last completion.
// With `p.await_peer`, a point's first loop opens its schedule once the peer's first
// message is in (await_first_arrival).
// `cr` (SEND on iWARP): a due message also waits for the receiver's credit (late until
// then); the loop ends once its credit READs are back too.
template <class Ops>
PacedStats paced_initiator_loop(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const PacedPlan& p,
                                IdleWatch& watch, Arrivals* in = nullptr, CreditReads* cr = nullptr) {
  PacedLoop<Ops> loop(ops, wrs, sq, p, in, cr);
  return loop.run(watch);
}

}  // namespace rdmasweep::detail
