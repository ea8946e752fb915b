// Send-queue accounting for one QP under selective signaling. It lives as long as
// the QP (not the loop), so a QP reused by the next point of a sweep starts with the
// true count of WRs still in its queue, and a late completion from the previous
// point retires the right WRs.
#pragma once

#include <cstdint>
#include <vector>

namespace rdmasweep {

// SEND on iWARP (core/engine/send_credits.hpp): each QP's receive count is the first word
// of a 64-byte slot of its own, and the sender READs the whole slot. Soft-iWARP copies a
// READ response of up to 32 bytes with copy_from_user whenever a post_send on that QP is
// in progress, even from its transmit thread, which has no user memory: the copy fails
// (EFAULT) and the QP ends, flushing everything posted (an 8-byte READ of the count did,
// with --bidir). Longer responses it sends from the registered pages, in any context.
constexpr uint32_t kCreditSlotWords = 8;

struct SendQueue {
  uint64_t posted = 0;
  uint64_t completed = 0;
  uint32_t until_signal = 1;  // WRs left before the next signaled one
  // Credit (core/engine/send_credits.hpp), where the loop needs it: receives the peer has
  // reposted on this QP, as last read, and whether a READ of that count is in flight.
  uint64_t granted = 0;
  bool reading = false;

  uint64_t outstanding() const { return posted - completed; }
  // A signaled completion with sequence `seq` (the low 32 bits of the WR's number)
  // retires every WR up to it. Returns false for one that retires nothing new: with
  // --cq-scope process another thread may hand a completion over after this thread
  // has polled a later one of the same QP (core/engine/shared_cq.hpp).
  bool retire(uint32_t seq) {
    const uint32_t step = seq + 1 - static_cast<uint32_t>(completed);
    if (static_cast<int32_t>(step) <= 0) return false;
    completed += step;
    return true;
  }
  // Signal the WR about to be posted? Every `every`-th one, and always when `last`.
  bool next_signaled(uint32_t every, bool last) {
    if (--until_signal == 0 || last) {
      until_signal = every;
      return true;
    }
    return false;
  }
};

// --bidir SEND: the peer's messages, taken by the sending side's own loop (one CQ has
// both kinds of completion). Counted over a whole point, warm-up included.
struct Arrivals {
  std::vector<uint64_t> got;  // per QP
  uint64_t expect = 0;        // per QP: the loop does not end before this many (0: it need not wait)
  uint32_t missing = 0;       // QPs short of `expect`

  void reset(size_t nqp) {
    got.assign(nqp, 0);
    expect = 0;
    missing = 0;
  }
  void wait_for(uint64_t per_qp) {
    expect = per_qp;
    missing = 0;
    for (uint64_t g : got) missing += g < per_qp;
  }
  void take(uint32_t q) {
    if (++got[q] == expect) --missing;
  }
  bool none() const {
    for (uint64_t g : got)
      if (g != 0) return false;
    return true;
  }
};

}  // namespace rdmasweep
