// Bandwidth / message-rate loops. Nothing but post, poll and count.
#include <algorithm>

#include "core/loop_common.hpp"

namespace rdmasweep {

using namespace detail;

LoopStats run_bw_initiator(TestResources& r, uint64_t per_qp, double duration, const RunControl& ctl) {
  const uint32_t nqp = static_cast<uint32_t>(r.qps.size());
  const uint32_t depth = r.cfg.knobs.tx_depth;
  const uint32_t post_list = r.cfg.knobs.post_list;
  const uint32_t every = effective_signal_every(r.cfg);
  const uint32_t batch = r.cfg.knobs.poll_batch;
  const bool timed = duration > 0;
  SendWrs wrs(r, post_list, opcode_of(r.cfg.work.op), r.use_inline ? IBV_SEND_INLINE : 0);
  std::vector<SendQueue> sq(nqp);
  std::vector<uint64_t> target(nqp, timed ? UINT64_MAX : per_qp);
  std::vector<ibv_qp*> qp(nqp);
  for (uint32_t q = 0; q < nqp; ++q) {
    qp[q] = r.qps[q].get();
    sq[q].until_signal = every;
  }
  std::vector<ibv_wc> wc(batch);
  ibv_cq* cq = r.cq.get();
  IdleWatch watch(ctl);
  uint32_t unfinished = nqp;
  uint64_t loops = 0;

  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
  while (unfinished > 0) {
    for (uint32_t q = 0; q < nqp; ++q) {
      SendQueue& s = sq[q];
      while (s.posted < target[q] && s.outstanding() + post_list <= depth) {
        uint32_t k = static_cast<uint32_t>(std::min<uint64_t>(post_list, target[q] - s.posted));
        ibv_send_wr* w = wrs.chain(q);
        for (uint32_t i = 0; i < k; ++i) {
          uint64_t seq = s.posted + i;
          w[i].wr_id = WrId::encode(q, static_cast<uint32_t>(seq));
          w[i].send_flags = (w[i].send_flags & ~IBV_SEND_SIGNALED) |
                            (s.next_signaled(every, seq + 1 == target[q]) ? IBV_SEND_SIGNALED : 0);
        }
        w[k - 1].next = nullptr;  // a short final chain
        ibv_send_wr* bad = nullptr;
        if (int rc = ibv_post_send(qp[q], w, &bad)) fail_post(rc, "ibv_post_send", q);
        if (k < post_list) w[k - 1].next = &w[k];
        s.posted += k;
      }
    }
    int got = ibv_poll_cq(cq, static_cast<int>(batch), wc.data());
    if (got < 0) throw verbs::Error("ibv_poll_cq failed (" + std::to_string(got) + ")");
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i]);
      uint32_t q = WrId::qp(wc[i].wr_id);
      sq[q].retire(WrId::seq(wc[i].wr_id));
      if (sq[q].completed == target[q]) --unfinished;
    }
    watch.tick(got);
    // Duration mode: read the clock every 64 loops, not per message.
    if (timed && (++loops & 63) == 0 && Clock::now() >= deadline && target[0] == UINT64_MAX) {
      // Stop each QP at its next signaled WR so every posted WR is accounted for.
      unfinished = 0;
      for (uint32_t q = 0; q < nqp; ++q) {
        SendQueue& s = sq[q];
        target[q] = s.posted + (s.until_signal == every ? 0 : s.until_signal);
        if (s.completed != target[q]) ++unfinished;
      }
    }
  }
  LoopStats st;
  st.seconds = seconds_between(start, Clock::now());
  st.per_qp.resize(nqp);
  for (uint32_t q = 0; q < nqp; ++q) st.per_qp[q] = sq[q].completed;
  return st;
}

LoopStats run_bw_receiver(TestResources& r, std::vector<uint64_t>& expected, const RunControl& ctl) {
  const uint32_t nqp = static_cast<uint32_t>(r.qps.size());
  const uint32_t batch = r.cfg.knobs.poll_batch;
  std::vector<ibv_recv_wr> rwr(nqp);
  std::vector<ibv_sge> sge(nqp);
  std::vector<ibv_qp*> qp(nqp);
  for (uint32_t q = 0; q < nqp; ++q) {
    sge[q] = ibv_sge{reinterpret_cast<uint64_t>(r.rx_region(q)), static_cast<uint32_t>(r.cfg.work.size), r.mr.lkey()};
    rwr[q].sg_list = &sge[q];
    rwr[q].num_sge = 1;
    qp[q] = r.qps[q].get();
  }
  std::vector<uint64_t> received(nqp, 0);
  std::vector<ibv_wc> wc(batch);
  ibv_cq* cq = r.cq.get();
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

  Clock::time_point start{};
  bool started = false;
  while (unfinished > 0) {
    int got = ibv_poll_cq(cq, static_cast<int>(batch), wc.data());
    if (got < 0) throw verbs::Error("ibv_poll_cq failed (" + std::to_string(got) + ")");
    if (got > 0 && !started) {
      start = Clock::now();
      started = true;
    }
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i]);
      uint32_t q = WrId::qp(wc[i].wr_id);
      rwr[q].wr_id = wc[i].wr_id;
      ibv_recv_wr* bad = nullptr;
      if (int rc = ibv_post_recv(qp[q], &rwr[q], &bad)) fail_post(rc, "ibv_post_recv", q);
      if (++received[q] == expected[q]) --unfinished;
    }
    watch.tick(got);
  }
  LoopStats st;
  st.seconds = started ? seconds_between(start, Clock::now()) : 0;
  st.per_qp = std::move(received);
  return st;
}

}  // namespace rdmasweep
