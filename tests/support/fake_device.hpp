// A device without hardware for the hot loops' Ops seam (core/engine/loop_bw.hpp,
// core/engine/loop_lat.hpp): posts complete after a set delay (or at once), a peer can
// answer each ping, and it counts what the loop did. Shared by the unit tests and
// the micro-benchmarks, so both run the real loop code. Never throws at the loop:
// it refuses a post like a full send queue does (ENOMEM) and records what a real
// device would have done wrong (CQ overrun, a receive missing), for the test to check.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace rdmasweep::testing {

class FakeDevice {
 public:
  using Clock = std::chrono::steady_clock;

  // What the other side does with each posted WR (the latency loops' pong).
  enum class Peer : uint8_t {
    None,       // nothing: bandwidth, or READ (the READ's own completion is the pong)
    SendBack,   // a SEND back: a receive completion on the same QP
    WriteBack,  // an RDMA WRITE back: copies the ping's tag byte into the QP's rx tag
  };

  struct Options {
    uint32_t nqp = 1;
    uint32_t sq_depth = 128;  // WRs a QP holds until their completion is polled
    uint32_t rx_depth = 0;    // receives posted per QP before the loop starts
    uint64_t cq_depth = 0;    // CQ entries; 0: not checked
    std::chrono::nanoseconds delay{0};  // a post completes this long after the previous one; 0: at once
    Peer peer = Peer::None;
    // WriteBack: per QP, where the ping's tag is read at post and the pong's written.
    std::vector<const char*> tx_tag;
    std::vector<char*> rx_tag;
    bool scramble = false;    // each poll returns its QPs' completions in a shuffled QP order
    bool pong_first = false;  // the peer's answer arrives before the ping's own completion
    // Per QP: how long a post to it takes (the fake spins), as a slow ibv_post_send; empty: none.
    std::vector<std::chrono::nanoseconds> post_cost;
  };

  explicit FakeDevice(Options o);

  // The Ops seam. Inline, as the real verbs calls are inlined into the loops: the
  // micro-benchmarks then time the loop's bookkeeping, not a call boundary.
  int post(uint32_t qp, ibv_send_wr* wr);
  int poll(int n, ibv_wc* wc);
  uint32_t recv(const ibv_wc& wc);  // reposts the receive; returns its QP

  // A SEND from the peer: a receive completion on `qp`. Starts a latency responder's
  // QP (SendBack answers every pong after it), or feeds a bandwidth receiver.
  void ping(uint32_t qp, ibv_wr_opcode op = IBV_WR_SEND);
  // WRs posted after this many (all QPs together) never complete: a dead peer.
  void stall_after(uint64_t wrs) { stall_after_ = wrs; }
  // Called at the start of every poll: the test's hook (raise a flag, count polls).
  std::function<void()> on_poll;
  // Sets `flag` at the first poll after `wrs` WRs were posted (all QPs): a stop or
  // wind-up that comes with the traffic, not with a time.
  void raise_after(uint64_t wrs, std::atomic<bool>& flag) {
    on_poll = [this, wrs, &flag] {
      if (posts >= wrs) flag = true;
    };
  }

  // What happened.
  uint64_t posted(uint32_t qp) const { return qp_[qp].posted; }
  uint64_t signaled(uint32_t qp) const { return qp_[qp].signaled; }
  uint32_t receives_posted(uint32_t qp) const { return qp_[qp].rx_posted; }  // room for the peer's SENDs
  uint64_t posts = 0;                  // WRs posted, all QPs
  uint64_t post_calls = 0;
  uint32_t longest_chain = 0;
  uint64_t cq_high_water = 0;          // most CQ entries ever owed to the loop at once
  uint64_t cq_overruns = 0;            // times that exceeded cq_depth
  uint64_t refused_posts = 0;          // posts over sq_depth (returned ENOMEM)
  uint64_t missing_receives = 0;       // SENDs back that found no receive posted
  uint64_t receives_reposted = 0;
  Clock::time_point first_post{}, last_completion{};  // with a delay only

