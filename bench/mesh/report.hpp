// Rank 0's side of `rdmasweep mesh`: the entries (Google Benchmark JSON, one per flow
// and one "total" per point of incast and all-to-all), kept and shown by core's
// results document and reporters (the results and histogram files rewritten after
// every point so that an interrupted sweep still leaves valid JSON).
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/control/protocol.hpp"
#include "bench/mesh/options.hpp"
#include "bench/mesh/schedule.hpp"
#include "bench/mesh/world.hpp"
#include "core/config/config.hpp"
#include "core/results/aggregates.hpp"
#include "core/results/report.hpp"

namespace rdmasweep::mesh_detail {

using nlohmann::json;

// The mesh's table (a src->dst column) and its messages' prefix.
class MeshReport : public SweepReport {
 public:
  MeshReport(std::string path, json context)
      : SweepReport(std::move(path), std::move(context), mesh_console_layout(), "rdmasweep mesh") {}
};

// Where the next entry sits in Google Benchmark's terms: the family is the point,
// the instance the flow (counted again in each repetition, as Google Benchmark does).
struct EntryPos {
  size_t family = 0;
  size_t instance = 0;
  uint32_t repetition = 0, repetitions = 1;
  size_t phase = 0;  // the phase of the schedule the flows ran in
};

// mesh/<pattern>/<point>/<tail>
std::string bench_name(Pattern p, const TestConfig& c, const std::string& tail);
// src:<i>/dst:<j>
std::string flow_tail(const Flow& f);
// A flow's configuration: the point's, or (--pattern victim) the background's.
const TestConfig& flow_config(const Flow& f, const TestConfig& point, const TestConfig* background);
// A flow's entry name: mesh/<pattern>/<point>/src:i/dst:j, with /beside for the victim's
// flow in a phase with a background, and the background's flows named by their own
// point with /background.
std::string flow_entry_name(Pattern p, const Flow& f, const TestConfig& point, const TestConfig* background);
// The fields every iteration entry of a point has (its point and configuration too);
// takes the next instance.
json base_entry(const std::string& name, EntryPos& at, const TestConfig& cfg);
// A numeric field of `j`, 0 when absent or null.
double number_in(const json& j, const char* key);

// The results file's context: the common keys with rank 0 as this side (`me` on
// `port`), then the ranks, the MPI library, the pattern.
json make_context(const MeshOptions& o, const World& w, const std::vector<json>& ranks, size_t points,
                  const control::Hello& me, uint32_t port);

// Adds one entry per flow of a phase, in the phase's order, from what the ranks sent
// (gathered[r]: rank r's results and errors for its ends of the flows). A flow with
// an end on a `gone` rank fails naming that rank. `background` (--pattern victim's
// second phase): the victim's entry names it, and fails when its window did not end
// inside the background flows' traffic.
void add_flow_entries(MeshReport& report, Pattern pattern, const TestConfig& cfg, EntryPos& at,
                      const std::vector<Flow>& flows, const std::vector<std::string>& gathered,
                      const std::vector<std::string>& hosts, std::vector<json>& point_entries,
                      const std::set<int>& gone = {}, const TestConfig* background = nullptr);

// Aggregate of the flows that ran at the same time: all their bytes and messages
// over the union of their measured windows (so bytes_per_second == bytes / seconds),
// with their own rates summed as sum_of_flow_{bytes,items}_per_second.
json total_entry(Pattern pattern, const TestConfig& cfg, EntryPos& at, const std::vector<json>& entries);

}  // namespace rdmasweep::mesh_detail
