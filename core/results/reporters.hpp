// Sibling reporters of a results document, behind one interface as Google Benchmark's
// are: the console reporter prints the table (perftest_reporter.hpp: perftest's layout
// instead), the file reporter rewrites the results and histogram files atomically, so
// an interrupted sweep still leaves valid JSON.
// The client and the mesh use both, through SweepReport (core/results/report.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/results/document.hpp"

namespace rdmasweep {

class ResultsReporter {
 public:
  virtual ~ResultsReporter() = default;
  virtual void report_context(const ResultsDocument& doc) = 0;
  // doc.entries() from index `first` on are new since the last call.
  virtual void report_entries(const ResultsDocument& doc, size_t first) = 0;
  virtual void finalize(const ResultsDocument& doc) = 0;
};

// A numeric column of the console table: the entry's field `key` times `scale`, or
// times `pct_scale` in a cv row (whose figures are ratios); "-" when absent or null.
struct ConsoleColumn {
  const char* title;
  const char* key;
  int width, precision;
  double scale, pct_scale;
};

struct ConsoleLayout {
  size_t name_width = 40;
  bool flows = false;  // a src->dst column: the entry's src_rank->dst_rank, or "total"
  std::vector<ConsoleColumn> columns;
};
ConsoleLayout client_console_layout();  // messages, Gb/s, Mmsg/s, min to max latency
ConsoleLayout mesh_console_layout();    // src->dst, messages, Gb/s, Mmsg/s, p50 and p99

class ConsoleReporter : public ResultsReporter {
 public:
  ConsoleReporter(ConsoleLayout layout, std::ostream& out);
  void set_name_width(size_t w) { layout_.name_width = w; }

  void report_context(const ResultsDocument&) override {}
  void report_entries(const ResultsDocument& doc, size_t first) override;
  void finalize(const ResultsDocument& doc) override;  // the knees, under the table

 private:
  void print_header();
  void print_row(const nlohmann::json& b);

  ConsoleLayout layout_;
  std::ostream& out_;
  bool header_printed_ = false;
};

class FileReporter : public ResultsReporter {
 public:
  // `who` starts the message on `err` when a write fails ("rdmasweep", "rdmasweep mesh").
  FileReporter(std::string who, std::ostream& err);

  // New entries are written at once unless the files were written less than
  // kWriteSpacing write-times ago: both files are rewritten whole, so a write grows
  // with the sweep, and this keeps writing under 1/kWriteSpacing of the wall time. A
  // process killed outright loses at most that span's points; the end (also after an
  // interrupt or a failure) writes everything, and that last write is synced.
  static constexpr int kWriteSpacing = 20;
  void set_write_spacing(int n) { spacing_ = n; }  // 0: after every point
  void report_context(const ResultsDocument& doc) override { write(doc, false); }
  void report_entries(const ResultsDocument& doc, size_t) override {
    if (due()) write(doc, false);
  }
  void finalize(const ResultsDocument& doc) override { write(doc, true); }

  // Why the last write failed ("" when it succeeded): the results stay in memory and
  // every later report tries again.
  const std::string& write_error() const { return write_error_; }

 private:
  void write(const ResultsDocument& doc, bool durable);
  bool due() const {
    return !write_error_.empty() || std::chrono::steady_clock::now() - last_end_ >= spacing_ * last_took_;
  }

  std::chrono::steady_clock::time_point last_end_{};
  std::chrono::steady_clock::duration last_took_{};
  int spacing_ = kWriteSpacing;
  std::string who_;
  std::ostream& err_;
  std::string write_error_;
};

}  // namespace rdmasweep