 private:
  // 40 bytes: the ring is walked once per completion, on the micro-benchmarks' path too.
  struct Event {
    Clock::time_point at;
    uint64_t wr_id;
    uint64_t covers;  // a send completion: the QP's WRs it frees once polled
    char* dst;        // WriteBack: memory written instead of a completion
    uint32_t qp;
    uint8_t opcode;   // ibv_wc_opcode
    char tag;
  };
  struct Qp {
    uint64_t posted = 0, signaled = 0;
    uint64_t freed = 0;       // WRs whose completion the loop polled
    uint32_t rx_posted = 0;   // receives waiting
    uint32_t rx_seq = 0;      // next receive's sequence, for its wr_id
  };
  static constexpr uint32_t kQpnBase = 0x100;  // fake qp_num of QP 0
  static ibv_wc_opcode completion_opcode(ibv_wr_opcode op);
  void push(const Event& e) {
    if (tail_ - head_ == ring_.size()) grow();
    ring_[tail_++ & (ring_.size() - 1)] = e;
  }
  void owe_cqe() {
    cq_high_water = std::max(cq_high_water, ++cq_owed_);
    if (o_.cq_depth != 0 && cq_owed_ > o_.cq_depth) ++cq_overruns;
  }
  void grow();                          // doubles the ring, keeping the order
  static void spin(std::chrono::nanoseconds d);  // Options::post_cost
  void scramble(ibv_wc* wc, int got);  // Options::scramble
  void answer(uint32_t qp, const ibv_send_wr& w, Clock::time_point at);  // the peer's pong
  Clock::time_point arrival();         // of the completions of a post made now

  Options o_;
  std::vector<Qp> qp_;
  std::vector<Event> ring_;  // FIFO of events, power-of-two capacity
  size_t head_ = 0, tail_ = 0;
  uint64_t cq_owed_ = 0;
  uint64_t stall_after_ = UINT64_MAX;
  Clock::time_point last_at_{};
  uint64_t polls_ = 0;
};

inline ibv_wc_opcode FakeDevice::completion_opcode(ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    default: return IBV_WC_SEND;
  }
}

inline int FakeDevice::post(uint32_t qp, ibv_send_wr* wr) {
  Qp& s = qp_[qp];
  uint32_t n = 0;
  for (const ibv_send_wr* w = wr; w; w = w->next) ++n;
  if (s.posted - s.freed + n > o_.sq_depth) {
    ++refused_posts;
    return ENOMEM;  // what ibv_post_send says when the send queue is full
  }
  ++post_calls;
  if (qp < o_.post_cost.size()) spin(o_.post_cost[qp]);
  longest_chain = std::max(longest_chain, n);
  const Clock::time_point at = o_.delay.count() > 0 ? arrival() : Clock::time_point{};
  const bool pong = o_.peer != Peer::None;
  for (const ibv_send_wr* w = wr; w; w = w->next) {
    const bool sig = (w->send_flags & IBV_SEND_SIGNALED) != 0;
    ++s.posted;
    s.signaled += sig;
    if (posts++ >= stall_after_) continue;  // never completes
    if (pong && o_.pong_first) answer(qp, *w, at);
    if (sig) {
      push(Event{at, w->wr_id, s.posted, nullptr, qp, static_cast<uint8_t>(completion_opcode(w->opcode)), 0});
      owe_cqe();
    }
    if (pong && !o_.pong_first) answer(qp, *w, at);
  }
  return 0;
}

inline int FakeDevice::poll(int n, ibv_wc* wc) {
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
    ibv_wc& c = wc[got++];
    c = ibv_wc{};
    c.wr_id = e.wr_id;
    c.status = IBV_WC_SUCCESS;
    c.opcode = static_cast<ibv_wc_opcode>(e.opcode);
    c.qp_num = kQpnBase + e.qp;
    --cq_owed_;
    if (e.covers) qp_[e.qp].freed = e.covers;
  }
  if (timed && got > 0) last_completion = now;
  if (o_.scramble && got > 1) scramble(wc, got);
  return got;
}

}  // namespace rdmasweep::testing
