#include "bench/hunt/oracles.hpp"

#include <algorithm>
#include <cstdio>

namespace rdmasweep::hunt {

using nlohmann::json;

json Finding::to_json() const {
  json j = {{"oracle", oracle}, {"score", score}, {"value", value}, {"limit", limit}, {"evidence", evidence}};
  if (reference) {
    j["reference"] = point_name(*reference);
    j["reference_value"] = reference_value;
  }
  return j;
}

double top_score(const std::vector<Finding>& f) {
  double s = 0;
  for (const Finding& x : f) s = std::max(s, x.score);
  return s;
}

static uint64_t all_qps(const TestConfig& c) { return total_qps(c); }

bool is_reference(const std::string& oracle, const TestConfig& c, const TestConfig& ref) {
  bool same = true;
  for (const Knob& k : knobs()) {
    if (k.get(c) == k.get(ref)) continue;
    if (!comparison_knob(k)) return false;
    same = false;
  }
  if (same) return false;  // a point is not its own reference
  if (oracle == "throughput")
    return c.work.mode == Mode::Bw && ref.work.size <= c.work.size && all_qps(ref) <= all_qps(c) &&
           ref.knobs.tx_depth <= c.knobs.tx_depth && ref.knobs.rx_depth <= c.knobs.rx_depth;
  if (oracle == "latency")
    return c.work.mode == Mode::Lat && ref.work.size >= c.work.size && all_qps(ref) >= all_qps(c);
  return false;
}

static std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

static std::optional<Finding> relative(const std::string& oracle, const Measurement& m,
                                       const TestConfig& ref, const Measurement& rm, const Thresholds& t) {
  if (!m.ok || !rm.ok) return std::nullopt;
  Finding f;
  f.oracle = oracle;
  f.reference = ref;
  if (oracle == "throughput") {
    if (rm.byte_rate <= 0) return std::nullopt;
    f.value = m.byte_rate;
    f.reference_value = rm.byte_rate;
    f.limit = t.throughput_fraction * rm.byte_rate;
    f.score = f.value > 0 ? f.limit / f.value : 1e9;
    f.evidence = fmt("%.3g MB/s, below %.2f x the %.3g MB/s of ", f.value / 1e6, t.throughput_fraction,
                     f.reference_value / 1e6) + point_name(ref) + " (no larger messages, no more QPs or depth)";
  } else {
    if (!std::isfinite(m.p99_us) || !std::isfinite(rm.p99_us) || rm.p99_us <= 0) return std::nullopt;
    f.value = m.p99_us;
    f.reference_value = rm.p99_us;
    f.limit = t.latency_multiple * rm.p99_us;
    f.score = f.value / f.limit;
    f.evidence = fmt("p99 %.3g us, above %.3g x the p99 %.3g us of ", f.value, t.latency_multiple, f.reference_value) +
                 point_name(ref) + " (no smaller messages, no fewer QPs)";
  }
  return f;
}

static std::optional<Finding> counter(const std::string& name, double limit, const Measurement& m) {
  if (!m.ok || !m.has_counters || m.messages <= 0) return std::nullopt;
  auto it = m.counters.find(name);
  if (it == m.counters.end()) return std::nullopt;
  Finding f;
  f.oracle = "counters:" + name;
  f.value = it->second / m.messages;
  f.limit = limit;
  // A limit of 0 flags any count; the score still grows with the count.
  f.score = limit > 0 ? f.value / limit : (it->second > 0 ? 1 + f.value : 0);
  f.evidence = name + fmt("=%.0f over %.0f messages", it->second, m.messages) +
               fmt(" (%.4g per message; limit %.4g)", f.value, limit);
  return f;
}

static std::optional<Finding> isolation(const Candidate& c, const Measurement& m, const Thresholds& t) {
  if (!c.aggressor || !m.ok || !std::isfinite(m.beside_rate) || m.msg_rate <= 0) return std::nullopt;
  Finding f;
  f.oracle = "isolation";
  f.value = 1 - m.beside_rate / m.msg_rate;  // slowdown
  f.limit = t.isolation_slowdown;
  f.score = f.limit > 0 ? f.value / f.limit : (f.value > 0 ? 1 : 0);
  f.reference = *c.aggressor;
  f.reference_value = m.beside_rate;
  f.evidence = fmt("%.3g msg/s alone, %.3g msg/s beside ", m.msg_rate, m.beside_rate) + point_name(*c.aggressor) +
               fmt(": %.0f%% slower (limit %.0f%%)", 100 * f.value, 100 * f.limit);
  return f;
}

std::vector<Finding> judge(const Candidate& c, const Measurement& m, const std::vector<Observed>& history,
                           const Thresholds& t) {
  std::vector<Finding> out;
  for (const char* oracle : {"throughput", "latency"}) {
    std::optional<Finding> best;
    for (const Observed& h : history) {
      if (h.cand.aggressor || !is_reference(oracle, c.point, h.cand.point)) continue;
      std::optional<Finding> f = relative(oracle, m, h.cand.point, h.m, t);
      if (f && (!best || f->score > best->score)) best = f;
    }
    if (best) out.push_back(*best);
  }
  for (const auto& [name, limit] : t.counters)
    if (std::optional<Finding> f = counter(name, limit, m)) out.push_back(*f);
  if (std::optional<Finding> f = isolation(c, m, t)) out.push_back(*f);
  return out;
}

std::optional<Finding> rejudge(const std::string& oracle, const Candidate& c, const Measurement& m,
                               const TestConfig* ref, const Measurement* ref_m, const Thresholds& t) {
  if (oracle == "throughput" || oracle == "latency") {
    if (!ref || !ref_m || !is_reference(oracle, c.point, *ref)) return std::nullopt;
    return relative(oracle, m, *ref, *ref_m, t);
  }
  if (oracle == "isolation") return isolation(c, m, t);
  const std::string prefix = "counters:";
  if (oracle.rfind(prefix, 0) == 0) {
    auto it = t.counters.find(oracle.substr(prefix.size()));
    if (it != t.counters.end()) return counter(it->first, it->second, m);
  }
  return std::nullopt;
}

}  // namespace rdmasweep::hunt
