#include "bench/reporter.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "core/clock.hpp"

namespace rdmasweep {

using nlohmann::json;

std::string hist_path_for(const std::string& out) {
  const std::string ext = ".json";
  std::string base = out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0
                         ? out.substr(0, out.size() - ext.size())
                         : out;
  return base + ".hist.json";
}

// Strict JSON has no NaN or Infinity: such a figure is written as null.
static json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
// Readers of Google Benchmark JSON do arithmetic on the time fields: never null.
static double time_value(double v) { return std::isfinite(v) ? v : 0; }

SweepReporter::SweepReporter(std::string out_path, json context, const PointStore& store, const std::string& abort_reason,
                             size_t name_width)
    : out_path_(std::move(out_path)),
      hist_path_(hist_path_for(out_path_)),
      store_(store),
      abort_reason_(abort_reason),
      name_width_(name_width) {
  doc_["context"] = std::move(context);
  doc_["benchmarks"] = json::array();
  hist_doc_ = {{"schema_version", kResultsSchemaVersion}, {"results_file", out_path_}, {"points", json::object()}};
}

bool SweepReporter::ReportContext(const Context& ctx) {
  json& c = doc_["context"];
  char date[64];
  std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  c["date"] = date;
  c["executable"] = Context::executable_name ? Context::executable_name : "rdmasweep";
  c["num_cpus"] = ctx.cpu_info.num_cpus;
  c["mhz_per_cpu"] = static_cast<int64_t>(ctx.cpu_info.cycles_per_second / 1e6);
  c["cpu_scaling_enabled"] = ctx.cpu_info.scaling == benchmark::CPUInfo::ENABLED;
  c["load_avg"] = ctx.cpu_info.load_avg;
  c["library_build_type"] = RDMASWEEP_BUILD_TYPE;  // CMake's, as Google Benchmark writes its own
  c["incomplete"] = true;
  write_files();
  return true;
}

void SweepReporter::clear_progress_line() {
  if (isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);
}

void SweepReporter::print_header() {
  std::printf("%-*s %10s %9s %9s %9s %9s %9s %9s %9s\n", static_cast<int>(name_width_), "point", "messages", "Gb/s",
              "Mmsg/s", "min us", "p50 us", "p99 us", "p99.9 us", "max us");
  header_printed_ = true;
}

static double counter(const benchmark::BenchmarkReporter::Run& r, const char* name) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? NAN : it->second.value;
}

void SweepReporter::print_row(const Run& r) {
  if (!header_printed_) print_header();
  std::string name = r.run_name.function_name;
  if (r.run_type == Run::RT_Aggregate) name += "_" + r.aggregate_name;
  if (r.error_occurred) {
    std::printf("%-*s ERROR: %s\n", static_cast<int>(name_width_), name.c_str(), r.error_message.c_str());
    return;
  }
  auto col = [](double v, double scale) {
    char b[32];
    if (std::isnan(v)) std::snprintf(b, sizeof b, "%9s", "-");
    else std::snprintf(b, sizeof b, "%9.3f", v * scale);
    return std::string(b);
  };
  bool pct = r.run_type == Run::RT_Aggregate && r.aggregate_unit == benchmark::kPercentage;
  double gbps = pct ? counter(r, "bytes_per_second") * 100 : counter(r, "bytes_per_second") * 8 / 1e9;
  double mmsg = pct ? counter(r, "items_per_second") * 100 : counter(r, "items_per_second") / 1e6;
  std::printf("%-*s %10.0f %s %s %s %s %s %s %s%s\n", static_cast<int>(name_width_), name.c_str(), counter(r, "messages"),
              col(gbps, 1).c_str(), col(mmsg, 1).c_str(), col(counter(r, "lat_min_us"), 1).c_str(),
              col(counter(r, "lat_p50_us"), 1).c_str(), col(counter(r, "lat_p99_us"), 1).c_str(),
              col(counter(r, "lat_p999_us"), 1).c_str(), col(counter(r, "lat_max_us"), 1).c_str(), pct ? "  (%)" : "");
}

// The ports' own account of the point: raw deltas per side, their normalized view,
// and what flags it (also printed under its row).
static void add_counters(json& b, const PointResult& pr, size_t width) {
  json c = counters_json(pr);
  if (c.is_null()) return;
  b["counters"] = std::move(c);
  std::vector<std::string> flags = point_anomalies(pr);
  if (flags.empty()) return;
  std::string line;
  for (const std::string& f : flags) line += (line.empty() ? "" : ", ") + f;
  std::printf("%-*s ! counters: %s\n", static_cast<int>(width), "", line.c_str());
  b["anomalies"] = flags;
}

