// Where a run's wall time went: each part timed where it happens, at step boundaries
// (never inside a hot loop), so the parts add up to the whole and a slow sweep says
// what it waited for.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace rdmasweep {

// Seconds, by what they were spent on.
struct WallTime {
  double setup = 0;     // device, clock calibration, connection, QPs created, connected and destroyed
  double warmup = 0;    // warm-up loops, threads started and joined around the measured windows
  double measured = 0;  // the measured windows
  double counters = 0;  // port counters read, and the wait for their cache (either side's)
  double control = 0;   // control-channel exchanges after the window (DONE, RESULT) and their checks
  double writing = 0;   // results and histogram files, the console table
  WallTime& operator+=(const WallTime& o);
  double sum() const;
};

// "wall 3.3 s: setup 0.23 s (7.0%), warm-up ... writing ..., other 0.01 s (0.3%)": every
// part's share of `wall` seconds; "other" is what no part accounts for.
std::string wall_summary(const WallTime& parts, double wall);
// The same as JSON: {"wall_seconds", "setup_seconds", ..., "other_seconds"}.
nlohmann::json wall_json(const WallTime& parts, double wall);

// A stopwatch over consecutive steps: each lap() adds the time since the previous
// lap (or construction) to one part.
class Laps {
 public:
  explicit Laps(WallTime& into, std::chrono::steady_clock::time_point from = std::chrono::steady_clock::now())
      : into_(into), last_(from) {}
  void lap(double WallTime::*part) {
    const auto now = std::chrono::steady_clock::now();
    into_.*part += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  // The time since the previous lap: `seconds` of it (at most all) to `part`, the rest to `rest`.
  void split(double WallTime::*part, double seconds, double WallTime::*rest) {
    const double before = into_.*rest;
    lap(rest);
    const double moved = std::min(std::max(seconds, 0.0), into_.*rest - before);
    into_.*rest -= moved;
    into_.*part += moved;
  }

 private:
  WallTime& into_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace rdmasweep
