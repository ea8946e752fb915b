// The fake device with a --bidir SEND peer on one QP. LatePeer is slower than this
// side: its `count` messages arrive `lag` after this side's `sends` have all completed
// (the loops that wait for the peer's messages past their own window, flat out and
// paced). LaterPeer starts later: its messages arrive from `lag` after this side's
// first poll (the following end that waits for the leading end's first message).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/engine/send_queue.hpp"
#include "core/engine/wr_id.hpp"
#include "tests/support/fake_device.hpp"

namespace rdmasweep::testing {

// One QP's arrivals, the loop waiting for `n` of the peer's messages.
inline Arrivals awaiting(uint64_t n) {
  Arrivals in;
  in.reset(1);
  in.wait_for(n);
  return in;
}

struct LatePeer {
  using Clock = std::chrono::steady_clock;
  FakeDevice& fake;
  const std::vector<SendQueue>& sq;
  uint64_t sends, count;
  std::chrono::milliseconds lag;
  Clock::time_point release{};
  uint64_t delivered = 0;
  int post(uint32_t q, ibv_send_wr* w) { return fake.post(q, w); }
  uint32_t recv(const ibv_wc& wc) { return WrId::qp(wc.wr_id); }
  int poll(int n, ibv_wc* wc) {
    int got = fake.poll(n, wc);
    const Clock::time_point now = Clock::now();
    if (release == Clock::time_point{} && sq[0].completed == sends) release = now + lag;
    for (; release != Clock::time_point{} && now >= release && delivered < count && got < n; ++delivered) {
      ibv_wc& c = wc[got++];
      c = ibv_wc{};
      c.wr_id = WrId::encode(0, static_cast<uint32_t>(delivered));
      c.status = IBV_WC_SUCCESS;
      c.opcode = IBV_WC_RECV;
    }
    return got;
  }
};

struct LaterPeer {
  using Clock = std::chrono::steady_clock;
  FakeDevice& fake;
  uint64_t count;
  std::chrono::milliseconds lag;
  Clock::time_point release{}, first_arrival{};
  uint64_t delivered = 0;
  uint64_t posts_before_first = 0;  // this side's posts when the peer's first message arrived
  int post(uint32_t q, ibv_send_wr* w) { return fake.post(q, w); }
  uint32_t recv(const ibv_wc& wc) { return WrId::qp(wc.wr_id); }
  int poll(int n, ibv_wc* wc) {
    int got = fake.poll(n, wc);
    const Clock::time_point now = Clock::now();
    if (release == Clock::time_point{}) release = now + lag;
    if (now < release || delivered == count || got == n) return got;
    if (delivered == 0) {
      first_arrival = now;
      posts_before_first = fake.posts;
    }
    ibv_wc& c = wc[got++];  // one a poll
    c = ibv_wc{};
    c.wr_id = WrId::encode(0, static_cast<uint32_t>(delivered++));
    c.status = IBV_WC_SUCCESS;
    c.opcode = IBV_WC_RECV;
    return got;
  }
};

}  // namespace rdmasweep::testing
