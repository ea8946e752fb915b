// Google Benchmark reporter for sweeps: prints a compact table (bandwidth in Gb/s,
// message rate, latency percentiles) and rewrites the results file and histogram
// file atomically after every point, marked incomplete until the sweep finishes.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "core/results.hpp"

namespace rdmasweep {

// Engine results of each point's repetitions, filled by the benchmarks, read by the reporter.
using PointStore = std::map<std::string, std::vector<PointResult>>;

class SweepReporter : public benchmark::BenchmarkReporter {
 public:
  // `abort_reason`, when not empty at the end, marks the results incomplete.
  SweepReporter(std::string out_path, nlohmann::json context, const PointStore& store, const std::string& abort_reason,
                size_t name_width);

  bool ReportContext(const Context& ctx) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  const std::string& hist_path() const { return hist_path_; }
  size_t failed() const { return failed_; }
  // Why the last write of the results failed ("" when it succeeded): the results
  // stay in memory and every later point tries again.
  const std::string& write_error() const { return write_error_; }
  const nlohmann::json& results() const { return doc_; }
  // "wall X s: setup Y s (P%), measurement Z s (Q%)", also kept in the results' context.
  std::string time_summary() const;
  // Call before printing anything else to stdout/stderr while the progress line shows.
  static void clear_progress_line();

 private:
  void write_files();
  void print_header();
  void print_row(const Run& r);

  std::string out_path_, hist_path_;
  nlohmann::json doc_;
  nlohmann::json hist_doc_;
  const PointStore& store_;
  const std::string& abort_reason_;
  size_t name_width_ = 40;
  size_t failed_ = 0;
  bool header_printed_ = false;
  std::string write_error_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string hist_path_for(const std::string& out_path);

}  // namespace rdmasweep