void SweepReporter::ReportRuns(const std::vector<Run>& runs) {
  clear_progress_line();
  std::map<std::string, size_t> nth;  // the store keeps a point's successful repetitions, in order
  for (const Run& r : runs) {
    print_row(r);
    const std::string point = r.run_name.function_name;
    const PointResult* this_run = nullptr;
    if (r.run_type == Run::RT_Iteration && !r.error_occurred) {
      auto s = store_.find(point);
      size_t k = nth[point]++;
      if (s != store_.end() && k < s->second.size()) this_run = &s->second[k];
    }
    json b;
    b["name"] = r.run_type == Run::RT_Aggregate ? point + "_" + r.aggregate_name : point;
    b["family_index"] = r.family_index;
    b["per_family_instance_index"] = r.per_family_instance_index;
    b["run_name"] = point;
    b["run_type"] = r.run_type == Run::RT_Iteration ? "iteration" : "aggregate";
    b["repetitions"] = r.repetitions;
    if (r.run_type == Run::RT_Iteration) b["repetition_index"] = r.repetition_index;
    b["threads"] = r.threads;
    if (r.run_type == Run::RT_Aggregate) {
      b["aggregate_name"] = r.aggregate_name;
      b["aggregate_unit"] = r.aggregate_unit == benchmark::kPercentage ? "percentage" : "time";
    }
    // Every field Google Benchmark writes, in every entry: its tools/compare.py reads
    // real_time, cpu_time and time_unit of each entry, failed ones included.
    if (r.error_occurred) {
      ++failed_;
      b["error_occurred"] = true;
      b["error_message"] = r.error_message;
    }
    const bool ratio = r.run_type == Run::RT_Aggregate && r.aggregate_unit == benchmark::kPercentage;
    b["iterations"] = r.error_occurred ? 0 : r.iterations;
    if (r.error_occurred) {
      b["real_time"] = 0.0;
      b["cpu_time"] = 0.0;
    } else {
      // Google Benchmark's CPU timer ran around session.run (setup and handshake
      // too): the CPU of the measured window is the point's cpu_seconds. A cv
      // aggregate's times are ratios, written unscaled as Google Benchmark does.
      const double scale = ratio ? 1 : benchmark::GetTimeUnitMultiplier(r.time_unit);
      b["real_time"] = time_value(ratio ? r.real_accumulated_time : r.GetAdjustedRealTime());
      b["cpu_time"] = time_value(counter(r, "cpu_seconds") * scale);
    }
    b["time_unit"] = benchmark::GetTimeUnitString(r.time_unit);
    if (!r.error_occurred)
      for (const auto& [k, c] : r.counters) b[k] = number(c.value);
    if (!r.report_label.empty()) b["label"] = r.report_label;
    if (this_run) add_counters(b, *this_run, name_width_);
    doc_["benchmarks"].push_back(std::move(b));

    // Histograms: one per point, merged over its repetitions.
    auto it = store_.find(point);
    if (r.run_type == Run::RT_Iteration && it != store_.end() && !hist_doc_["points"].contains(point)) {
      json p;
      Histogram merged;
      bool lat = false;
      json per_qp = json::array(), per_qp_lat = json::array(), counters = json::array();
      bool any_counters = false;
      for (const PointResult& pr : it->second) {
        counters.push_back(counters_json(pr));
        any_counters |= !counters.back().is_null();
        if (pr.latency) {
          merged.merge(pr.hist);
          lat = true;
          per_qp_lat.push_back({{"min_ns", pr.qp_lat_min_ns}, {"max_ns", pr.qp_lat_max_ns}, {"mean_ns", pr.qp_lat_mean_ns}});
        }
        per_qp.push_back(pr.per_qp);
      }
      p["config"] = it->second.front().cfg;
      p["per_qp_messages"] = per_qp;  // one array per repetition
      if (lat) p["per_qp_latency"] = per_qp_lat;
      if (any_counters) p["counters"] = counters;  // one per repetition
      if (lat) {
        p["latency_kind"] = latency_kind(it->second.front().cfg);
        p["histogram"] = histogram_json(merged);
      }
      hist_doc_["points"][point] = std::move(p);
    }
  }
  std::fflush(stdout);
  write_files();
}

std::string SweepReporter::time_summary() const {
  double setup = 0, measured = 0;
  for (const auto& [name, runs] : store_)
    for (const PointResult& r : runs) {
      setup += r.setup_seconds;
      measured += r.seconds;
    }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char b[160];
  std::snprintf(b, sizeof b, "wall %.1f s: setup %.2f s (%.1f%%), measurement %.2f s (%.1f%%)", wall, setup,
                wall > 0 ? 100 * setup / wall : 0, measured, wall > 0 ? 100 * measured / wall : 0);
  return b;
}

void SweepReporter::Finalize() {
  ticks::check_at_end(doc_["context"]);
  doc_["context"]["time_summary"] = time_summary();
  doc_["context"]["incomplete"] = !abort_reason_.empty();
  if (!abort_reason_.empty()) doc_["context"]["incomplete_reason"] = abort_reason_;
  write_files();
}

void SweepReporter::write_files() {
  try {
    write_json_atomic(out_path_, doc_);
    write_json_atomic(hist_path_, hist_doc_);
    write_error_.clear();
  } catch (const std::exception& e) {
    if (write_error_.empty()) {
      clear_progress_line();
      std::fprintf(stderr, "rdmasweep: %s (results kept in memory; trying again after the next point)\n", e.what());
    }
    write_error_ = e.what();
  }
}

}  // namespace rdmasweep
