// The latency loops, templates over the device calls they make (post, poll the CQ,
// repost a receive), so unit tests and micro-benchmarks run them against a fake
// device. loop_lat.cpp instantiates them with real verbs.
#pragma once

#include <algorithm>

#include "core/clock.hpp"
#include "core/loop_common.hpp"

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

// Ops: int post(uint32_t qp, ibv_send_wr* wr); int poll(int n, ibv_wc* wc);
// uint32_t recv(const ibv_wc& wc) reposts a completed receive and returns its QP.
// `sq` carries over from the previous point; `watch` is shared with the Ops' poller.
template <class Ops>
LatStats lat_initiator_loop(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const LatPlan& p, IdleWatch& watch) {
  const uint32_t nqp = p.nqp, depth = p.depth, every = p.every;
  const Op op = p.op;
  const uint64_t warmup = p.warmup;
  const bool timed = p.duration > 0;
  const uint64_t total = timed ? UINT64_MAX : warmup + p.iters;
  // SEND and WRITE report one-way latency (round trip / 2), READ the round trip.
  const uint64_t divisor = op == Op::Read ? 1 : 2;
  std::vector<uint64_t> t0(nqp);  // ticks::now() of each QP's ping in flight
  std::vector<uint64_t> count(nqp, 0);
  std::vector<char> in_flight(nqp, 0), pending(nqp, 0);
  LatStats st;
  st.qp_min_ns.assign(nqp, UINT64_MAX);
  st.qp_max_ns.assign(nqp, 0);
  st.qp_sum_ns.assign(nqp, 0);
  std::vector<ibv_wc> wc(p.batch);
  const Clock::duration window = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.duration));
  std::vector<Clock::time_point> deadline(nqp);  // duration mode: each QP's own, from the end of its warm-up
  bool measuring = false;                        // some QP's window has started
  Clock::time_point measure_start{};
  double cpu0 = 0;
  uint32_t unfinished = nqp;
  uint64_t measured = 0;  // round trips in the windows so far, all QPs
  uint64_t loops = 0;
  TimelineRecorder timeline(st.timeline, p.interval, p.duration);

  auto post_ping = [&](uint32_t q) {
    SendQueue& s = sq[q];
    if (s.outstanding() >= depth) {
      pending[q] = 1;  // retried after the next poll frees a slot
      return;
    }
    pending[q] = 0;
    if (op == Op::Write) *p.tx_tag[q] = tag_of(count[q]);
    ibv_send_wr* w = wrs.chain(q);
    w->wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted));
    w->send_flags = (w->send_flags & ~IBV_SEND_SIGNALED) | (s.next_signaled(every, false) ? IBV_SEND_SIGNALED : 0);
    if (count[q] == warmup) {  // this QP's first measured ping: its window starts
      Clock::time_point now = Clock::now();
      if (!measuring) {
        measuring = true;
        measure_start = now;
        timeline.start(now);
        cpu0 = loop_cpu_seconds();
      }
      deadline[q] = now + window;
    }
    t0[q] = ticks::now();
    if (int rc = ops.post(q, w)) fail_post(rc, "ibv_post_send", q);
    ++s.posted;
    in_flight[q] = 1;
  };
  auto complete = [&](uint32_t q) {
    uint64_t end = ticks::now();
    in_flight[q] = 0;
    if (count[q] >= warmup) {
      uint64_t ns = ticks::to_ns(end - t0[q]) / divisor;
      st.hist.record(ns);
      st.qp_min_ns[q] = std::min(st.qp_min_ns[q], ns);
      st.qp_max_ns[q] = std::max(st.qp_max_ns[q], ns);
      st.qp_sum_ns[q] += ns;
      ++measured;
    }
    ++count[q];
    // A QP stops at its own deadline, never before its warm-up is done.
    if (count[q] < total && !(timed && count[q] > warmup && Clock::now() >= deadline[q]))
      post_ping(q);
    else
      --unfinished;
  };

  for (uint32_t q = 0; q < nqp; ++q) post_ping(q);
  while (unfinished > 0) {
    int got = ops.poll(static_cast<int>(p.batch), wc.data());
    if (got < 0) throw verbs::Error("ibv_poll_cq failed (" + std::to_string(got) + ")");
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], op == Op::Send ? "SEND or RECV" : posted_name(op));
      uint32_t q = WrId::qp(wc[i].wr_id);
      if (wc[i].opcode & IBV_WC_RECV) {
        complete(ops.recv(wc[i]));
      } else {
        sq[q].retire(WrId::seq(wc[i].wr_id));
        if (op == Op::Read) complete(q);
      }
    }
    if (p.in_memory) {
      for (uint32_t q = 0; q < nqp; ++q)
        if (in_flight[q] && *p.rx_tag[q] == tag_of(count[q])) complete(q);
    }
    for (uint32_t q = 0; q < nqp; ++q)
      if (pending[q]) post_ping(q);
    watch.tick(got);
    // After the next pings are posted: the clock read is not on any ping's path.
    if (measuring && timeline.on() && (got > 0 || (++loops & 63) == 0)) {
      const Clock::time_point now = Clock::now();
      if (timeline.due(now)) timeline.record(now, measured);
    }
  }
  const Clock::time_point end = Clock::now();
  if (measuring) timeline.finish(end, measured);
  st.seconds = seconds_between(measure_start, end);
  st.cpu_seconds = loop_cpu_seconds() - cpu0;
  st.per_qp.resize(nqp);
  for (uint32_t q = 0; q < nqp; ++q) st.per_qp[q] = count[q] > warmup ? count[q] - warmup : 0;
  return st;
}

// The responder: answers every ping (a receive, or for WRITE the ping's tag seen in
// p.rx_tag) with a pong until *finished, which the Ops' poll (ctl.on_idle) sets. Its
// CPU window opens when some QP has answered p.warmup pings.
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

  auto pong = [&](uint32_t q) {
    SendQueue& s = sq[q];
    if (s.outstanding() >= depth) return false;
    ibv_send_wr* w = wrs.chain(q);
    w->wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted));
    w->send_flags = (w->send_flags & ~IBV_SEND_SIGNALED) | (s.next_signaled(every, false) ? IBV_SEND_SIGNALED : 0);
    if (int rc = ops.post(q, w)) fail_post(rc, "ibv_post_send", q);
    ++s.posted;
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
    if (got < 0) throw verbs::Error("ibv_poll_cq failed (" + std::to_string(got) + ")");
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
  }
  LoopStats st;
  st.seconds = seconds_between(start, Clock::now());
  st.cpu_seconds = measuring ? loop_cpu_seconds() - cpu0 : 0;
  st.per_qp = std::move(answered);
  return st;
}

}  // namespace rdmasweep::detail
