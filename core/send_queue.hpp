// Send-queue accounting for one QP under selective signaling. It lives as long as
// the QP (not the loop), so a QP reused by the next point of a sweep starts with the
// true count of WRs still in its queue, and a late completion from the previous
// point retires the right WRs.
#pragma once

#include <cstdint>

namespace rdmasweep {

struct SendQueue {
  uint64_t posted = 0;
  uint64_t completed = 0;
  uint32_t until_signal = 1;  // WRs left before the next signaled one

  uint64_t outstanding() const { return posted - completed; }
  // A signaled completion with sequence `seq` (the low 32 bits of the WR's number)
  // retires every WR up to it. Returns false for one that retires nothing new: with
  // --cq-scope process another thread may hand a completion over after this thread
  // has polled a later one of the same QP (core/shared_cq.hpp).
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

}  // namespace rdmasweep
