#include "bench/sweep_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/config/knobs.hpp"
#include "core/setup/sizing.hpp"

namespace rdmasweep {

using nlohmann::json;

namespace {

uint64_t payload(const TestConfig& c) { return is_atomic(c.work.op) ? kAtomicBytes : c.work.size; }

// One message one way, whatever the mode.
double one_way_seconds(const TestConfig& c, const PlanRates& r) {
  return r.per_message + static_cast<double>(payload(c)) / r.bytes_per_second;
}

// Messages one run of `c` sends by count: the warm-up's, and the measured ones of an --iters point.
uint64_t counted_messages(const TestConfig& c) {
  return total_qps(c) * (c.work.warmup + (c.work.duration > 0 ? 0 : c.work.iters));
}

// A point's QP setup: a new shape's, or a point's on the QPs before it.
double setup_seconds(const TestConfig& c, bool new_qps, const PlanRates& r) {
  return new_qps ? r.new_qps + r.per_qp * static_cast<double>(total_qps(c)) : r.reused;
}

// y = a + b x by least squares; false unless two xs differ and a, b come out positive.
bool fit_line(const std::vector<std::pair<double, double>>& xy, double* a, double* b) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : xy) n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  const double d = n * sxx - sx * sx;
  if (n < 2 || d <= 0) return false;
  *b = (n * sxy - sx * sy) / d;
  *a = (sy - *b * sx) / n;
  return *a > 0 && *b > 0;
}

// An entry of an earlier run's results that rates can be taken from.
struct Measured {
  TestConfig c;
  double seconds = 0, messages = 0, setup = -1;
  bool reused = false;
};

std::vector<Measured> measured_entries(const json& results) {
  std::vector<Measured> out;
  for (const json& b : results["benchmarks"]) {
    Measured m;
    try {  // an entry of another version, or not of this kind, is left out
      if (!b.is_object() || b.value("run_type", "") != "iteration" || !b.contains("config")) continue;
      from_json(b["config"], m.c);
      m.seconds = b.value("seconds", 0.0);
      m.messages = b.value("messages", 0.0);
      m.setup = b.value("setup_seconds", -1.0);
      m.reused = b.value("reused_qps", 0.0) > 0;
    } catch (const std::exception&) {
      continue;
    }
    if (m.seconds > 0 && m.messages > 0) out.push_back(m);
  }
  return out;
}

}  // namespace

PlanRates rates_from_results(const json& results, const std::string& file) {
  const std::string who = "--plan-from " + file + ": ";
  if (!results.is_object() || !results.contains("benchmarks") || !results["benchmarks"].is_array())
    throw ConfigError(who + "not an rdmasweep results file (no \"benchmarks\" list)");
  const std::vector<Measured> es = measured_entries(results);
  if (es.empty()) throw ConfigError(who + "no measured entry with its config, seconds and messages");
  PlanRates r;
  r.built_in = false;
  // A message's time against its payload, from the bandwidth entries; with one size
  // only, the defaults' shape scaled to what was measured.
  std::vector<std::pair<double, double>> xy;
  for (const Measured& m : es)
    if (m.c.work.mode == Mode::Bw) xy.emplace_back(static_cast<double>(payload(m.c)), m.seconds / m.messages);
  double a = 0, b = 0;
  if (fit_line(xy, &a, &b)) {
    r.per_message = a;
    r.bytes_per_second = 1 / b;
  } else {
    double took = 0, model = 0;
    for (const Measured& m : es) took += m.seconds, model += m.messages * message_seconds(m.c, r);
    r.per_message *= took / model;
    r.bytes_per_second /= took / model;
  }
  double lat_took = 0, lat_one_way = 0;
  for (const Measured& m : es)
    if (m.c.work.mode == Mode::Lat) lat_took += m.seconds, lat_one_way += m.messages * one_way_seconds(m.c, r);
  if (lat_one_way > 0) r.round_trip = lat_took / lat_one_way;
  // Setup: the new shapes' against the model (its cost per QP kept), the reused points' mean.
  double new_took = 0, new_model = 0, reused_took = 0, all_setup = 0;
  int reused_n = 0;
  for (const Measured& m : es) {
    if (m.setup < 0) continue;
    all_setup += m.setup;
    if (m.reused) reused_took += m.setup, ++reused_n;
    else new_took += m.setup, new_model += setup_seconds(m.c, true, r);
  }
  if (new_model > 0) r.new_qps *= new_took / new_model, r.per_qp *= new_took / new_model;
  if (reused_n > 0) r.reused = reused_took / reused_n;
  // What no entry says: the start and each run's own work, from the run's wall_time.
  auto object_at = [](const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : json::object();
  };
  const json ctx = object_at(results, "context"), wt = object_at(ctx, "wall_time");
  auto number = [&wt](const char* key) { return wt.contains(key) && wt[key].is_number(); };
  if (number("wall_seconds") && number("setup_seconds") && number("measured_seconds")) {
    double warmup = 0;
    for (const Measured& m : es) warmup += static_cast<double>(total_qps(m.c) * m.c.work.warmup) * message_seconds(m.c, r);
    const double setup = wt["setup_seconds"].get<double>();
    r.start = std::max(0.0, setup - all_setup);
    r.per_run = std::max(0.0, (wt["wall_seconds"].get<double>() - setup - wt["measured_seconds"].get<double>() - warmup) /
                                  static_cast<double>(es.size()));
  }
  auto text = [&ctx](const char* key) { return ctx.contains(key) && ctx[key].is_string() ? ctx[key].get<std::string>() : "?"; };
  r.source = file + " (" + std::to_string(es.size()) + (es.size() == 1 ? " run" : " runs") + " on " + text("device") + ", " + text("host_name") + ")";
  return r;
}

