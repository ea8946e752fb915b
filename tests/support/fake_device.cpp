#include "tests/support/fake_device.hpp"

#include <algorithm>
#include <cerrno>

#include "core/engine/wr_id.hpp"

namespace rdmasweep::testing {

using Clock = FakeDevice::Clock;

FakeDevice::FakeDevice(Options o) : o_(std::move(o)), qp_(o_.nqp), ring_(1024) {
  for (Qp& q : qp_) q.rx_posted = q.rx_seq = o_.rx_depth;  // the receives posted at connect
}

Clock::time_point FakeDevice::arrival() {
  // In order on one wire: no earlier than the previous completion.
  Clock::time_point now = Clock::now();
  if (posts == 0) first_post = now;
  last_at_ = std::max(last_at_, now) + std::chrono::duration_cast<Clock::duration>(o_.delay);
  return last_at_;
}

void FakeDevice::spin(std::chrono::nanoseconds d) {
  const Clock::time_point until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

void FakeDevice::grow() {
  std::vector<Event> bigger(ring_.size() * 2);
  for (size_t i = head_; i != tail_; ++i) bigger[i - head_] = ring_[i & (ring_.size() - 1)];
  tail_ -= head_;
  head_ = 0;
  ring_.swap(bigger);
}

void FakeDevice::scramble(ibv_wc* wc, int got) {
  // Another QP order each poll; each QP's own completions stay in order, as on a real CQ.
  auto key = [this](const ibv_wc& w) { return ((w.qp_num - kQpnBase) * 2654435761u) ^ static_cast<uint32_t>(polls_); };
  std::stable_sort(wc, wc + got, [&](const ibv_wc& a, const ibv_wc& b) { return key(a) < key(b); });
}

void FakeDevice::answer(uint32_t qp, const ibv_send_wr& w, Clock::time_point at) {
  if (o_.peer == Peer::SendBack) {
    Qp& s = qp_[qp];
    if (s.rx_posted == 0) {
      ++missing_receives;  // a real peer's SEND would meet RNR here
      return;
    }
    --s.rx_posted;
    ibv_wc_opcode op = w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
    push(Event{at, WrId::encode(qp, s.rx_seq++), 0, nullptr, qp, static_cast<uint8_t>(op), 0});
    owe_cqe();
  } else if (o_.peer == Peer::WriteBack) {
    push(Event{at, 0, 0, o_.rx_tag[qp], qp, 0, *o_.tx_tag[qp]});
  }
}

void FakeDevice::ping(uint32_t qp, ibv_wr_opcode op) {
  ibv_send_wr w{};
  w.opcode = op;
  answer(qp, w, o_.delay.count() > 0 ? Clock::now() : Clock::time_point{});
}

uint32_t FakeDevice::recv(const ibv_wc& wc) {
  uint32_t qp = wc.qp_num - kQpnBase;
  ++qp_[qp].rx_posted;
  ++receives_reposted;
  return qp;
}

}  // namespace rdmasweep::testing
