#include "tests/support/fake_device.hpp"

#include <algorithm>
#include <cerrno>

#include "core/wr_id.hpp"

namespace rdmasweep::testing {

namespace {
ibv_wc_opcode completion_opcode(ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    default: return IBV_WC_SEND;
  }
}
constexpr uint32_t kQpnBase = 0x100;  // fake qp_num of QP 0
}  // namespace

FakeDevice::FakeDevice(Options o)
    : posted(o.nqp, 0),
      signaled(o.nqp, 0),
      o_(std::move(o)),
      ring_(1024),
      freed_(o_.nqp, 0),
      rx_posted_(o_.nqp, o_.rx_depth),
      rx_seq_(o_.nqp, o_.rx_depth) {}

void FakeDevice::push(const Event& e) {
  if (tail_ - head_ == ring_.size()) {  // full: double, keeping the order
    std::vector<Event> bigger(ring_.size() * 2);
    for (size_t i = head_; i != tail_; ++i) bigger[i - head_] = ring_[i & (ring_.size() - 1)];
    tail_ -= head_;
    head_ = 0;
    ring_.swap(bigger);
  }
  ring_[tail_++ & (ring_.size() - 1)] = e;
}

int FakeDevice::post(uint32_t qp, ibv_send_wr* wr) {
  uint32_t n = 0;
  for (const ibv_send_wr* w = wr; w; w = w->next) ++n;
  if (posted[qp] - freed_[qp] + n > o_.sq_depth) {
    ++refused_posts;
    return ENOMEM;  // what ibv_post_send says when the send queue is full
  }
  ++post_calls;
  longest_chain = std::max(longest_chain, n);
  Clock::time_point at{};
  if (o_.delay.count() > 0) {
    // In order on one wire: no earlier than the previous completion.
    Clock::time_point now = Clock::now();
    if (posts == 0) first_post = now;
    at = std::max(last_at_, now) + std::chrono::duration_cast<Clock::duration>(o_.delay);
    last_at_ = at;
  }
  for (const ibv_send_wr* w = wr; w; w = w->next) {
    ++posted[qp];
    bool completes = posts++ < stall_after_;
    if (w->send_flags & IBV_SEND_SIGNALED) ++signaled[qp];
    if (!completes) continue;
    if (o_.pong_first) answer(qp, *w, at);
    if (w->send_flags & IBV_SEND_SIGNALED) {
      Event e{at, ibv_wc{}, posted[qp], nullptr, 0};
      e.wc.wr_id = w->wr_id;
      e.wc.qp_num = kQpnBase + qp;
      e.wc.status = IBV_WC_SUCCESS;
      e.wc.opcode = completion_opcode(w->opcode);
      ++cq_owed_;
      push(e);
    }
    if (!o_.pong_first) answer(qp, *w, at);
  }
  cq_high_water = std::max(cq_high_water, cq_owed_);
  if (o_.cq_depth != 0 && cq_owed_ > o_.cq_depth) ++cq_overruns;
  return 0;
}

void FakeDevice::answer(uint32_t qp, const ibv_send_wr& w, Clock::time_point at) {
  if (o_.peer == Peer::SendBack) {
    if (rx_posted_[qp] == 0) {
      ++missing_receives;  // a real peer's SEND would meet RNR here
      return;
    }
    --rx_posted_[qp];
    Event e{at, ibv_wc{}, 0, nullptr, 0};
    e.wc.wr_id = WrId::encode(qp, rx_seq_[qp]++);
    e.wc.qp_num = kQpnBase + qp;
    e.wc.status = IBV_WC_SUCCESS;
    e.wc.opcode = w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
    ++cq_owed_;
    push(e);
  } else if (o_.peer == Peer::WriteBack) {
    push(Event{at, ibv_wc{}, 0, o_.rx_tag[qp], *o_.tx_tag[qp]});
  }
}

int FakeDevice::poll(int n, ibv_wc* wc) {
  if (on_poll) on_poll();
  ++polls_;
  const bool timed = o_.delay.count() > 0;
  const Clock::time_point now = timed ? Clock::now() : Clock::time_point{};
  int got = 0;
  while (got < n && head_ != tail_) {
    const Event& e = ring_[head_ & (ring_.size() - 1)];
    if (timed && e.at > now) break;
    ++head_;
    if (e.dst) {
      *e.dst = e.tag;
      continue;
    }
    wc[got++] = e.wc;
    --cq_owed_;
    if (e.covers) freed_[e.wc.qp_num - kQpnBase] = e.covers;
  }
  if (timed && got > 0) last_completion = now;
  if (o_.scramble && got > 1) {
    // Another QP order each poll; each QP's own completions stay in order, as on a real CQ.
    auto key = [this](const ibv_wc& w) { return ((w.qp_num - kQpnBase) * 2654435761u) ^ static_cast<uint32_t>(polls_); };
    std::stable_sort(wc, wc + got, [&](const ibv_wc& a, const ibv_wc& b) { return key(a) < key(b); });
  }
  return got;
}

uint32_t FakeDevice::recv(const ibv_wc& wc) {
  uint32_t qp = wc.qp_num - kQpnBase;
  ++rx_posted_[qp];
  ++receives_reposted;
  return qp;
}

}  // namespace rdmasweep::testing