PlanRates rates_from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("--plan-from " + path + ": cannot read it");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) throw ConfigError("--plan-from " + path + ": not JSON");
  return rates_from_results(j, path);
}

double message_seconds(const TestConfig& c, const PlanRates& r) {
  return one_way_seconds(c, r) * (c.work.mode == Mode::Lat ? r.round_trip : 1);
}

double measuring_seconds(const TestConfig& c, const PlanRates& r) {
  double s = static_cast<double>(counted_messages(c)) * message_seconds(c, r);
  if (c.work.duration > 0) {
    // When the time is up each QP's WRs in flight still complete: a send queue's worth in bandwidth mode.
    const uint64_t in_flight = total_qps(c) * (c.work.mode == Mode::Bw ? c.knobs.tx_depth : 1);
    s += c.work.duration + static_cast<double>(in_flight) * message_seconds(c, r);
  }
  return s;
}

SweepPlan plan_sweep(const std::vector<TestConfig>& points, uint32_t repetitions, const PlanRates& rates) {
  SweepPlan p;
  p.repetitions = std::max<uint32_t>(1, repetitions);
  p.rates = rates;
  p.start_seconds = rates.start;
  const std::vector<uint64_t> slots = plan_slots(points);
  const TestConfig* built = nullptr;  // the point whose QPs are up, as the client's session keeps them
  uint64_t stride = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const TestConfig& c = points[i];
    PlannedPoint pp;
    pp.name = point_name(c);
    pp.new_qps = built == nullptr || !can_reuse(*built, stride, c);
    if (pp.new_qps) stride = message_stride(c, slots[i]);
    built = &c;
    pp.side_bytes = thread_buffer_bytes(c, stride) * c.knobs.threads;
    const double reps = p.repetitions;
    const double setup = setup_seconds(c, pp.new_qps, rates) + (reps - 1) * rates.reused;
    const double messages = static_cast<double>(counted_messages(c)) * message_seconds(c, rates) * reps;
    const double timed = (measuring_seconds(c, rates) * reps) - messages;  // a duration and its drain
    p.setup_seconds += setup;
    p.message_seconds += messages;
    p.duration_seconds += timed;
    p.run_seconds += rates.per_run * reps;
    p.messages += counted_messages(c) * p.repetitions;
    pp.seconds = setup + messages + timed + rates.per_run * reps;
    p.max_side_bytes = std::max(p.max_side_bytes, pp.side_bytes);
    p.points.push_back(std::move(pp));
  }
  p.seconds = p.start_seconds + p.setup_seconds + p.message_seconds + p.duration_seconds + p.run_seconds;
  return p;
}

