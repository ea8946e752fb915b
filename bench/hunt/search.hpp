// `rdmasweep hunt`'s search: random samples, then simulated annealing towards the
// points the oracles score highest (Collie's method, NSDI '22); then each flagged point
// is measured again (repetitions decide: noise is dismissed, not reported) and shrunk,
// knob by knob, towards the simplest configuration that still shows it.
// Measuring is a callback, so the search runs the same on a fake landscape in tests.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "bench/hunt/oracles.hpp"
#include "bench/hunt/space.hpp"

namespace rdmasweep::hunt {

// Measures a candidate once; `phase` names why (explore, confirm, shrink, reference).
using Measure = std::function<Measurement(const Candidate&, const std::string& phase)>;

// Re-measurements of one oracle on one candidate.
struct Probe {
  uint32_t held = 0, runs = 0;
  bool reproduced = false;
  bool out_of_time = false;
  std::vector<Finding> findings;  // one per run where the oracle applied
  Measurement last;               // the candidate's last run (its counters)
};

struct Anomaly {
  Finding found;                  // as first flagged
  Candidate first;                // where
  Candidate minimal;              // after shrinking
  std::optional<TestConfig> reference;  // the minimal trigger's reference (relative oracles)
  Probe evidence;                 // the minimal trigger's last reproduction
  std::vector<std::string> steps; // "size 4096 -> 1024: held 3 of 3", in order
  bool shrink_complete = true;    // false: the budget ran out while shrinking
  std::vector<std::string> also_seen;  // other flagged points it covers
  std::vector<std::string> also_shows; // other counter oracles its minimal trigger's runs hold
};

struct Flagged {
  Candidate cand;
  Finding found;
  Probe probe;         // dismissed: the runs that did not show it again
  std::string status;  // "noise", "covered", "not examined (budget)"
};

struct HuntResult {
  size_t explored = 0;      // candidates measured while exploring
  size_t measurements = 0;  // every run, confirmations and shrinking included
  size_t failed = 0;        // runs that failed (their errors are in the results)
  double explore_seconds = 0, seconds = 0;
  bool interrupted = false;
  std::string stopped;          // the failure that ended the hunt early, if one did
  std::vector<Anomaly> anomalies;
  std::vector<Flagged> others;  // flagged while exploring, not reported as anomalies
};

class Hunter {
 public:
  using Clock = std::chrono::steady_clock;
  Hunter(const Space& space, Sampler& sampler, Measure measure, Clock::duration budget,
         std::function<bool()> stop = {}, std::function<void(const std::string&)> say = {},
         std::function<Clock::time_point()> now = Clock::now);
  HuntResult run();

 private:
  double measure_and_score(const Candidate& c, std::vector<Observed>& all);
  void explore(Clock::time_point until);
  std::vector<Flagged> flagged() const;
  Probe reproduce(const Candidate& c, const std::string& oracle, const std::optional<TestConfig>& ref,
                  const std::string& phase);
  void examine(Flagged f);
  bool covered(Flagged& f);
  void shrink(Anomaly& a);
  bool out_of_time() const;
  void say(const std::string& s) const {
    if (say_) say_(s);
  }

  const Space& space_;
  Sampler& sampler_;
  Measure measure_;
  std::function<Clock::time_point()> now_;  // the steady clock; tests pass a simulated one
  Clock::time_point start_, deadline_;
  std::function<bool()> stop_;
  std::function<void(const std::string&)> say_;
  std::vector<Observed> history_;   // solo runs: the references
  std::vector<Observed> explored_;  // every explored candidate's run
  HuntResult result_;
  double best_score_ = 0;  // the highest oracle score explored, for the progress line
  std::string best_;
};

// The order knobs are shrunk in: the ones that shape the workload most first (threads,
// QPs, size, depths), then the loop knobs, then the op and mode.
std::vector<const Knob*> shrink_order(const Space& s);

// Whether anomaly `a`'s minimal trigger explains candidate `c` flagged by the same
// oracle: every knob of `c` equal to the minimal's, or beyond it as seen from the
// shrink target (a knob the shrinking moved to its target matches anything).
bool covers(const Space& s, const Anomaly& a, const Candidate& c, const std::string& oracle);

}  // namespace rdmasweep::hunt
