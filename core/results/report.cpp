#include "core/results/report.hpp"

#include <cstdio>
#include <utility>

namespace rdmasweep {

SweepReport::SweepReport(std::string path, nlohmann::json context, ConsoleLayout layout, std::string who,
                         std::ostream& out, std::ostream& err)
    : doc_(std::move(path), std::move(context)), console_(std::move(layout), out), file_(std::move(who), err) {}

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
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char b[64];
    std::snprintf(b, sizeof b, "wall %.1f s", wall);
    time_summary_ = b;
  }
  doc_.finish(incomplete_reason, time_summary_);
  for (ResultsReporter* r : reporters_) r->finalize(doc_);
}

}  // namespace rdmasweep
