#include "core/results/records.hpp"

#include "core/config/knobs.hpp"
#include "core/results/document.hpp"

namespace rdmasweep {

using nlohmann::json;

void add_run_figures(json& b, const PointResult& r) {
  b["iterations"] = 1;
  b["real_time"] = r.seconds * 1e3;
  b["cpu_time"] = r.cpu_seconds * 1e3;  // the measured window's, as the client's
  b["time_unit"] = "ms";
  for (const auto& [k, v] : figures(r)) b[k] = json_number(v);
  if (r.latency || r.paced) b["label"] = latency_kind(r.cfg);
}

std::vector<std::string> add_counters(json& b, const PointResult& pr) {
  json c = counters_json(pr);
  if (c.is_null()) return {};
  b["counters"] = std::move(c);
  std::vector<std::string> flags = point_anomalies(pr);
  if (!flags.empty()) b["anomalies"] = flags;
  return flags;
}

json histogram_record(const std::vector<PointResult>& runs) {
  json p;
  Histogram merged, posted;
  bool lat = false, paced = false;
  json per_qp = json::array(), per_qp_lat = json::array(), counters = json::array(), timelines = json::array();
  json per_thread = json::array();
  bool any_counters = false, any_timeline = false;
  for (const PointResult& pr : runs) {
    timelines.push_back(timeline_json(pr.timeline));
    any_timeline |= !pr.timeline.t.empty();
    counters.push_back(counters_json(pr));
    any_counters |= !counters.back().is_null();
    if (pr.latency) {
      merged.merge(pr.hist);
      lat = true;
      per_qp_lat.push_back({{"min_ns", pr.qp_lat_min_ns}, {"max_ns", pr.qp_lat_max_ns}, {"mean_ns", pr.qp_lat_mean_ns}});
    }
    if (pr.paced) {  // from due (hist) and from the post, every message's
      merged.merge(pr.hist);
      if (pr.posted_hist) posted.merge(*pr.posted_hist);
      paced = true;
    }
    per_qp.push_back(pr.per_qp);
    if (!pr.thread_messages.empty()) {
      json t = {{"messages", pr.thread_messages}, {"seconds", pr.thread_seconds}, {"cpu_seconds", pr.thread_cpu_seconds}};
      if (!pr.thread_hist.empty()) {
        t["histogram"] = json::array();  // each thread's latency samples (ns), as the point's histogram
        for (const Histogram& h : pr.thread_hist) t["histogram"].push_back(histogram_json(h));
      }
      per_thread.push_back(std::move(t));
    }
  }
  p["config"] = runs.front().cfg;
  p["per_qp_messages"] = per_qp;  // one array per repetition
  if (!per_thread.empty()) p["per_thread"] = per_thread;  // --threads > 1: one object per repetition
  if (any_counters) p["counters"] = counters;  // one per repetition
  if (any_timeline) p["timeline"] = timelines; // one per repetition
  if (lat) {
    p["per_qp_latency"] = per_qp_lat;
    p["latency_kind"] = latency_kind(runs.front().cfg);
    p["histogram"] = histogram_json(merged);
  }
  if (paced) {
    p["latency_kind"] = latency_kind(runs.front().cfg);
    p["histogram"] = histogram_json(merged);
    p["posted_histogram"] = histogram_json(posted);
  }
  return p;
}

void add_mcast_rates(json& b, const TestConfig& c, double messages, double seconds, double cpu_seconds) {
  b["iterations"] = 1;
  b["real_time"] = seconds * 1e3;
  b["cpu_time"] = cpu_seconds * 1e3;
  b["time_unit"] = "ms";
  b["bytes_per_second"] = seconds > 0 ? messages * static_cast<double>(c.work.size) / seconds : 0;
  b["items_per_second"] = seconds > 0 ? messages / seconds : 0;
  b["messages"] = messages;
  b["bytes"] = messages * static_cast<double>(c.work.size);
  b["seconds"] = seconds;
  b["cpu_seconds"] = cpu_seconds;
}

json add_mcast_receiver(json& b, const TestConfig& c, uint64_t sent, const control::McastArrived& g,
                        const std::string& latency_kind) {
  // The arrivals after the first: what the window from first to last arrival holds.
  add_mcast_rates(b, c, static_cast<double>(g.windowed), g.seconds, g.cpu_seconds);
  const uint64_t lost = sent > g.received ? sent - g.received : 0;
  b["messages_sent"] = sent;
  b["messages_received"] = g.received;
  b["messages_lost"] = lost;
  b["loss_ratio"] = sent > 0 ? static_cast<double>(lost) / static_cast<double>(sent) : 0;
  b["warmup_received"] = g.warmup_received;
  b["late_from_earlier_point"] = g.late;
  b["latency_measured"] = !g.latency.is_null();
  if (g.latency.is_null()) return json();
  for (const auto& [k, v] : g.latency.items()) b[k] = v;
  b["label"] = latency_kind;
  b["latency_before_send"] = g.before_send;
  return {{"config", c}, {"latency_kind", latency_kind}, {"histogram", g.histogram}};
}

control::McastArrived mcast_arrived(const McastReceived& got, bool latency) {
  control::McastArrived a;
  a.received = got.received;
  a.warmup_received = got.warmup_received;
  a.measured = got.measured;
  a.windowed = got.windowed;
  a.late = got.late;
  a.before_send = got.before_send;
  a.seconds = got.seconds;
  a.cpu_seconds = got.cpu_seconds;
  if (latency && got.hist.count() > 0) {
    a.latency = json::object();
    for (const auto& [k, v] : latency_figures(got.hist)) a.latency[k] = v;
    a.histogram = histogram_json(got.hist);
  }
  return a;
}

}  // namespace rdmasweep
