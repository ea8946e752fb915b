// A device without hardware for the hot loops' Ops seam (core/loop_bw.hpp,
// core/loop_lat.hpp): posts complete after a set delay (or at once), a peer can
// answer each ping, and it counts what the loop did. Shared by the unit tests and
// the micro-benchmarks, so both run the real loop code. Never throws at the loop:
// it refuses a post like a full send queue does (ENOMEM) and records what a real
// device would have done wrong (CQ overrun, a receive missing), for the test to check.
#pragma once

#include <infiniband/verbs.h>

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
    bool scramble = false;  // each poll returns its QPs' completions in a shuffled QP order
    bool pong_first = false;  // the peer's answer arrives before the ping's own completion
  };

  explicit FakeDevice(Options o);

  // The Ops seam.
  int post(uint32_t qp, ibv_send_wr* wr);
  int poll(int n, ibv_wc* wc);
  uint32_t recv(const ibv_wc& wc);  // reposts the receive; returns its QP

  // WRs posted after this many (all QPs together) never complete: a dead peer.
  void stall_after(uint64_t wrs) { stall_after_ = wrs; }
  // Called at the start of every poll: the test's hook (raise a flag, count polls).
  std::function<void()> on_poll;

  // What happened.
  uint64_t posts = 0;                  // WRs posted, all QPs
  uint64_t post_calls = 0;
  uint32_t longest_chain = 0;
  std::vector<uint64_t> posted, signaled;  // per QP
  uint64_t cq_high_water = 0;          // most CQ entries ever owed to the loop at once
  uint64_t cq_overruns = 0;            // posts that made that exceed cq_depth
  uint64_t refused_posts = 0;          // posts over sq_depth (returned ENOMEM)
  uint64_t missing_receives = 0;       // SENDs back that found no receive posted
  uint64_t receives_reposted = 0;
  Clock::time_point first_post{}, last_completion{};  // with a delay only

 private:
  struct Event {
    Clock::time_point at;
    ibv_wc wc;
    uint64_t covers;  // a send completion: the QP's WRs it frees once polled
    char* dst;        // WriteBack: memory written instead of a completion
    char tag;
  };
  void push(const Event& e);
  void answer(uint32_t qp, const ibv_send_wr& w, Clock::time_point at);  // the peer's pong

  Options o_;
  std::vector<Event> ring_;  // FIFO of events, power-of-two capacity
  size_t head_ = 0, tail_ = 0;
  uint64_t cq_owed_ = 0;
  uint64_t stall_after_ = UINT64_MAX;
  Clock::time_point last_at_{};
  std::vector<uint64_t> freed_;           // per QP: WRs whose completion the loop polled
  std::vector<uint32_t> rx_posted_;       // per QP: receives waiting
  std::vector<uint32_t> rx_seq_;          // per QP: next receive's sequence, for its wr_id
  uint64_t polls_ = 0;
};

}  // namespace rdmasweep::testing
