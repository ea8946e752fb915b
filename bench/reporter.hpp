// Google Benchmark reporter for client sweeps: turns Google Benchmark's runs into
// entries of the results document (core/results/report.hpp), whose console reporter
// prints the table (bandwidth in Gb/s, message rate, latency percentiles) or, with
// --format perftest, perftest's tables, and whose file reporter rewrites the results
// and histogram files after every point, marked incomplete until the sweep finishes.
#pragma once

#include <chrono>
#include <cstdio>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "core/config/config.hpp"
#include "core/measure/wall_time.hpp"
#include "core/results/model.hpp"
#include "core/results/report.hpp"

namespace rdmasweep {

// Engine results of each point's repetitions, filled by the benchmarks, read by the reporter.
using PointStore = std::map<std::string, std::vector<PointResult>>;

// What --format shows on `out` as points end: the client's table (its point column
// `name_width` wide) or perftest's tables (a point without a row said on `err`).
std::unique_ptr<ResultsReporter> console_reporter(cli::ConsoleFormat format, size_t name_width, std::ostream& out,
                                                  std::ostream& err);

class SweepReporter : public benchmark::BenchmarkReporter {
 public:
  // `points`: the sweep's points, whose configurations every entry carries.
  // `abort_reason`, when not empty at the end, marks the results incomplete.
  // `started`: when the command started, the wall time's origin.
  SweepReporter(std::string out_path, nlohmann::json context, const std::vector<TestConfig>& points,
                const PointStore& store, const std::string& abort_reason, size_t name_width,
                cli::ConsoleFormat format, std::chrono::steady_clock::time_point started);

  // A row that is not one of `points` by name (client --beside: NAME/beside, the
  // point `cfg` beside the background point `background`).
  void add_row(const std::string& name, const TestConfig& cfg, const std::string& background);

  bool ReportContext(const Context& ctx) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  // Google Benchmark's end of the sweep: nothing yet, finish() writes the results.
  void Finalize() override {}
  // Marks the results complete and writes them, once the session is closed and its
  // QPs destroyed, so the time summary covers them.
  void finish();
  // Time spent outside the points and this reporter (before the sweep, after it).
  void add_time(const WallTime& w) { outside_ += w; }

  const std::string& hist_path() const { return report_.hist_path(); }
  size_t failed() const { return report_.failed(); }
  // When the results could not be written (every point tries again), prints them to
  // stdout rather than losing them, and returns true.
  bool print_if_unwritten() { return report_.print_if_unwritten(); }
  // Where the wall time since `started` went (wall_summary()); also kept in the results' context.
  std::string time_summary() const;
  // Call before printing anything else to stdout/stderr while the progress line shows.
  static void clear_progress_line();

 private:
  nlohmann::json entry(const Run& r) const;

  SweepReport report_;
  // A point's counter anomalies: under its row in the table; on stderr beside
  // perftest's tables, which a parser reads to their closing line.
  bool notes_under_rows_;
  std::map<std::string, TestConfig> config_of_;  // by point name
  std::map<std::string, std::string> background_of_;  // add_row()'s rows: the background point
  const PointStore& store_;
  const std::string& abort_reason_;
  std::chrono::steady_clock::time_point started_;
  WallTime outside_;  // add_time()'s, and this reporter's own writing
  WallTime parts() const;  // the points' and outside_, summed
  double wall() const;
};

}  // namespace rdmasweep
