// The oracles of `rdmasweep hunt`: what makes a measured point an anomaly, each with
// its evidence. Pure functions of the measurements, so tests feed them made-up ones.
//   throughput  a bandwidth point moving fewer bytes/s than `throughput_fraction` of a
//               reference: same op and loop knobs, no larger messages, no more QPs,
//               threads or queue depth (more resources should not mean less).
//   latency     a latency point whose p99 is above `latency_multiple` times a
//               reference's: same op and loop knobs, no smaller messages, no fewer QPs.
//   counters:X  normalized port counter X (both sides) per message above its limit.
//   isolation   the point's rate beside an aggressor below (1 - isolation_slowdown)
//               of its rate measured alone just before.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/hunt/space.hpp"

namespace rdmasweep::hunt {

// One measured run of a candidate (beside its aggressor, the point's run alone first).
struct Measurement {
  bool ok = false;
  std::string error;          // when !ok
  std::string entry;          // its entry's name in the results
  double messages = 0;        // bw: messages; lat: round trips
  double msg_rate = 0;        // per second of measured time
  double byte_rate = 0;
  double p99_us = NAN;        // latency points
  bool has_counters = false;  // normalized counters, both sides summed
  std::map<std::string, double> counters;
  double beside_rate = NAN;   // msg_rate next to the aggressor (NaN: none, or no overlap)
};

struct Observed {
  Candidate cand;
  Measurement m;
};

struct Finding {
  std::string oracle;       // throughput, latency, counters:NAME, isolation
  double score = 0;         // value against the threshold: >= 1 is an anomaly
  double value = 0;         // the figure judged (bytes/s, p99 us, per message, slowdown)
  double limit = 0;         // where the threshold puts it
  std::optional<TestConfig> reference;  // throughput and latency: the point compared with
  double reference_value = NAN;
  std::string evidence;     // one line, with the numbers
  nlohmann::json to_json() const;
};

// Every oracle's finding for `m` (scores below 1 included: the search climbs them),
// references taken from `history` (which may hold `m` itself; a point is never its
// own reference).
std::vector<Finding> judge(const Candidate& c, const Measurement& m, const std::vector<Observed>& history,
                           const Thresholds& t);
// The highest score of `f` (0 when empty).
double top_score(const std::vector<Finding>& f);

// One oracle again on fresh runs: the candidate's and, for throughput and latency,
// its reference's (measured alongside). nullopt when the oracle does not apply.
std::optional<Finding> rejudge(const std::string& oracle, const Candidate& c, const Measurement& m,
                               const TestConfig* ref, const Measurement* ref_m, const Thresholds& t);

// Whether `ref` may serve as `c`'s reference for a relative oracle.
bool is_reference(const std::string& oracle, const TestConfig& c, const TestConfig& ref);

}  // namespace rdmasweep::hunt
