// A sweep's plan, from the options alone (no device, no server): its points as the run
// names them, the buffers each side pins for each (core's own sizing), and an estimate
// of the run's wall time. `client --plan` and `doctor --config` print it; the client
// says the estimate as it starts when it is long; `mesh --plan` shares the time model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config/config.hpp"

namespace rdmasweep {

// What a run's parts cost, in seconds: the parts core/measure/wall_time.hpp splits a
// client's wall time into. The defaults were measured on Soft-RoCE in the rxe lab VM
// (docs/lab.md): reports/fabric/rxe0.json (tools/rxe-lab, --config quick with 3
// repetitions: its wall_time and every entry's setup_seconds and messages, as
// rates_from_results() reads them) and, for the cost of each QP,
// reports/figures/qp-scaling.json (1 to 1,024 QPs: about 1 ms a QP without SRQ, 1.9 ms
// with, between 64 and 1,024).
struct PlanRates {
  double start = 0.34;        // once: clock calibration, device, control connection, HELLO
  double new_qps = 0.012;     // a point that sets up QPs (the previous shape's destroyed) ...
  double per_qp = 0.0015;     // ... and each of its QPs (every thread's), both sides at once
  double reused = 0.0036;     // a point (or repetition) on the QPs of the one before
  double per_run = 0.015;     // each run: the warm-up's start, counters, DONE and RESULT, the files
  double per_message = 28e-6;       // each message (of every QP), one after another ...
  double bytes_per_second = 43e6;   // ... plus its payload at this rate
  double round_trip = 1.2;          // a latency point's round trip, in messages
  std::string source = "Soft-RoCE in the rxe lab VM (reports/fabric/rxe0.json, reports/figures/qp-scaling.json)";
  bool built_in = true;  // these defaults, not an earlier run's
};

// --plan-from FILE: the rates an earlier run measured, from its results (Google
// Benchmark JSON as the client writes it): a message's time and its payload's rate
// fitted to its bandwidth entries, the round trip from its latency entries, setup
// scaled by its entries' setup_seconds, start and per-run cost from its wall_time.
// What FILE cannot tell keeps the default. Throws ConfigError naming FILE.
PlanRates rates_from_results(const nlohmann::json& results, const std::string& file);
PlanRates rates_from_file(const std::string& path);

// Seconds one message of `c` takes (a latency point's round trip).
double message_seconds(const TestConfig& c, const PlanRates& r);
// Seconds one run of `c` measures (warm-up included): its messages, or its duration
// and the messages in flight when it ends.
double measuring_seconds(const TestConfig& c, const PlanRates& r);

struct PlannedPoint {
  std::string name;     // point_name(), as the results and the console table say it
  bool new_qps = true;  // sets up QPs; else runs on those of the point before
  uint64_t side_bytes = 0;  // buffers each side pins while it runs
  double seconds = 0;       // all its repetitions, setup included
};

struct SweepPlan {
  std::vector<PlannedPoint> points;  // in the order the run takes them
  uint32_t repetitions = 1;
  uint64_t messages = 0;         // every run's, warm-up included (--iters points)
  double seconds = 0;            // the whole run: the parts below
  double start_seconds = 0, setup_seconds = 0, message_seconds = 0, duration_seconds = 0, run_seconds = 0;
  uint64_t max_side_bytes = 0;
  PlanRates rates;
};

// `points` as expand() gives them, each run `repetitions` times in a row (as Google
// Benchmark runs them).
SweepPlan plan_sweep(const std::vector<TestConfig>& points, uint32_t repetitions, const PlanRates& rates);
// Every point on a line, then the estimate, its parts, the memory and the rates.
std::string plan_text(const SweepPlan& p);
// A run estimated at more than this says so as it starts (long_run_line).
constexpr double kLongRunSeconds = 600;
// "rdmasweep: 1,932 points, about 48.3 min (--plan for details)".
std::string long_run_line(const SweepPlan& p);

std::string human_seconds(double s);  // "0.25 s", "12.0 s", "48.3 min", "2.5 h", "3.1 days"
std::string human_bytes(double b);    // "8.0 KiB"
std::string thousands(uint64_t n);    // "1,932"

}  // namespace rdmasweep
