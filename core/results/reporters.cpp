#include "core/results/reporters.hpp"

#include <cstdio>
#include <ostream>
#include <utility>

#include "core/results/model.hpp"

namespace rdmasweep {

using nlohmann::json;

ConsoleLayout client_console_layout() {
  // A cv row's messages and latencies are shown as the ratios they are.
  return {40, false, {{"messages", "messages", 10, 0, 1, 1},
                      {"Gb/s", "bytes_per_second", 9, 3, 8 / 1e9, 100},
                      {"Mmsg/s", "items_per_second", 9, 3, 1 / 1e6, 100},
                      {"min us", "lat_min_us", 9, 3, 1, 1},
                      {"p50 us", "lat_p50_us", 9, 3, 1, 1},
                      {"p99 us", "lat_p99_us", 9, 3, 1, 1},
                      {"p99.9 us", "lat_p999_us", 9, 3, 1, 1},
                      {"max us", "lat_max_us", 9, 3, 1, 1}}};
}

ConsoleLayout mesh_console_layout() {
  return {40, true, {{"messages", "messages", 10, 0, 1, 100},
                     {"Gb/s", "bytes_per_second", 9, 3, 8 / 1e9, 100},
                     {"Mmsg/s", "items_per_second", 9, 3, 1 / 1e6, 100},
                     {"p50 us", "lat_p50_us", 9, 3, 1, 100},
                     {"p99 us", "lat_p99_us", 9, 3, 1, 100}}};
}

ConsoleReporter::ConsoleReporter(ConsoleLayout layout, std::ostream& out) : layout_(std::move(layout)), out_(out) {}

// `s` left-aligned in `width` characters, as printf's %-*s.
static std::string padded(const std::string& s, size_t width) {
  return s.size() < width ? s + std::string(width - s.size(), ' ') : s;
}

void ConsoleReporter::print_header() {
  char b[64];
  out_ << padded("point", layout_.name_width);
  if (layout_.flows) {
    std::snprintf(b, sizeof b, " %-12s", "src->dst");
    out_ << b;
  }
  for (const ConsoleColumn& c : layout_.columns) {
    std::snprintf(b, sizeof b, " %*s", c.width, c.title);
    out_ << b;
  }
  out_ << '\n';
  header_printed_ = true;
}

// The point (a client entry's run name, a mesh entry's point), with its aggregate.
static std::string row_name(const json& b) {
  std::string name = b.value("point", b.value("run_name", b.value("name", "")));
  if (b.value("run_type", "") == "aggregate") name += "_" + b.value("aggregate_name", "");
  return name;
}

static std::string flow_label(const json& b) {
  const int src = b.value("src_rank", -1), dst = b.value("dst_rank", -1);
  if (src < 0) return "total";
  return std::to_string(src) + "->" + (dst < 0 ? std::string("group") : std::to_string(dst));  // multicast's sender
}

static double number_or(const json& b, const char* key, double fallback) {
  auto it = b.find(key);
  return it != b.end() && it->is_number() ? it->get<double>() : fallback;
}

void ConsoleReporter::print_row(const json& b) {
  if (!header_printed_) print_header();
  char s[64];
  out_ << padded(row_name(b), layout_.name_width);
  if (layout_.flows) {
    std::snprintf(s, sizeof s, " %-12s", flow_label(b).c_str());
    out_ << s;
  }
  if (b.value("error_occurred", false)) {
    out_ << " ERROR: " << b.value("error_message", "") << '\n';
    return;
  }
  const bool pct = b.value("aggregate_unit", "") == "percentage";
  for (const ConsoleColumn& c : layout_.columns) {
    auto it = b.find(c.key);
    if (it != b.end() && it->is_number())
      std::snprintf(s, sizeof s, " %*.*f", c.width, c.precision, it->get<double>() * (pct ? c.pct_scale : c.scale));
    else
      std::snprintf(s, sizeof s, " %*s", c.width, "-");
    out_ << s;
  }
  // UD: datagrams lost on the way, in the row (an aggregate's counts are not a run's).
  const std::string loss = b.value("run_type", "") == "aggregate"
                               ? ""
                               : loss_summary(number_or(b, "messages_sent", 0), number_or(b, "messages_lost", 0));
  if (!loss.empty()) out_ << "  ! " << loss;
  out_ << (pct ? "  (%)\n" : "\n");
}

void ConsoleReporter::report_entries(const ResultsDocument& doc, size_t first) {
  const json& entries = doc.entries();
  for (size_t i = first; i < entries.size(); ++i) print_row(entries[i]);
  out_.flush();
}

void ConsoleReporter::finalize(const ResultsDocument& doc) {
  for (const LoadKnee& k : doc.knees()) out_ << knee_line(k) << '\n';
  out_.flush();
}

FileReporter::FileReporter(std::string who, std::ostream& err) : who_(std::move(who)), err_(err) {}

void FileReporter::write(const ResultsDocument& doc, bool durable) {
  const auto began = std::chrono::steady_clock::now();
  try {
    write_json_atomic(doc.path(), doc.results(), durable);
    write_json_atomic(doc.hist_path(), doc.histograms(), durable);
    write_error_.clear();
    last_end_ = std::chrono::steady_clock::now();
    last_took_ = last_end_ - began;
  } catch (const std::exception& e) {
    if (write_error_.empty())
      err_ << who_ << ": " << e.what() << " (results kept in memory; trying again after the next point)" << std::endl;
    write_error_ = e.what();
  }
}

}  // namespace rdmasweep
