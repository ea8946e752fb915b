// Rank 0's entries, console table and result files for `rdmasweep mesh`: see report.hpp.
#include "bench/mesh/report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "core/results.hpp"

namespace rdmasweep::mesh_detail {

MeshReport::MeshReport(std::string path, json context) : path_(std::move(path)) {
  doc_["context"] = std::move(context);
  doc_["context"]["incomplete"] = true;
  doc_["benchmarks"] = json::array();
  hist_path_ = path_;
  const std::string ext = ".json";
  if (hist_path_.size() > ext.size() && hist_path_.compare(hist_path_.size() - ext.size(), ext.size(), ext) == 0)
    hist_path_.resize(hist_path_.size() - ext.size());
  hist_path_ += ".hist.json";
  hist_doc_ = {{"schema_version", kResultsSchemaVersion}, {"results_file", path_}, {"points", json::object()}};
}

void MeshReport::add(json b, const std::string& flow_label, const json& hist) {
  print_row(b, flow_label);
  if (!hist.is_null()) {
    json& points = hist_doc_["points"];
    const std::string name = b["name"];
    if (!points.contains(name)) {
      points[name] = hist;
    } else {  // another repetition of the flow: one record per flow, as the client keeps one per point
      json& p = points[name];
      for (const char* k : {"per_qp_messages", "per_qp_latency"})
        if (hist.contains(k))
          for (const json& v : hist[k]) p[k].push_back(v);
      if (hist.contains("histogram")) merge_histogram_json(p["histogram"], hist["histogram"]);
    }
  }
  if (!b.value("error_occurred", false)) ++ok_;
  else ++failed_;
  doc_["benchmarks"].push_back(std::move(b));
}

void MeshReport::write(bool final_write, const std::string& incomplete_reason) {
  if (final_write) {
    ticks::check_at_end(doc_["context"]);
    doc_["context"]["incomplete"] = !incomplete_reason.empty();
    if (!incomplete_reason.empty()) doc_["context"]["incomplete_reason"] = incomplete_reason;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char b[64];
    std::snprintf(b, sizeof b, "wall %.1f s", wall);
    doc_["context"]["time_summary"] = b;
  }
  try {
    write_json_atomic(path_, doc_);
    write_json_atomic(hist_path_, hist_doc_);
    write_error_.clear();
  } catch (const std::exception& e) {
    if (write_error_.empty())
      std::fprintf(stderr, "rdmasweep mesh: %s (results kept in memory; trying again after the next point)\n", e.what());
    write_error_ = e.what();
  }
}

void MeshReport::print_row(const json& b, const std::string& flow) {
  if (!header_) {
    std::printf("%-*s %-12s %10s %9s %9s %9s %9s\n", static_cast<int>(width_), "point", "src->dst", "messages", "Gb/s",
                "Mmsg/s", "p50 us", "p99 us");
    header_ = true;
  }
  std::string point = b.value("point", b["name"].get<std::string>());
  const bool pct = b.value("aggregate_unit", "") == "percentage";
  if (b.value("run_type", "") == "aggregate") point += "_" + b["aggregate_name"].get<std::string>();
  if (b.value("error_occurred", false)) {
    std::printf("%-*s %-12s ERROR: %s\n", static_cast<int>(width_), point.c_str(), flow.c_str(),
                b["error_message"].get<std::string>().c_str());
  } else {
    auto col = [&](const char* k, double scale) {
      char s[32];
      if (b.contains(k) && b[k].is_number()) std::snprintf(s, sizeof s, "%9.3f", b[k].get<double>() * scale);
      else std::snprintf(s, sizeof s, "%9s", "-");
      return std::string(s);
    };
    // A cv row's figures are ratios: shown as percentages, as the client shows them.
    std::printf("%-*s %-12s %10.0f %s %s %s %s%s\n", static_cast<int>(width_), point.c_str(), flow.c_str(),
                b["messages"].get<double>() * (pct ? 100 : 1), col("bytes_per_second", pct ? 100 : 8 / 1e9).c_str(),
                col("items_per_second", pct ? 100 : 1 / 1e6).c_str(), col("lat_p50_us", pct ? 100 : 1).c_str(),
                col("lat_p99_us", pct ? 100 : 1).c_str(), pct ? "  (%)" : "");
  }
  std::fflush(stdout);
}

std::string bench_name(Pattern p, const TestConfig& c, const std::string& tail) {
  return std::string("mesh/") + to_string(p) + "/" + point_name(c) + "/" + tail;
}

std::string flow_tail(const Flow& f) { return "src:" + std::to_string(f.src) + "/dst:" + std::to_string(f.dst); }

json base_entry(const std::string& name, EntryPos& at) {
  return {{"name", name},         {"family_index", at.family},        {"per_family_instance_index", at.instance++},
          {"run_name", name},     {"run_type", "iteration"},          {"repetitions", at.repetitions},
          {"repetition_index", at.repetition}, {"threads", 1}};
}

// A figure of `j`, 0 when absent or null (not finite where it was measured).
double number_in(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

void mark_failed(json& b, const std::string& message) {
  b["error_occurred"] = true;
  b["error_message"] = message;
  b["iterations"] = 0;
  b["real_time"] = 0.0;
  b["cpu_time"] = 0.0;
  b["time_unit"] = "ms";
}

json make_context(const MeshOptions& o, const World& w, const std::vector<json>& ranks, size_t points) {
  char date[64];
  std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  const std::string mpi = mpi_library_version();
  return {{"schema_version", kResultsSchemaVersion},
          {"tool", "rdmasweep"},
          {"command", "mesh"},
          {"tool_version", RDMASWEEP_VERSION},
          {"git_revision", RDMASWEEP_GIT_REV},
          {"date", date},
          {"executable", "rdmasweep"},
          {"library_build_type", RDMASWEEP_BUILD_TYPE},
          {"pattern", to_string(o.pattern)},
          {"schedule", o.pattern == Pattern::Pairs ? json(to_string(effective_schedule(o, w.size))) : json(nullptr)},
          {"ranks", w.size},
          {"rank_info", ranks},
          {"host_name", ranks.at(0).value("host", "")},
          {"device", ranks.at(0).value("device", "")},
          {"mpi_library", mpi},
          {"clock", ticks::source_name()},
          {"clock_choice", o.clock},
          {"cq_policy", o.cap_to_cq ? "cap" : "error"},
          {"sweep_file", o.config_file},
          {"sweep", sweep_json(o.spec)},  // every knob, as a sweep file
          {"points", points},
          {"rate_note", "per-flow rates are measured by the flow's initiator over its own window; a .../total entry's "
                        "rates are all its flows' bytes and messages over the union of their windows on a common clock "
                        "(zero at a barrier before the flows start), and sum_of_flow_bytes_per_second and "
                        "sum_of_flow_items_per_second are its flows' own rates summed"},
          {"latency_note", "SEND and WRITE latency is one-way (round trip / 2); READ latency is the round trip"},
          {"bytes_note", "bytes are payload bytes (messages x size), not wire bytes"}};
}

void add_flow_entries(MeshReport& report, Pattern pattern, const TestConfig& cfg, EntryPos& at,
                      const std::vector<Flow>& flows, const std::vector<std::string>& gathered,
                      const std::vector<std::string>& hosts, std::vector<json>& point_entries) {
  std::map<std::pair<int, int>, json> result_of;
  std::map<std::pair<int, int>, std::string> error_of;
  for (const std::string& g : gathered)
    for (const json& r : json::parse(g)) {
      std::pair<int, int> key{r["src"].get<int>(), r["dst"].get<int>()};
      if (r.contains("error") && !error_of.count(key)) error_of[key] = r["error"];
      if (r.contains("figures")) result_of[key] = r;
    }
  for (const Flow& f : flows) {
    std::pair<int, int> key{f.src, f.dst};
    std::string name = bench_name(pattern, cfg, flow_tail(f));
    json b = base_entry(name, at);
    b["point"] = point_name(cfg);
    json hist;
    if (error_of.count(key) || !result_of.count(key)) {
      mark_failed(b, error_of.count(key) ? error_of[key] : "no result from rank " + std::to_string(f.src));
    } else {
      const json& r = result_of[key];
      const json& fig = r["figures"];
      b["iterations"] = 1;
      b["real_time"] = number_in(fig, "seconds") * 1e3;
      b["cpu_time"] = number_in(fig, "cpu_seconds") * 1e3;  // the measured window's, as the client's
      b["time_unit"] = "ms";
      for (const auto& [k, v] : fig.items()) b[k] = v;
      if (r.contains("window")) {  // seconds from the phase's common zero (after a barrier)
        b["window_start_seconds"] = r["window"][0];
        b["window_end_seconds"] = r["window"][1];
      }
      if (cfg.work.mode == Mode::Lat) b["label"] = latency_kind(cfg);
      hist = r["hist"];
    }
    b["src_rank"] = f.src;
    b["dst_rank"] = f.dst;
    b["phase"] = at.phase;
    b["src_host"] = hosts[f.src];
    b["dst_host"] = hosts[f.dst];
    point_entries.push_back(b);
    report.add(b, std::to_string(f.src) + "->" + std::to_string(f.dst), hist);
  }
}

json total_entry(Pattern pattern, const TestConfig& cfg, EntryPos& at, const std::vector<json>& entries) {
  json b = base_entry(bench_name(pattern, cfg, "total"), at);
  b["point"] = point_name(cfg);
  // The flows' windows on the phase's common clock: the aggregate rate is all bytes
  // over their union, never more than the flows' own rates summed (which counts a
  // byte as fast as its flow however the flows' windows were staggered).
  double start = INFINITY, end = -INFINITY, sum_bps = 0, sum_ips = 0, msgs = 0, bytes = 0, cpu = 0;
  size_t ok = 0;
  for (const json& e : entries) {
    if (e.value("error_occurred", false)) continue;
    ++ok;
    sum_bps += number_in(e, "bytes_per_second");
    sum_ips += number_in(e, "items_per_second");
    msgs += number_in(e, "messages");
    bytes += number_in(e, "bytes");
    cpu += number_in(e, "cpu_seconds");
    start = std::min(start, number_in(e, "window_start_seconds"));
    end = std::max(end, number_in(e, "window_end_seconds"));
  }
  if (ok != entries.size() || entries.empty()) {
    mark_failed(b, std::to_string(entries.size() - ok) + " of " + std::to_string(entries.size()) + " flows failed");
    return b;
  }
  const double secs = std::max(0.0, end - start);
  b["iterations"] = 1;
  b["real_time"] = secs * 1e3;
  b["cpu_time"] = cpu * 1e3;  // every flow's initiator, summed
  b["time_unit"] = "ms";
  b["bytes_per_second"] = secs > 0 ? bytes / secs : 0;
  b["items_per_second"] = secs > 0 ? msgs / secs : 0;
  b["messages"] = msgs;
  b["bytes"] = bytes;
  b["seconds"] = secs;
  b["window_start_seconds"] = start;
  b["window_end_seconds"] = end;
  b["cpu_seconds"] = cpu;
  // Each flow's rate over its own window, summed: more than bytes / seconds when the
  // flows did not start and end together.
  b["sum_of_flow_bytes_per_second"] = sum_bps;
  b["sum_of_flow_items_per_second"] = sum_ips;
  b["flows"] = entries.size();
  b["src_rank"] = -1;
  b["dst_rank"] = -1;
  return b;
}

namespace {

// Sample statistics as Google Benchmark computes them (stddev with n - 1; cv = stddev / mean).
double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}
double cv_of(const std::vector<double>& v) {
  double m = mean_of(v);
  return v.size() < 2 || m == 0 ? 0 : stddev_of(v) / m;
}

// Fields that say where an entry sits or what it is, not what it measured.
bool is_figure(const std::string& k) {
  static const std::set<std::string> identity = {"family_index", "per_family_instance_index", "repetitions",
                                                  "repetition_index", "threads", "iterations", "src_rank",
                                                  "dst_rank", "flows"};
  return !identity.count(k);
}

}  // namespace

std::vector<json> aggregate_entries(const std::vector<json>& runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const json*>> ok;
  for (const json& r : runs) {
    const std::string name = r["name"];
    if (!ok.count(name)) order.push_back(name);
    auto& v = ok[name];
    if (!r.value("error_occurred", false)) v.push_back(&r);
  }
  struct Stat {
    const char* name;
    const char* unit;
    double (*fn)(const std::vector<double>&);
  };
  static const Stat stats[] = {{"mean", "time", mean_of},
                               {"median", "time", [](const std::vector<double>& v) { return median_of(v); }},
                               {"stddev", "time", stddev_of},
                               {"cv", "percentage", cv_of}};
  std::vector<json> out;
  for (const std::string& name : order) {
    const std::vector<const json*>& rs = ok[name];
    if (rs.size() < 2) continue;
    const json& first = *rs.front();
    for (const Stat& st : stats) {
      json a = {{"name", name + "_" + st.name},
                {"family_index", first["family_index"]},
                {"per_family_instance_index", first["per_family_instance_index"]},
                {"run_name", name},
                {"run_type", "aggregate"},
                {"repetitions", first["repetitions"]},
                {"threads", 1},
                {"aggregate_name", st.name},
                {"aggregate_unit", st.unit},
                {"iterations", rs.size()}};
      for (const auto& [k, v] : first.items()) {
        if (a.contains(k) || k == "repetition_index") continue;
        if (!v.is_number() || !is_figure(k)) {
          a[k] = v;  // point, label, hosts, ranks, time_unit: the same in every run
          continue;
        }
        std::vector<double> xs;
        for (const json* r : rs)
          if (r->contains(k) && (*r)[k].is_number()) xs.push_back((*r)[k].get<double>());
        a[k] = xs.empty() ? json(nullptr) : json(st.fn(xs));
      }
      out.push_back(std::move(a));
    }
  }
  return out;
}

}  // namespace rdmasweep::mesh_detail
