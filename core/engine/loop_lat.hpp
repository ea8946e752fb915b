// The latency loops, templates over the device calls they make (post, poll the CQ,
// repost a receive), so unit tests and micro-benchmarks run them against a fake
// device. loop_lat.cpp instantiates them with real verbs.
#pragma once

#include <algorithm>

#include "core/engine/loop_common.hpp"
#include "core/measure/clock.hpp"

namespace rdmasweep::detail {

// Tag carried in a WRITE ping's last byte: never 0 (fresh memory), never the previous one.
inline char tag_of(uint64_t iteration) { return static_cast<char>(iteration % 255 + 1); }

struct LatPlan {
  uint32_t nqp = 1;
  Op op = Op::Send;
  uint32_t depth = 128;  // send-queue depth
  uint32_t every = 32;   // signal interval
  uint32_t batch = 16;   // WCs per poll
  uint64_t warmup = 0, iters = 1000;
  double duration = 0;
  double interval = 0;  // timeline samples (--interval); 0: none
  // WRITE pongs seen in memory: per QP, the last byte of the ping sent (tagged
  // before each post) and of the region the pong lands in. Empty otherwise.
  bool in_memory = false;
  std::vector<char*> tx_tag;
  std::vector<const volatile char*> rx_tag;
};

// A point's plan: its knobs as the loop reads them (the tags are left to the caller).
LatPlan lat_plan(const TestConfig& c, uint64_t warmup, uint64_t iters, double duration);

// The latency initiator's state over one point: one ping in flight per QP, each
// QP's own measured window. lat_initiator_loop() below runs it.
template <class Ops>
class LatInitiator {
 public:
  LatInitiator(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const LatPlan& p)
      : ops_(ops), wrs_(wrs), sq_(sq), p_(p), nqp_(p.nqp),
        total_(p.duration > 0 ? UINT64_MAX : p.warmup + p.iters),
        divisor_(fetches(p.op) ? 1 : 2),  // SEND and WRITE: one-way (round trip / 2); READ, atomics: the round trip
        window_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.duration))),
        t0_(nqp_), count_(nqp_, 0), in_flight_(nqp_, 0), pending_(nqp_, 0), landed_(nqp_), deadline_(nqp_), unfinished_(nqp_),
        timeline_(st_.timeline, p.interval, p.duration) {
    st_.qp_min_ns.assign(nqp_, UINT64_MAX);
    st_.qp_max_ns.assign(nqp_, 0);
    st_.qp_sum_ns.assign(nqp_, 0);
  }

  LatStats run(IdleWatch& watch) {
    watch_ = &watch;
    std::vector<ibv_wc> wc(p_.batch);
    uint64_t loops = 0;
    for (uint32_t q = 0; q < nqp_; ++q) post_ping(q);
    while (unfinished_ > 0) {
      int got = ops_.poll(static_cast<int>(p_.batch), wc.data());
      if (got < 0) fail_poll(got);
      const uint32_t landed = p_.in_memory ? find_landed() : 0;
      if (got > 0 || landed > 0) {
        // One end time for everything this poll found, read before any post: a
        // pong's latency never includes the pings re-posted for those before it.
        const uint64_t end = ticks::now();
        for (int i = 0; i < got; ++i) take(wc[i], end);
        for (uint32_t i = 0; i < landed; ++i) complete(landed_[i], end);
      }
      for (uint32_t q = 0; q < nqp_; ++q)
        if (pending_[q]) post_ping(q);
      watch.tick(got);
      // After the next pings are posted: the clock read is not on any ping's path.
      if (measuring_ && timeline_.on() && (got > 0 || (++loops & 63) == 0)) {
        const Clock::time_point now = Clock::now();
        if (timeline_.due(now)) timeline_.record(now, measured_);
      }
    }
    const Clock::time_point end = Clock::now();
    if (measuring_) timeline_.finish(end, measured_);
    st_.seconds = seconds_between(measure_start_, end);
    st_.began = measure_start_;
    st_.ended = end;
    st_.cpu_seconds = loop_cpu_seconds() - cpu0_;
    st_.per_qp.resize(nqp_);
    for (uint32_t q = 0; q < nqp_; ++q) st_.per_qp[q] = count_[q] > p_.warmup ? count_[q] - p_.warmup : 0;
    return std::move(st_);
  }

 private:
  // A completion: a pong's receive, or the ping's own send (a READ's response).
  void take(const ibv_wc& wc, uint64_t end) {
    if (wc.status != IBV_WC_SUCCESS) fail_completion(wc, p_.op == Op::Send ? "SEND or RECV" : posted_name(p_.op));
    uint32_t q = WrId::qp(wc.wr_id);
    if (wc.opcode & IBV_WC_RECV) {
      complete(ops_.recv(wc), end);
    } else {
      sq_[q].retire(WrId::seq(wc.wr_id));
      if (fetches(p_.op)) complete(q, end);
    }
  }

  // WRITE pongs seen in memory: the QPs whose pong landed, into landed_.
  uint32_t find_landed() {
    uint32_t n = 0;
    for (uint32_t q = 0; q < nqp_; ++q)
      if (in_flight_[q] && *p_.rx_tag[q] == tag_of(count_[q])) landed_[n++] = q;
    return n;
  }

  void post_ping(uint32_t q) {
    SendQueue& s = sq_[q];
    if (s.outstanding() >= p_.depth) {
      pending_[q] = 1;  // retried after the next poll frees a slot
      return;
    }
    pending_[q] = 0;
    if (p_.op == Op::Write) *p_.tx_tag[q] = tag_of(count_[q]);
    ibv_send_wr* w = wrs_.chain(q);
    w->wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted));
    w->send_flags = (w->send_flags & ~IBV_SEND_SIGNALED) | (s.next_signaled(p_.every, false) ? IBV_SEND_SIGNALED : 0);
    if (count_[q] == p_.warmup) {  // this QP's first measured ping: its window starts
      if (!measuring_) watch_->window_opened();  // before the clock: its cost is in no window
      Clock::time_point now = Clock::now();
      if (!measuring_) {
        measuring_ = true;
        measure_start_ = now;
        timeline_.start(now);
        cpu0_ = loop_cpu_seconds();
      }
      deadline_[q] = now + window_;
    }
    t0_[q] = ticks::now();
    if (int rc = ops_.post(q, w)) fail_post(rc, "ibv_post_send", q);
    ++s.posted;
    in_flight_[q] = 1;
  }

  // QP q's pong arrived by `end`; its next ping is due (posted after this poll's lot).
  void complete(uint32_t q, uint64_t end) {
    in_flight_[q] = 0;
    if (count_[q] >= p_.warmup) {
      uint64_t ns = ticks::to_ns(end - t0_[q]) / divisor_;
      st_.hist.record(ns);
      st_.qp_min_ns[q] = std::min(st_.qp_min_ns[q], ns);
      st_.qp_max_ns[q] = std::max(st_.qp_max_ns[q], ns);
      st_.qp_sum_ns[q] += ns;
      ++measured_;
    }
    ++count_[q];
    // A QP stops at its own deadline, never before its warm-up is done.
    const bool timed = p_.duration > 0;
    if (count_[q] < total_ && !(timed && count_[q] > p_.warmup && (Clock::now() >= deadline_[q] || watch_->wound_up())))
      pending_[q] = 1;
    else
      --unfinished_;
  }

  Ops& ops_;
  SendWrs& wrs_;
  std::vector<SendQueue>& sq_;
  const LatPlan& p_;
  const uint32_t nqp_;
  const uint64_t total_, divisor_;
  const IdleWatch* watch_ = nullptr;  // run()'s: a duration-mode QP also stops when it winds up
  const Clock::duration window_;
  LatStats st_;
  std::vector<uint64_t> t0_;  // ticks::now() of each QP's ping in flight
  std::vector<uint64_t> count_;
  std::vector<char> in_flight_, pending_;  // pending_: a ping is due (its pong came, or the queue was full)
  std::vector<uint32_t> landed_;           // find_landed()'s, room for every QP
  std::vector<Clock::time_point> deadline_;  // duration mode: each QP's own, from the end of its warm-up
  uint32_t unfinished_;
  bool measuring_ = false;  // some QP's window has started
  Clock::time_point measure_start_{};
  double cpu0_ = 0;
  uint64_t measured_ = 0;  // round trips in the windows so far, all QPs
  TimelineRecorder timeline_;
};

