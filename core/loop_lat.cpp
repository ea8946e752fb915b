// Latency (ping-pong) loops: one round trip in flight per QP, all QPs at once.
// SEND: the pong is a SEND back. WRITE: each side watches the last byte of its
// region for the ping's tag (as perftest does). READ: the READ's own completion.
// The initiator's loop itself is a template in loop_lat.hpp.
#include <algorithm>

#include "core/loop_lat.hpp"

namespace rdmasweep {

using namespace detail;

namespace {
// The real device calls; inlined into the loop.
struct VerbsOps {
  std::vector<ibv_qp*> qp;
  Poller& poller;
  Receives& receives;
  int post(uint32_t q, ibv_send_wr* w) {
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp[q], w, &bad);
  }
  int poll(int, ibv_wc* wc) { return poller.poll(wc); }
  uint32_t recv(const ibv_wc& wc) { return receives.complete(wc); }
};
}  // namespace

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

LatStats run_lat_initiator(TestResources& r, uint64_t warmup, uint64_t iters, double duration, const RunControl& ctl) {
  LatPlan p = lat_plan(r.cfg, warmup, iters, duration);
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
  VerbsOps ops{{}, poller, receives};
  for (const verbs::QueuePair& qp : r.qps) ops.qp.push_back(qp.get());
  return lat_initiator_loop(ops, wrs, r.sq, p, watch);
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
