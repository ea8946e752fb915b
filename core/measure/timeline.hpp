// Throughput over time, as a loop records it and the results report it.
#pragma once

#include <cstdint>
#include <vector>

namespace rdmasweep {

// Throughput over time (--interval): the messages (bw) or round trips (lat) completed
// since the measured window opened, sampled at the loop's first clock read past each
// interval boundary and once at the window's end. Costs nothing per message: the
// loops read their clock at most once per poll that returned completions.
struct Timeline {
  double interval = 0;             // seconds; 0: not recorded
  std::vector<double> t;           // seconds since the window opened
  std::vector<uint64_t> messages;  // completed by then, all QPs
};

// Rates (per second) of the timeline's intervals; a final interval shorter than half
// an interval (the drain after the window) is left out, as too short to mean anything.
std::vector<double> interval_rates(const Timeline& tl);

}  // namespace rdmasweep
