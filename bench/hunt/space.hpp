// `rdmasweep hunt`'s search space: the values each knob may take (a sweep's axes,
// core/config/sweep.hpp), the oracles' thresholds and the search's own settings, from
// defaults or a --space file. Candidates are points of the axes' product.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/config/knobs.hpp"
#include "core/config/sweep.hpp"

namespace rdmasweep::hunt {

// When a measured point is an anomaly (docs/hunt.md explains each).
struct Thresholds {
  // throughput: a bandwidth point moving fewer bytes/s than this fraction of a point
  // of the same op and loop knobs with no larger messages and no more QPs or depth.
  double throughput_fraction = 0.5;
  // latency: a latency point whose p99 is above this multiple of the p99 of a point of
  // the same op and loop knobs with no smaller messages and no fewer QPs.
  double latency_multiple = 4;
  // counters: normalized port counters (both sides summed) per message above these.
  std::map<std::string, double> counters = {
      {"retransmits", 0.001}, {"rnr_naks", 0.001}, {"out_of_sequence", 0.001}, {"errors", 0}};
  // isolation: a victim slowed by an aggressor beside it by more than this fraction.
  double isolation_slowdown = 0.75;
};

struct Space {
  // The axes searched (every knob with more than one value) and each point's length:
  // duration (seconds) and warmup of the spec; iters is not used.
  SweepSpec axes;
  Thresholds thresholds;
  uint32_t repetitions = 3;     // runs that confirm an anomaly (and each shrinking step)
  uint32_t must_hold = 3;       // of those, how many must show it (default: every one)
  double aggressor_share = 0.2; // of the explored candidates, measured beside an aggressor
  double explore_share = 0.5;   // of the budget, spent exploring (the rest confirms and shrinks)

  static Space defaults();
  // `base` with a --space file's keys applied: "axes" (a sweep file's keys),
  // "thresholds", and the settings above. The file's axes replace the default space's
  // (a knob it does not name stays at its default). Unknown keys are refused (ConfigError).
  static Space from_json(const nlohmann::json& j, Space base = defaults());
  nlohmann::json to_json() const;

  // The knobs with more than one value, in nesting order.
  std::vector<const Knob*> searched() const;
};

// A point of the space, possibly measured beside an aggressor.
struct Candidate {
  TestConfig point;
  std::optional<TestConfig> aggressor;
  std::string key() const;  // point name, plus the aggressor's
};

// Draws candidates from the space. Every candidate passes validate(); `usable`, when
// set, is asked too (the device's limits).
class Sampler {
 public:
  Sampler(const Space& s, uint64_t seed, std::function<bool(const TestConfig&)> usable = {});
  TestConfig random_point();
  Candidate random();
  // One knob moved to a neighbouring value (or, now and then, the aggressor added or
  // dropped).
  Candidate neighbour(const Candidate& c);
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  // A point the search may measure: valid, SRQ only with SEND, no single thread on a
  // process-wide CQ (the same as a thread's), and usable on the device.
  bool valid(const TestConfig& c) const;

 private:
  TestConfig base() const;  // every knob at its axis' first value
  std::optional<TestConfig> aggressor();  // a random bandwidth point
  const Space& space_;
  std::vector<const Knob*> knobs_;
  std::mt19937_64 rng_;
  std::function<bool(const TestConfig&)> usable_;
};

// Shrinking: the value each knob moves towards (fewer QPs and threads, smaller messages
// and depths, otherwise the knob's default), and the axis' values from there out.
uint64_t shrink_target(const Knob& k, const std::vector<uint64_t>& axis);
// The axis' values ordered from the target outwards to `current` (both included);
// for named and flag knobs, just {target, current}.
std::vector<uint64_t> shrink_path(const Knob& k, const std::vector<uint64_t>& axis, uint64_t current);

// The knobs a relative oracle compares across (size, QPs, threads, send and receive
// depths); every other knob must be equal between a point and its reference.
bool comparison_knob(const Knob& k);

}  // namespace rdmasweep::hunt
