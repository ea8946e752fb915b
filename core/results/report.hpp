// A sweep's results document and its two reporters (console: the table, or perftest's
// layout for the client's --format perftest; files), as the client and the mesh both
// keep them: entries are added as runs end, shown and written at each write(), and
// finished once with the sweep.
#pragma once

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "core/results/document.hpp"
#include "core/results/reporters.hpp"

namespace rdmasweep {

class SweepReport {
 public:
  SweepReport(std::string path, nlohmann::json context, ConsoleLayout layout, std::string who,
              std::ostream& out = std::cout, std::ostream& err = std::cerr);
  // Another console reporter in the table's place (the client's --format perftest).
  SweepReport(std::string path, nlohmann::json context, std::unique_ptr<ResultsReporter> console, std::string who,
              std::ostream& out = std::cout, std::ostream& err = std::cerr);

  ResultsDocument& document() { return doc_; }
  const nlohmann::json& doc() const { return doc_.results(); }
  const std::string& path() const { return doc_.path(); }
  const std::string& hist_path() const { return doc_.hist_path(); }
  size_t failed() const { return doc_.failed(); }
  const std::string& write_error() const { return file_.write_error(); }
  void set_width(size_t w) {  // the table's point column; other layouts have none
    if (table_) table_->set_name_width(w);
  }
  void set_write_spacing(int n) { file_.set_write_spacing(n); }  // FileReporter::kWriteSpacing

  void add(nlohmann::json entry, const nlohmann::json& record = nlohmann::json()) {
    doc_.add(std::move(entry), record);
  }
  // Prints the entries added since the last call and writes both files (the first
  // call reports the context first). With `final_write`, marks the results complete,
  // or incomplete with `incomplete_reason`; the time summary is set_time_summary()'s,
  // else the wall time since construction.
  void write(bool final_write, const std::string& incomplete_reason = "");
  void set_time_summary(std::string s) { time_summary_ = std::move(s); }
  double wall_seconds() const;  // since construction

  // Last resort when the files could not be written: the results go to stdout rather
  // than being lost. Returns whether they did.
  bool print_if_unwritten();

 private:
  std::string who_;
  std::ostream &out_, &err_;
  ResultsDocument doc_;
  std::unique_ptr<ResultsReporter> console_;
  ConsoleReporter* table_ = nullptr;  // console_, when it is the table
  FileReporter file_;
  ResultsReporter* reporters_[2] = {console_.get(), &file_};
  bool started_ = false;
  size_t reported_ = 0;
  std::string time_summary_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace rdmasweep
