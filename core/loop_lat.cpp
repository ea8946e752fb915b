// Latency (ping-pong) loops: one round trip in flight per QP, all QPs at once.
// SEND: the pong is a SEND back. WRITE: each side watches the last byte of its
// region for the ping's tag (as perftest does). READ: the READ's own completion.
#include <algorithm>

#include "core/clock.hpp"
#include "core/loop_common.hpp"

namespace rdmasweep {

using namespace detail;

namespace {
// Tag carried in a WRITE ping's last byte: never 0 (fresh memory), never the previous one.
inline char tag_of(uint64_t iteration) { return static_cast<char>(iteration % 255 + 1); }

}  // namespace

LatStats run_lat_initiator(TestResources& r, uint64_t warmup, uint64_t iters, double duration, const RunControl& ctl) {
  const uint32_t nqp = static_cast<uint32_t>(r.qps.size());
  const Op op = r.cfg.work.op;
  const uint32_t depth = r.cfg.knobs.tx_depth;
  const uint32_t every = effective_signal_every(r.cfg);
  const uint32_t batch = r.cfg.knobs.poll_batch;
  const size_t last = r.cfg.work.size - 1;
  const bool timed = duration > 0;
  const uint64_t total = timed ? UINT64_MAX : warmup + iters;
  // SEND and WRITE report one-way latency (round trip / 2), READ the round trip.
  const uint64_t divisor = op == Op::Read ? 1 : 2;
  // WRITE pongs are seen in memory, or as receive completions with --events.
  const bool in_memory = op == Op::Write && !write_with_imm(r.cfg);
  SendWrs wrs = make_send_wrs(r, 1, write_with_imm(r.cfg) ? IBV_WR_RDMA_WRITE_WITH_IMM : opcode_of(op),
                              r.use_inline ? IBV_SEND_INLINE : 0);
  std::vector<SendQueue>& sq = r.sq;
  std::vector<uint64_t> t0(nqp);  // ticks::now() of each QP's ping in flight
  std::vector<uint64_t> count(nqp, 0);
  std::vector<char> in_flight(nqp, 0), pending(nqp, 0);
  std::vector<ibv_qp*> qp(nqp);
  for (uint32_t q = 0; q < nqp; ++q) {
    qp[q] = r.qps[q].get();
  }
  LatStats st;
  st.qp_min_ns.assign(nqp, UINT64_MAX);
  st.qp_max_ns.assign(nqp, 0);
  st.qp_sum_ns.assign(nqp, 0);
  std::vector<ibv_wc> wc(batch);
  Receives receives(r);
  IdleWatch watch(ctl);
  Poller poller(r, watch);
  const Clock::duration window = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
  std::vector<Clock::time_point> deadline(nqp);  // duration mode: each QP's own, from the end of its warm-up
  bool measuring = false;                        // some QP's window has started
  Clock::time_point measure_start{};
  double cpu0 = 0;
  uint32_t unfinished = nqp;

  auto post_ping = [&](uint32_t q) {
    SendQueue& s = sq[q];
    if (s.outstanding() >= depth) {
      pending[q] = 1;  // retried after the next poll frees a slot
      return;
    }
    pending[q] = 0;
    if (op == Op::Write) r.tx_region(q)[last] = tag_of(count[q]);
    ibv_send_wr* w = wrs.chain(q);
    w->wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted));
    w->send_flags = (w->send_flags & ~IBV_SEND_SIGNALED) | (s.next_signaled(every, false) ? IBV_SEND_SIGNALED : 0);
    if (count[q] == warmup) {  // this QP's first measured ping: its window starts
      Clock::time_point now = Clock::now();
      if (!measuring) {
        measuring = true;
        measure_start = now;
        cpu0 = loop_cpu_seconds();
      }
      deadline[q] = now + window;
    }
    t0[q] = ticks::now();
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(qp[q], w, &bad)) fail_post(rc, "ibv_post_send", q);
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
    int got = poller.poll(wc.data());
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], op == Op::Send ? "SEND or RECV" : posted_name(op));
      uint32_t q = WrId::qp(wc[i].wr_id);
      if (wc[i].opcode & IBV_WC_RECV) {
        complete(receives.complete(wc[i]));
      } else {
        sq[q].retire(WrId::seq(wc[i].wr_id));
        if (op == Op::Read) complete(q);
      }
    }
    if (in_memory) {
      for (uint32_t q = 0; q < nqp; ++q) {
        const volatile char* flag = r.rx_region(q) + last;
        if (in_flight[q] && *flag == tag_of(count[q])) complete(q);
      }
    }
    for (uint32_t q = 0; q < nqp; ++q)
      if (pending[q]) post_ping(q);
    watch.tick(got);
  }
  st.seconds = seconds_between(measure_start, Clock::now());
  st.cpu_seconds = loop_cpu_seconds() - cpu0;
  st.per_qp.resize(nqp);
  for (uint32_t q = 0; q < nqp; ++q) st.per_qp[q] = count[q] > warmup ? count[q] - warmup : 0;
  return st;
}

LoopStats run_lat_responder(TestResources& r, const bool* finished, const RunControl& ctl, uint64_t warmup) {
  const uint32_t nqp = static_cast<uint32_t>(r.qps.size());
  const Op op = r.cfg.work.op;
  const uint32_t depth = r.cfg.knobs.tx_depth;
  const uint32_t every = effective_signal_every(r.cfg);
  const uint32_t batch = r.cfg.knobs.poll_batch;
  const size_t last = r.cfg.work.size - 1;
  const bool in_memory = op == Op::Write && !write_with_imm(r.cfg);
  SendWrs wrs = make_send_wrs(r, 1, write_with_imm(r.cfg) ? IBV_WR_RDMA_WRITE_WITH_IMM : opcode_of(op),
                              r.use_inline ? IBV_SEND_INLINE : 0, /*echo=*/op == Op::Write);
  std::vector<SendQueue>& sq = r.sq;
  std::vector<uint64_t> answered(nqp, 0), owed(nqp, 0);
  std::vector<ibv_qp*> qp(nqp);
  for (uint32_t q = 0; q < nqp; ++q) {
    qp[q] = r.qps[q].get();
  }
  std::vector<ibv_wc> wc(batch);
  Receives receives(r);
  IdleWatch watch(ctl);
  Poller poller(r, watch);
  bool measuring = false;
  double cpu0 = 0;

  auto pong = [&](uint32_t q) {
    SendQueue& s = sq[q];
    if (s.outstanding() >= depth) return false;
    ibv_send_wr* w = wrs.chain(q);
    w->wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted));
    w->send_flags = (w->send_flags & ~IBV_SEND_SIGNALED) | (s.next_signaled(every, false) ? IBV_SEND_SIGNALED : 0);
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(qp[q], w, &bad)) fail_post(rc, "ibv_post_send", q);
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
    int got = poller.poll(wc.data());
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], op == Op::Send ? "SEND or RECV" : posted_name(op));
      if (wc[i].opcode & IBV_WC_RECV) {
        ++owed[receives.complete(wc[i])];
      } else {
        uint32_t q = WrId::qp(wc[i].wr_id);
        sq[q].retire(WrId::seq(wc[i].wr_id));
      }
    }
    if (in_memory) {
      for (uint32_t q = 0; q < nqp; ++q) {
        const volatile char* flag = r.rx_region(q) + last;
        if (*flag == tag_of(answered[q] + owed[q])) ++owed[q];
      }
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

}  // namespace rdmasweep
