#include "core/results/perftest_reporter.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <utility>

namespace rdmasweep {

using nlohmann::json;

namespace {

// perftest's REPORT_FMT and REPORT_FMT_LAT (perftest_parameters.h), tabs and all, and
// its REPORT_EXT newline: a parser that splits on whitespace or matches them sees no
// difference.
constexpr const char* kBwRow = " %-7lu    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n";
constexpr const char* kLatRow =
    " %-7lu %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n";

// perftest's MB/sec is 2^20 bytes a second (format_factor 0x100000 in print_report_bw).
constexpr double kMiB = 1024.0 * 1024.0;

// The figure `key` of entry `b`, or NaN when it is absent or null; `missing` collects
// the keys that were.
double figure(const json& b, const std::string& key, std::string& missing) {
  auto it = b.find(key);
  if (it != b.end() && it->is_number()) return it->get<double>();
  missing += (missing.empty() ? "" : ", ") + key;
  return NAN;
}

uint64_t count(double v) { return static_cast<uint64_t>(std::llround(v)); }

// A bandwidth row: ib_*_bw's columns. rdmasweep measures no peak (perftest's is the
// best time per message over any span of its per-message timestamps, which rdmasweep
// does not keep): 0.00 there, as perftest itself prints when it measures none (-N,
// -D, or over 20000 iterations). --bidir: both directions summed, as perftest -b.
std::string bw_row(const json& b, const json& c, std::string& missing) {
  const std::string both = c.value("bidir", false) ? "total_" : "";
  const double messages = figure(b, "messages", missing);
  const double bytes_ps = figure(b, both + "bytes_per_second", missing);
  const double items_ps = figure(b, both + "items_per_second", missing);
  if (!missing.empty()) return "";
  char s[256];
  std::snprintf(s, sizeof s, kBwRow, c.value("size", 0UL), count(messages), 0.0, bytes_ps / kMiB, items_ps / 1e6);
  return s;
}

// A latency row: ib_*_lat's columns, from the point's histogram (one-way for SEND and
// WRITE, round trip for READ and the atomics, as perftest's).
std::string lat_row(const json& b, const json& c, std::string& missing) {
  const double v[] = {figure(b, "messages", missing),     figure(b, "lat_min_us", missing),
                      figure(b, "lat_max_us", missing),   figure(b, "lat_p50_us", missing),
                      figure(b, "lat_mean_us", missing),  figure(b, "lat_stddev_us", missing),
                      figure(b, "lat_p99_us", missing),   figure(b, "lat_p999_us", missing)};
  if (!missing.empty()) return "";
  char s[256];
  std::snprintf(s, sizeof s, kLatRow, c.value("size", 0UL), count(v[0]), v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  return s;
}

// The point's name with its size as "size:*": the points one table holds.
std::string any_size(const std::string& point) {
  const size_t at = point.find("/size:");
  if (at == std::string::npos) return point;
  const size_t end = point.find('/', at + 1);
  return point.substr(0, at) + "/size:*" + (end == std::string::npos ? "" : point.substr(end));
}

}  // namespace

std::string perftest_test_name(const json& c) {
  // perftest's testsStr and atomicTypesStr, and ctx_print_test_info's words after them.
  static const std::map<std::string, std::string> kOps = {{"send", "Send"},
                                                          {"write", "RDMA_Write"},
                                                          {"read", "RDMA_Read"},
                                                          {"cas", "Atomic CMP_AND_SWAP"},
                                                          {"faa", "Atomic FETCH_AND_ADD"}};
  const std::string op = c.value("op", "");
  auto it = kOps.find(op);
  std::string name = it == kOps.end() ? op : it->second;
  if (c.value("mode", "") == "lat") return name + " Latency Test";
  if (c.value("bidir", false)) name += " Bidirectional";
  if (c.value("post_list", 1) > 1) name += " Post List";
  return name + " BW Test";
}

PerftestReporter::PerftestReporter(std::string who, std::ostream& out, std::ostream& err)
    : who_(std::move(who)), out_(out), err_(err) {}

void PerftestReporter::close_table() {
  if (table_.empty()) return;
  out_ << kPerftestLine << '\n';
  table_.clear();
}

void PerftestReporter::print(const json& b) {
  if (b.value("run_type", "") == "aggregate") return;
  const std::string point = b.value("run_name", b.value("name", ""));
  if (b.value("error_occurred", false)) {
    err_ << who_ << ": " << point << ": " << b.value("error_message", "") << '\n';
    return;
  }
  auto c = b.find("config");
  if (c == b.end() || !c->is_object()) {
    err_ << who_ << ": " << point << ": no perftest row (the entry has no config)\n";
    return;
  }
  std::string missing;
  const std::string row = c->value("mode", "") == "lat" ? lat_row(b, *c, missing) : bw_row(b, *c, missing);
  if (row.empty()) {
    err_ << who_ << ": " << point << ": no perftest row (no " << missing << ")\n";
    return;
  }
  const std::string table = any_size(point);
  if (table != table_) {
    close_table();
    out_ << kPerftestLine << "\n                    " << perftest_test_name(*c) << "\n rdmasweep point : " << table << '\n'
         << kPerftestLine << '\n'
         << (c->value("mode", "") == "lat" ? kPerftestLatTitles : kPerftestBwTitles) << '\n';
    table_ = table;
  }
  out_ << row;
}

void PerftestReporter::report_entries(const ResultsDocument& doc, size_t first) {
  const json& entries = doc.entries();
  for (size_t i = first; i < entries.size(); ++i) print(entries[i]);
  out_.flush();
  err_.flush();
}

void PerftestReporter::finalize(const ResultsDocument&) {
  close_table();
  out_.flush();
}

}  // namespace rdmasweep
