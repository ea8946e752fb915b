#include "bench/hunt/space.hpp"

#include "core/config/knobs.hpp"
#include "core/host/counters.hpp"

#include <algorithm>
#include <cstring>

namespace rdmasweep::hunt {

using nlohmann::json;

Space Space::defaults() {
  Space s;
  SweepSpec& a = s.axes;
  a.op = {"send", "write", "read"};
  a.mode = {"bw", "lat"};
  a.qps = {1, 2, 4, 8, 16};
  a.size.clear();
  for (uint64_t v = 64; v <= 65536; v *= 2) a.size.push_back(v);
  a.tx_depth = {16, 64, 128, 512};
  a.rx_depth = {64, 512};
  a.post_list = {1, 4, 16};
  a.signal_every = {1, 32};
  a.poll_batch = {1, 16};
  a.srq = {0, 1};
  a.events = {0, 1};
  a.threads = {1, 2};
  a.cq_scope = {"thread", "process"};
  a.duration = 0.2;  // seconds per measured point: short, so the budget covers many
  a.warmup = 16;
  a.description = "rdmasweep hunt's default space";
  return s;
}

static std::vector<std::string> counter_names() {
  std::vector<std::string> n;
  for (const NormalizedCounter& c : counter_map()) n.push_back(c.name);
  return n;
}

static double number(const json& v, const std::string& key, double lo, double hi) {
  if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
    throw ConfigError("--space: " + key + ": must be a number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return v.get<double>();
}

static void apply_thresholds(Thresholds& t, const json& j) {
  if (!j.is_object()) throw ConfigError("--space: thresholds: must be an object");
  for (const auto& [k, v] : j.items()) {
    if (k == "throughput_fraction") t.throughput_fraction = number(v, k, 0, 1);
    else if (k == "latency_multiple") t.latency_multiple = number(v, k, 1, 1e6);
    else if (k == "isolation_slowdown") t.isolation_slowdown = number(v, k, 0, 1);
    else if (k == "counters") {
      if (!v.is_object()) throw ConfigError("--space: thresholds.counters: must be an object of per-message limits");
      const std::vector<std::string> known = counter_names();
      for (const auto& [c, lim] : v.items()) {
        if (std::find(known.begin(), known.end(), c) == known.end())
          throw ConfigError("--space: thresholds.counters: '" + c + "' is not a normalized counter (docs/results.md)");
        if (lim.is_null()) t.counters.erase(c);  // null: not an oracle
        else t.counters[c] = number(lim, "thresholds.counters." + c, 0, 1e9);
      }
    } else {
      throw ConfigError("--space: thresholds: unknown key '" + k + "'");
    }
  }
}

Space Space::from_json(const json& j, Space s) {
  if (!j.is_object()) throw ConfigError("--space: the file must hold a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (k == "axes") {
      // The file's axes are the space: a knob it does not name stays at its default.
      SweepSpec axes;
      axes.duration = s.axes.duration;
      axes.warmup = s.axes.warmup;
      apply_json(axes, v);
      s.axes = axes;
    }
    else if (k == "thresholds") apply_thresholds(s.thresholds, v);
    else if (k == "repetitions") s.repetitions = static_cast<uint32_t>(number(v, k, 1, 100));
    else if (k == "must_hold") s.must_hold = static_cast<uint32_t>(number(v, k, 1, 100));
    else if (k == "aggressor_share") s.aggressor_share = number(v, k, 0, 1);
    else if (k == "explore_share") s.explore_share = number(v, k, 0.05, 0.95);
    else if (k != "description") throw ConfigError("--space: unknown key '" + k + "'");
  }
  if (!j.contains("must_hold")) s.must_hold = s.repetitions;
  if (s.must_hold > s.repetitions) throw ConfigError("--space: must_hold is more than repetitions");
  if (s.axes.duration <= 0) throw ConfigError("--space: axes.duration: hunt measures every point for a duration (> 0 s)");
  return s;
}

json Space::to_json() const {
  json c = json::object();
  for (const auto& [k, v] : thresholds.counters) c[k] = v;
  return {{"axes", sweep_json(axes)},
          {"thresholds",
           {{"throughput_fraction", thresholds.throughput_fraction},
            {"latency_multiple", thresholds.latency_multiple},
            {"isolation_slowdown", thresholds.isolation_slowdown},
            {"counters", c}}},
          {"repetitions", repetitions},
          {"must_hold", must_hold},
          {"aggressor_share", aggressor_share},
          {"explore_share", explore_share}};
}

std::vector<const Knob*> Space::searched() const {
  std::vector<const Knob*> out;
  for (const Knob& k : knobs())
    if (k.axis(axes).size() > 1) out.push_back(&k);
  std::stable_sort(out.begin(), out.end(), [](const Knob* a, const Knob* b) { return a->nest < b->nest; });
  return out;
}

std::string Candidate::key() const {
  return point_name(point) + (aggressor ? " beside " + point_name(*aggressor) : "");
}

Sampler::Sampler(const Space& s, uint64_t seed, std::function<bool(const TestConfig&)> usable)
    : space_(s), knobs_(s.searched()), rng_(seed), usable_(std::move(usable)) {}

bool Sampler::valid(const TestConfig& c) const {
  if (c.knobs.srq && c.work.op != Op::Send) return false;       // only SEND has receive queues to share
  if (c.knobs.threads == 1 && c.knobs.cq_scope == CqScope::Process) return false;  // the same as thread
  try {
    validate(c);
  } catch (const ConfigError&) {
    return false;
  }
  return !usable_ || usable_(c);
}

TestConfig Sampler::base() const {
  TestConfig c;
  for (const Knob& k : knobs()) k.set(c, k.axis(space_.axes).front());
  c.work.duration = space_.axes.duration;
  c.work.warmup = space_.axes.warmup;
  c.work.iters = space_.axes.iters;
  return c;
}

TestConfig Sampler::random_point() {
  for (int tries = 0; tries < 1000; ++tries) {
    TestConfig c = base();
    for (const Knob* k : knobs_) {
      std::vector<uint64_t> a = k->axis(space_.axes);
      k->set(c, a[std::uniform_int_distribution<size_t>(0, a.size() - 1)(rng_)]);
    }
    if (valid(c)) return c;
  }
  TestConfig c = base();
  if (!valid(c)) throw ConfigError("--space: no valid point found: the axes' values do not combine (" + point_name(c) + ")");
  return c;
}

std::optional<TestConfig> Sampler::aggressor() {
  TestConfig a = random_point();
  a.work.mode = Mode::Bw;  // an aggressor floods; it is measured too, but judged only by its effect
  if (valid(a)) return a;
  return std::nullopt;
}

Candidate Sampler::random() {
  Candidate c{random_point(), std::nullopt};
  if (uniform() < space_.aggressor_share) c.aggressor = aggressor();
  return c;
}

Candidate Sampler::neighbour(const Candidate& from) {
  if (space_.aggressor_share > 0 && uniform() < 0.1) {
    Candidate c = from;
    if (c.aggressor) c.aggressor.reset();
    else c.aggressor = aggressor();
    if (c.aggressor.has_value() != from.aggressor.has_value()) return c;
  }
  for (int tries = 0; tries < 200 && !knobs_.empty(); ++tries) {
    const Knob* k = knobs_[std::uniform_int_distribution<size_t>(0, knobs_.size() - 1)(rng_)];
    std::vector<uint64_t> a = k->axis(space_.axes);
    size_t at = std::find(a.begin(), a.end(), k->get(from.point)) - a.begin();
    // Ordered knobs step to an adjacent value; named ones jump anywhere.
    size_t to = named_kind(k->kind) || at == a.size()
                    ? std::uniform_int_distribution<size_t>(0, a.size() - 1)(rng_)
                    : (at == 0 ? 1 : at + 1 == a.size() ? at - 1 : (uniform() < 0.5 ? at - 1 : at + 1));
    if (to == at) continue;
    Candidate c = from;
    k->set(c.point, a[to]);
    if (valid(c.point)) return c;
  }
  return random();
}

static bool fewer_is_simpler(const Knob& k) {
  for (const char* key : {"qps", "threads", "size", "tx_depth", "rx_depth"})
    if (std::strcmp(k.key, key) == 0) return true;
  return false;
}

bool comparison_knob(const Knob& k) { return fewer_is_simpler(k); }

uint64_t shrink_target(const Knob& k, const std::vector<uint64_t>& axis) {
  if (fewer_is_simpler(k)) return *std::min_element(axis.begin(), axis.end());
  if (std::find(axis.begin(), axis.end(), k.def) != axis.end()) return k.def;
  // The axis value nearest the default.
  return *std::min_element(axis.begin(), axis.end(), [&](uint64_t a, uint64_t b) {
    auto d = [&](uint64_t v) { return v > k.def ? v - k.def : k.def - v; };
    return d(a) < d(b);
  });
}

std::vector<uint64_t> shrink_path(const Knob& k, const std::vector<uint64_t>& axis, uint64_t current) {
  const uint64_t target = shrink_target(k, axis);
  if (named_kind(k.kind) || k.kind == KnobKind::Flag) return current == target ? std::vector<uint64_t>{current}
                                                                               : std::vector<uint64_t>{target, current};
  std::vector<uint64_t> path;
  for (uint64_t v : axis)
    if ((v >= target && v <= current) || (v <= target && v >= current)) path.push_back(v);
  std::sort(path.begin(), path.end());
  if (current < target) std::reverse(path.begin(), path.end());
  if (std::find(path.begin(), path.end(), current) == path.end()) path.push_back(current);
  return path;
}

}  // namespace rdmasweep::hunt
