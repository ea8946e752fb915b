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
  // retires every WR up to it.
  void retire(uint32_t seq) { completed += static_cast<uint32_t>(seq + 1 - static_cast<uint32_t>(completed)); }
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