std::string plan_text(const SweepPlan& p) {
  size_t width = 5;
  size_t new_qps = 0;
  for (const PlannedPoint& pp : p.points) width = std::max(width, pp.name.size()), new_qps += pp.new_qps;
  const int w = static_cast<int>(width);
  char b[512];
  std::string s;
  std::snprintf(b, sizeof b, "rdmasweep plan: %s point(s) x %u repetition(s), QPs set up %s time(s)\n",
                thousands(p.points.size()).c_str(), p.repetitions, thousands(new_qps).c_str());
  s += b;
  std::snprintf(b, sizeof b, "%-*s  %6s  %12s  %10s\n", w, "point", "QPs", "buffers/side", "time");
  s += b;
  for (const PlannedPoint& pp : p.points) {
    std::snprintf(b, sizeof b, "%-*s  %6s  %12s  %10s\n", w, pp.name.c_str(), pp.new_qps ? "new" : "reused",
                  human_bytes(static_cast<double>(pp.side_bytes)).c_str(), human_seconds(pp.seconds).c_str());
    s += b;
  }
  std::snprintf(b, sizeof b,
                "estimated duration: %s: start %s, QP setup %s, %s counted message(s) %s, --duration points %s (and "
                "the messages in flight as each ends), each run's own work %s\n",
                human_seconds(p.seconds).c_str(), human_seconds(p.start_seconds).c_str(),
                human_seconds(p.setup_seconds).c_str(), thousands(p.messages).c_str(),
                human_seconds(p.message_seconds).c_str(), human_seconds(p.duration_seconds).c_str(),
                human_seconds(p.run_seconds).c_str());
  s += b;
  std::snprintf(b, sizeof b, "buffers: at most %s on each side (both pin the same)\n",
                human_bytes(static_cast<double>(p.max_side_bytes)).c_str());
  s += b;
  const PlanRates& r = p.rates;
  s += "rates: " + r.source + "\n";
  std::snprintf(b, sizeof b,
                "  start %.2f s; QP setup %.1f ms a point + %.2f ms a QP, %.1f ms on the QPs before; %.1f ms a run "
                "besides its messages\n  a message %.2f us + its payload at %.1f MB/s; a latency round trip %.2f "
                "messages\n",
                r.start, r.new_qps * 1e3, r.per_qp * 1e3, r.reused * 1e3, r.per_run * 1e3, r.per_message * 1e6,
                r.bytes_per_second / 1e6, r.round_trip);
  s += b;
  if (r.built_in)
    s += "  a hardware NIC moves messages far faster than Soft-RoCE: --plan-from FILE takes the rates from an earlier "
         "run's results on the same hosts\n";
  return s;
}

std::string long_run_line(const SweepPlan& p) {
  std::string s = "rdmasweep: " + thousands(p.points.size()) + (p.points.size() == 1 ? " point" : " points");
  if (p.repetitions > 1) s += " x " + std::to_string(p.repetitions) + " repetitions";
  return s + ", about " + human_seconds(p.seconds) + " (--plan for details)";
}

std::string human_seconds(double s) {
  char b[64];
  if (s < 10) std::snprintf(b, sizeof b, "%.2f s", s);
  else if (s < 120) std::snprintf(b, sizeof b, "%.1f s", s);
  else if (s < 7200) std::snprintf(b, sizeof b, "%.1f min", s / 60);
  else if (s < 172800) std::snprintf(b, sizeof b, "%.1f h", s / 3600);
  else std::snprintf(b, sizeof b, "%.1f days", s / 86400);
  return b;
}

std::string human_bytes(double v) {
  const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (v >= 1024 && i < 4) v /= 1024, ++i;
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %s", v, u[i]);
  return b;
}

std::string thousands(uint64_t n) {
  std::string d = std::to_string(n), s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) s += ',';
    s += d[i];
  }
  return s;
}

}  // namespace rdmasweep
