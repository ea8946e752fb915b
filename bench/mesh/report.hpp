// Rank 0's side of `rdmasweep mesh`: the entries (Google Benchmark JSON, one per flow
// and one "total" per point of incast and all-to-all), the console table, and
// the results and histogram files, rewritten after every point so that an
// interrupted sweep still leaves valid JSON.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/mesh/options.hpp"
#include "bench/mesh/phase.hpp"
#include "bench/mesh/world.hpp"
#include "core/config.hpp"

namespace rdmasweep::mesh_detail {

using nlohmann::json;

class MeshReport {
 public:
  MeshReport(std::string path, json context);

  // Prints the entry's row and keeps it (and its histogram record, when given; the
  // records of a flow's repetitions are merged).
  void add(json b, const std::string& flow_label, const json& hist = json());
  // Writes both files; the final write marks the results complete unless given a reason.
  void write(bool final_write, const std::string& incomplete_reason = "");

  size_t failed() const { return failed_; }
  const std::string& write_error() const { return write_error_; }
  const json& doc() const { return doc_; }
  const std::string& hist_path() const { return hist_path_; }

  void set_width(size_t w) { width_ = w; }

 private:
  void print_row(const json& b, const std::string& flow);

  std::string path_, hist_path_;
  json doc_, hist_doc_;
  size_t ok_ = 0, failed_ = 0, width_ = 40;
  bool header_ = false;
  std::string write_error_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
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
// The fields every iteration entry has; takes the next instance.
json base_entry(const std::string& name, EntryPos& at);
// A numeric field of `j`, 0 when absent or null.
double number_in(const json& j, const char* key);
// Marks `b` failed with `message`, with the time fields Google Benchmark writes in
// every entry (its tools/compare.py reads them): iterations and times 0.
void mark_failed(json& b, const std::string& message);

// The results file's context: tool, ranks, MPI library, the sweep.
json make_context(const MeshOptions& o, const World& w, const std::vector<json>& ranks, size_t points);

// Adds one entry per flow of a phase, in the phase's order, from what the ranks sent
// (gathered[r]: rank r's results and errors for its ends of the flows).
void add_flow_entries(MeshReport& report, Pattern pattern, const TestConfig& cfg, EntryPos& at,
                      const std::vector<Flow>& flows, const std::vector<std::string>& gathered,
                      const std::vector<std::string>& hosts, std::vector<json>& point_entries);

// Aggregate of the flows that ran at the same time: all their bytes and messages
// over the union of their measured windows (so bytes_per_second == bytes / seconds),
// with their own rates summed as sum_of_flow_{bytes,items}_per_second.
json total_entry(Pattern pattern, const TestConfig& cfg, EntryPos& at, const std::vector<json>& entries);

// Google Benchmark's aggregates (mean, median, stddev, cv) of each entry name among
// `runs` (one point's iteration entries over its repetitions), for every name with at
// least two runs that did not fail.
std::vector<json> aggregate_entries(const std::vector<json>& runs);

}  // namespace rdmasweep::mesh_detail