// Ops: int post(uint32_t qp, ibv_send_wr* wr); int poll(int n, ibv_wc* wc);
// uint32_t recv(const ibv_wc& wc) reposts a completed receive and returns its QP.
// `sq` carries over from the previous point; `watch` is shared with the Ops' poller.
template <class Ops>
LatStats lat_initiator_loop(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const LatPlan& p, IdleWatch& watch) {
  return LatInitiator<Ops>(ops, wrs, sq, p).run(watch);
}

// The responder: answers every ping (a receive, or for WRITE the ping's tag seen in
// p.rx_tag) with a pong until *finished, which the Ops' poll (ctl.on_idle) sets. Its
// CPU window opens when some QP has answered p.warmup pings and ends at its last pong.
template <class Ops>
LoopStats lat_responder_loop(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const LatPlan& p, const bool* finished,
                             IdleWatch& watch) {
  const uint32_t nqp = p.nqp, depth = p.depth, every = p.every;
  const Op op = p.op;
  const uint64_t warmup = p.warmup;
  std::vector<uint64_t> answered(nqp, 0), owed(nqp, 0);
  std::vector<ibv_wc> wc(p.batch);
  bool measuring = false;
  double cpu0 = 0;
  uint64_t pongs = 0;
  // The CPU window ends at the last pong: DONE, which ends the loop, only says that no
  // ping is coming, and it comes as late as the control channel is slow.
  LastMove last;

  auto pong = [&](uint32_t q) {
    SendQueue& s = sq[q];
    if (s.outstanding() >= depth) return false;
    ibv_send_wr* w = wrs.chain(q);
    w->wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted));
    w->send_flags = (w->send_flags & ~IBV_SEND_SIGNALED) | (s.next_signaled(every, false) ? IBV_SEND_SIGNALED : 0);
    if (int rc = ops.post(q, w)) fail_post(rc, "ibv_post_send", q);
    ++s.posted;
    ++pongs;
    if (++answered[q] == warmup && !measuring) {
      measuring = true;
      cpu0 = loop_cpu_seconds();
    }
    return true;
  };

  Clock::time_point start = Clock::now();
  if (warmup == 0) {
    measuring = true;
    cpu0 = loop_cpu_seconds();
  }
  while (!*finished) {
    int got = ops.poll(static_cast<int>(p.batch), wc.data());
    if (got < 0) fail_poll(got);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], op == Op::Send ? "SEND or RECV" : posted_name(op));
      if (wc[i].opcode & IBV_WC_RECV) {
        ++owed[ops.recv(wc[i])];
      } else {
        uint32_t q = WrId::qp(wc[i].wr_id);
        sq[q].retire(WrId::seq(wc[i].wr_id));
      }
    }
    if (p.in_memory) {
      for (uint32_t q = 0; q < nqp; ++q)
        if (*p.rx_tag[q] == tag_of(answered[q] + owed[q])) ++owed[q];
    }
    for (uint32_t q = 0; q < nqp; ++q)
      while (owed[q] > 0 && pong(q)) --owed[q];
    watch.tick(got);
    if (watch.just_checked()) last.look(pongs);
  }
  // No pong since the last look: the window ended there (a look before the window
  // opened says nothing of it).
  const bool quiet = last.count == pongs && last.cpu >= cpu0;
  LoopStats st;
  st.seconds = seconds_between(start, Clock::now());
  st.cpu_seconds = measuring ? (quiet ? last.cpu : loop_cpu_seconds()) - cpu0 : 0;
  st.per_qp = std::move(answered);
  return st;
}

}  // namespace rdmasweep::detail
