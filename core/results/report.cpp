#include "core/results/report.hpp"

#include <cstdio>
#include <memory>
#include <ostream>
#include <utility>

namespace rdmasweep {

SweepReport::SweepReport(std::string path, nlohmann::json context, std::unique_ptr<ResultsReporter> console,
                         std::string who, std::ostream& out, std::ostream& err)
    : who_(who),
      out_(out),
      err_(err),
      doc_(std::move(path), std::move(context)),
      console_(std::move(console)),
      file_(std::move(who), err) {}

SweepReport::SweepReport(std::string path, nlohmann::json context, ConsoleLayout layout, std::string who,
                         std::ostream& out, std::ostream& err)
    : SweepReport(std::move(path), std::move(context), std::make_unique<ConsoleReporter>(std::move(layout), out),
                  std::move(who), out, err) {
  table_ = static_cast<ConsoleReporter*>(console_.get());
}

double SweepReport::wall_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool SweepReport::print_if_unwritten() {
  if (write_error().empty()) return false;
  err_ << who_ << ": could not write the results (" << write_error() << "); printing them to stdout instead" << std::endl;
  out_ << doc_.results().dump(2) << std::endl;
  return true;
}

void SweepReport::write(bool final_write, const std::string& incomplete_reason) {
  if (!started_) {
    for (ResultsReporter* r : reporters_) r->report_context(doc_);
    started_ = true;
  }
  const size_t n = doc_.entries().size();
  if (n > reported_) {
    for (ResultsReporter* r : reporters_) r->report_entries(doc_, reported_);
    reported_ = n;
  }
  if (!final_write) return;
  if (time_summary_.empty()) {
    char b[64];
    std::snprintf(b, sizeof b, "wall %.1f s", wall_seconds());
    time_summary_ = b;
  }
  doc_.finish(incomplete_reason, time_summary_);
  for (ResultsReporter* r : reporters_) r->finalize(doc_);
}

}  // namespace rdmasweep
