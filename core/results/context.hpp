// The results context: what every results file says about its run, whichever command
// wrote it (client, multicast, mesh, hunt). Built here once from plain values; each
// command adds only the keys that are its own (the client's peer and placement, the
// mesh's ranks, the multicast receivers, the hunt's space).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/control/protocol.hpp"

namespace rdmasweep {

// Throughput over time is sampled every kDefaultInterval seconds in duration points
// unless --interval says otherwise.
constexpr double kDefaultInterval = 0.1;
// The context's record of --interval: {"seconds", "points": "all" | "duration"}.
nlohmann::json interval_context(double asked);

// The latency convention of a two-sided point (client, mesh, hunt).
inline constexpr const char* kLatencyNote =
    "SEND and WRITE latency is one-way (round trip / 2); READ latency is the round trip";

// One end as the results name it (the client's and server's, each mesh rank's).
nlohmann::json end_context(const control::Hello& h);

struct RunContext {
  std::string command;     // client, multicast, mesh, hunt
  control::Hello me;       // this side (the mesh: rank 0)
  uint32_t port = 0;       // this side's device port
  std::map<std::string, std::string> labels;  // --label KEY=VALUE
  double interval = 0;     // --interval as asked (negative: the default)
  std::string latency_note = kLatencyNote;
};

// What a sweep's results add: the sweep as a sweep file, its source and size, and the
// choices that shape every point.
struct SweepContext {
  std::string file;        // --config, or ""
  nlohmann::json sweep;    // every knob, as a sweep file
  size_t points = 0;
  std::string clock_choice;
  bool cap_to_cq = false;  // --cap-to-cq: "cq_policy" cap, else error
};

// The common keys (tool, version, build, date, this side's device and GID, clock,
// labels, interval, notes); with `sweep`, the sweep's keys too.
nlohmann::json results_context(const RunContext& run, const SweepContext* sweep = nullptr);

}  // namespace rdmasweep
