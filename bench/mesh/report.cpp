// Rank 0's entries for `rdmasweep mesh`: see report.hpp.
#include "bench/mesh/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/config/knobs.hpp"
#include "core/measure/clock.hpp"
#include "core/point/measured_run.hpp"
#include "core/results/context.hpp"
#include "core/results/model.hpp"
#include "core/version.hpp"

namespace rdmasweep::mesh_detail {

std::string bench_name(Pattern p, const TestConfig& c, const std::string& tail) {
  return std::string("mesh/") + to_string(p) + "/" + point_name(c) + "/" + tail;
}

std::string flow_tail(const Flow& f) { return "src:" + std::to_string(f.src) + "/dst:" + std::to_string(f.dst); }

const TestConfig& flow_config(const Flow& f, const TestConfig& point, const TestConfig* background) {
  return f.background && background != nullptr ? *background : point;
}

std::string flow_entry_name(Pattern p, const Flow& f, const TestConfig& point, const TestConfig* background) {
  if (f.background && background != nullptr) return bench_name(p, *background, flow_tail(f) + "/background");
  return bench_name(p, point, flow_tail(f) + (background != nullptr ? "/beside" : ""));
}

// --pattern victim: the victim's window must end before every background flow's did
// (each began at the phase's common zero, its warm-up being traffic too); "" when it did.
static std::string outside_background(const json& victim, const std::vector<json>& background, size_t flows) {
  if (background.size() != flows) return "a background flow failed: not measured beside them all";
  if (!victim.contains("window")) return "";
  const double end = victim["window"][1].get<double>();
  for (const json& b : background)
    if (!b.contains("window") || b["window"][1].get<double>() < end)
      return "the background flows' traffic ended before this flow's window did (it ran slower beside them than "
             "10x alone): not counted as beside them";
  return "";
}

json base_entry(const std::string& name, EntryPos& at, const TestConfig& cfg) {
  EntryPlace place;
  place.name = place.run_name = name;
  place.family = at.family;
  place.instance = at.instance++;
  place.repetitions = at.repetitions;
  place.repetition = at.repetition;
  json b = entry_head(place);
  b["point"] = point_name(cfg);
  b["config"] = cfg;
  return b;
}

// A figure of `j`, 0 when absent or null (not finite where it was measured).
double number_in(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

json make_context(const MeshOptions& o, const World& w, const std::vector<json>& ranks, size_t points,
                  const control::Hello& me, uint32_t port) {
  const SweepContext sw{o.config_file, sweep_json(o.spec), points, o.clock, o.cap_to_cq};
  json c = results_context(RunContext{"mesh", me, port, {}, o.interval}, &sw);
  c["pattern"] = to_string(o.pattern);
  c["schedule"] = o.pattern == Pattern::Pairs ? json(to_string(effective_schedule(o, w.size))) : json(nullptr);
  c["ranks"] = w.size;
  c["rank_info"] = ranks;
  c["mpi_library"] = mpi_library_version();
  c["rate_note"] =
      "per-flow rates are measured by the flow's initiator over its own window; a .../total entry's rates are all its "
      "flows' bytes and messages over the union of their windows on a common clock (zero at a barrier before the "
      "flows start), and sum_of_flow_bytes_per_second and sum_of_flow_items_per_second are its flows' own rates summed";
  return c;
}

// Each end's port counters over the phase: the source rank's as `client`, the
// destination's as `server`. A rank in several flows of a phase shares its port's
// counts among them (`shared_by_flows`).
static void add_port_counters(json& b, json& hist, const std::map<std::pair<int, int>, PointResult>& counters_of,
                              const std::map<std::pair<int, int>, json>& sharing_of, std::pair<int, int> key) {
  auto it = counters_of.find(key);
  if (it == counters_of.end()) return;
  json c = counters_json(it->second);
  c["shared_by_flows"] = sharing_of.at(key);
  if (!b.value("error_occurred", false))
    for (const auto& [k, v] : counter_figures(it->second)) b[k] = v;
  std::vector<std::string> flags = point_anomalies(it->second);
  if (!flags.empty()) b["anomalies"] = flags;
  if (hist.is_object()) hist["counters"] = json::array({c});
  b["counters"] = std::move(c);
}

// A flow's figures (from its initiator's rank) into its entry; returns its histogram record.
static json take_flow_result(json& b, const json& r, const TestConfig& cfg) {
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
  return r["hist"];
}

void add_flow_entries(MeshReport& report, Pattern pattern, const TestConfig& cfg, EntryPos& at,
                      const std::vector<Flow>& flows, const std::vector<std::string>& gathered,
                      const std::vector<std::string>& hosts, std::vector<json>& point_entries,
                      const std::set<int>& gone, const TestConfig* background) {
  std::map<std::pair<int, int>, json> result_of;
  std::map<std::pair<int, int>, std::string> error_of;
  std::map<std::pair<int, int>, PointResult> counters_of;  // each end's rank's port, as client and server
  std::map<std::pair<int, int>, json> sharing_of;
  for (const std::string& g : gathered)
    for (const json& r : json::parse(g)) {
      std::pair<int, int> key{r["src"].get<int>(), r["dst"].get<int>()};
      if (r.contains("error") && !error_of.count(key)) error_of[key] = r["error"];
      if (r.contains("figures")) result_of[key] = r;
      if (r.contains("port")) {
        const bool ini = r["initiator"].get<bool>();
        PointResult& pr = counters_of[key];
        (ini ? pr.has_client_counters : pr.has_server_counters) = true;
        (ini ? pr.client_counters : pr.server_counters) = r["port"]["counters"].get<CounterValues>();
        sharing_of[key][ini ? "client" : "server"] = r["port"]["flows"];
      }
    }
  std::vector<json> background_results;
  size_t background_flows = 0;
  for (const Flow& f : flows) {
    background_flows += f.background;
    if (f.background && result_of.count({f.src, f.dst})) background_results.push_back(result_of[{f.src, f.dst}]);
  }
  for (const Flow& f : flows) {
    std::pair<int, int> key{f.src, f.dst};
    const TestConfig& fc = flow_config(f, cfg, background);
    json b = base_entry(flow_entry_name(pattern, f, cfg, background), at, fc);
    const bool victim = background != nullptr && !f.background;
    if (victim) {
      b["point"] = point_name(cfg) + "/beside";  // its own row in the table, its own heatmap
      b["background"] = point_name(*background);
    }
    json hist;
    std::vector<int> gone_ends;
    for (int r : {f.src, f.dst})
      if (gone.count(r)) gone_ends.push_back(r);
    if (!gone_ends.empty() && !result_of.count(key)) {
      // Named first: the other end's error (a timeout) is only the consequence.
      std::string why = describe_ranks(gone_ends, hosts) + " stopped answering during this phase (stopped, killed, "
                        "or its host, device or link gone)";
      mark_failed(b, error_of.count(key) ? why + "; " + error_of[key] : why);
    } else if (error_of.count(key) || !result_of.count(key)) {
      mark_failed(b, error_of.count(key) ? error_of[key] : "no result from rank " + std::to_string(f.src));
    } else if (const std::string why = victim ? outside_background(result_of[key], background_results, background_flows) : "";
               !why.empty()) {
      mark_failed(b, why);
    } else {
      hist = take_flow_result(b, result_of[key], fc);
    }
    add_port_counters(b, hist, counters_of, sharing_of, key);
    b["src_rank"] = f.src;
    b["dst_rank"] = f.dst;
    b["phase"] = at.phase;
    b["src_host"] = hosts[f.src];
    b["dst_host"] = hosts[f.dst];
    point_entries.push_back(b);
    report.add(b, hist);
  }
}

json total_entry(Pattern pattern, const TestConfig& cfg, EntryPos& at, const std::vector<json>& entries) {
  json b = base_entry(bench_name(pattern, cfg, "total"), at, cfg);
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

}  // namespace rdmasweep::mesh_detail
