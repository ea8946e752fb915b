// `rdmasweep hunt`'s report: DIR/anomalies.json and DIR/anomalies.md, each anomaly
// with its minimal trigger, oracle, numbers, counters and the command that shows it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/hunt/search.hpp"

namespace rdmasweep::hunt {

// What the report says about the run beyond the search's result.
struct ReportContext {
  std::string host;
  std::string connect_args;  // --port, --device, --gid-index... as given, for the commands
  uint64_t seed = 0;
  double budget_s = 0;
  std::string results_file;  // every measured point (Google Benchmark JSON)
  nlohmann::json fabric;     // both sides' devices, as the results context has them
};

// `rdmasweep client` options that run `c` and, when given, `ref` too (knobs that
// differ become two-value lists), for the space's point length. Every knob not at its
// default is spelled out; op, mode, qps and size always are.
std::string client_args(const TestConfig& c, const TestConfig* ref, const Space& s);

// The commands that show an anomaly again: one client run (point and reference), or
// for isolation the aggressor started first and the victim beside it.
std::string reproduce_command(const Anomaly& a, const Space& s, const ReportContext& ctx);

nlohmann::json report_json(const HuntResult& r, const Space& s, const ReportContext& ctx);
std::string report_markdown(const nlohmann::json& report);

}  // namespace rdmasweep::hunt
