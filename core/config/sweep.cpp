#include "core/config/sweep.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/config/knobs.hpp"

namespace rdmasweep {

using nlohmann::json;

const std::vector<std::string>& sweep_axes() {
  static const std::vector<std::string> axes = [] {
    std::vector<std::string> a(kKnobCount);
    for (const Knob& k : knobs()) a.at(static_cast<size_t>(k.nest)) = k.key;
    return a;
  }();
  return axes;
}

const std::vector<std::string>& sweep_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = sweep_axes();
    for (const char* s : {"iters", "duration", "warmup", "repetitions", "description"}) k.push_back(s);
    return k;
  }();
  return keys;
}

json sweep_json(const SweepSpec& s) {
  json j = {{"iters", s.iters},
            {"duration", s.duration},
            {"warmup", s.warmup},
            {"repetitions", s.repetitions},
            {"description", s.description}};
  for (const Knob& k : knobs()) {
    json a = json::array();
    // As a sweep file gives them: names, "auto", and flags as 0 or 1.
    for (uint64_t v : k.axis(s)) a.push_back(k.kind == KnobKind::Flag ? json(v) : knob_json(k, v));
    j[k.key] = a;
  }
  return j;
}

static uint64_t parse_number(const std::string& key, const std::string& t) {
  const Knob* k = find_knob(key);
  if (k && k->kind == KnobKind::Inline && t == "auto") return kInlineAuto;
  if (k && k->kind == KnobKind::Rate) return parse_rate(t);
  if (k && (k->kind == KnobKind::Bytes || k->kind == KnobKind::Inline)) {
    try {
      return parse_size(t);
    } catch (const ConfigError& e) {
      throw ConfigError(key + ": '" + t + "' is not a size (e.g. 64, 4k, 1m)");
    }
  }
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
    throw ConfigError(key + ": '" + t + "' is not a non-negative integer");
  try {
    return std::stoull(t);
  } catch (const std::exception&) {
    throw ConfigError(key + ": '" + t + "' is too large");
  }
}

// FROM:TO:xMUL or FROM:TO:+STEP, appended to `out`. A rate range steps its amount in
// one unit (1gbps:10gbps:+1gbps, 100kpps:1mpps:x2).
static void parse_range(const std::string& key, const std::string& item, std::vector<uint64_t>& out) {
  const size_t c1 = item.find(':'), c2 = item.find(':', c1 + 1);
  if (c2 == std::string::npos || c2 + 2 > item.size())
    throw ConfigError(key + ": range '" + item + "' must look like FROM:TO:xMUL or FROM:TO:+STEP");
  uint64_t from = parse_number(key, item.substr(0, c1));
  uint64_t to = parse_number(key, item.substr(c1 + 1, c2 - c1 - 1));
  const char kind = item[c2 + 1];
  const Knob* k = find_knob(key);
  const bool rate = k != nullptr && k->kind == KnobKind::Rate, added = kind == '+';
  const RateUnit unit = rate_unit(from);
  uint64_t step = rate && added ? parse_rate(item.substr(c2 + 2)) : parse_number(key + " step", item.substr(c2 + 2));
  if (rate) {
    if (from == kRateNone || rate_unit(to) != unit || (added && rate_unit(step) != unit))
      throw ConfigError(key + ": range '" + item + "' must give FROM, TO (and a + STEP) as rates in one kind of unit");
    from = rate_amount(from), to = rate_amount(to);
    if (added) step = rate_amount(step);
  }
  if (from > to) throw ConfigError(key + ": range '" + item + "' runs backwards");
  const size_t before = out.size();
  if (kind == 'x' || kind == '*') {
    if (step < 2 || from == 0) throw ConfigError(key + ": range '" + item + "' needs FROM >= 1 and a multiplier >= 2");
    for (uint64_t v = from; v <= to; v *= step) {
      out.push_back(v);
      if (v > to / step) break;
    }
  } else if (added) {
    if (step < 1) throw ConfigError(key + ": range '" + item + "' needs a step >= 1");
    for (uint64_t v = from; v <= to; v += step) {
      out.push_back(v);
      if (out.size() > 100000) throw ConfigError(key + ": range '" + item + "' has too many values");
      if (to - v < step) break;  // the next value would pass `to` (or wrap around)
    }
  } else {
    throw ConfigError(key + ": range '" + item + "' must step with x (multiply) or + (add)");
  }
  if (out.size() > 100000) throw ConfigError(key + ": range '" + item + "' has too many values");
  if (rate)
    for (size_t i = before; i < out.size(); ++i) out[i] = make_rate(unit, out[i]);
}

std::vector<uint64_t> parse_axis(const std::string& key, const std::string& text) {
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find(':') == std::string::npos) out.push_back(parse_number(key, item));
    else parse_range(key, item, out);
  }
  if (out.empty()) throw ConfigError(key + ": no value given");
  return out;
}

static std::vector<uint64_t> axis_from_json(const std::string& key, const json& v) {
  const Knob* knob_of = find_knob(key);
  if (knob_of != nullptr && knob_of->kind == KnobKind::Rate && v.is_number() && v != 0)
    throw ConfigError(key + ": give a rate with its unit, e.g. \"10gbps\" or \"1.5mpps\"");
  if (v.is_number_unsigned()) return {v.get<uint64_t>()};
  if (v.is_string()) return parse_axis(key, v.get<std::string>());
  if (v.is_array()) {
    std::vector<uint64_t> out;
    for (const json& e : v) {
      std::vector<uint64_t> part = axis_from_json(key, e);
      out.insert(out.end(), part.begin(), part.end());
    }
    if (out.empty()) throw ConfigError(key + ": empty list");
    return out;
  }
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      if (it.key() != "from" && it.key() != "to" && it.key() != "mul" && it.key() != "step")
        throw ConfigError(key + ": unknown range key '" + it.key() + "' (use from, to, mul or step)");
    if (!v.contains("from") || !v.contains("to") || (v.contains("mul") == v.contains("step")))
      throw ConfigError(key + ": a range needs from, to, and one of mul or step");
    auto text = [&](const char* k) {
      const json& x = v.at(k);
      if (x.is_string()) return x.get<std::string>();
      if (x.is_number_unsigned()) return std::to_string(x.get<uint64_t>());
      throw ConfigError(key + "." + k + ": must be a non-negative integer or a size");
    };
    std::string r = text("from") + ":" + text("to") + ":" + (v.contains("mul") ? "x" + text("mul") : "+" + text("step"));
    return parse_axis(key, r);
  }
  throw ConfigError(key + ": must be a number, a list, a string like \"64:65536:x2\" or {from, to, mul}");
}

// An axis of names (Op, Mode, Scope), checked.
static std::vector<uint64_t> names_from_json(const Knob& k, const json& v) {
  const std::string key = k.key;
  std::vector<std::string> out;
  if (v.is_string()) {
    std::stringstream ss(v.get<std::string>());
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(item);
  } else if (v.is_array()) {
    for (const json& e : v) {
      if (!e.is_string()) throw ConfigError(key + ": list entries must be strings");
      out.push_back(e.get<std::string>());
    }
  } else {
    throw ConfigError(key + ": must be a string or a list of strings");
  }
  if (out.empty()) throw ConfigError(key + ": no value given");
  std::vector<uint64_t> values;
  for (const std::string& s : out) values.push_back(parse_named(k.kind, s));
  return values;
}

static void apply_value(SweepSpec& s, const std::string& key, const json& v) {
  const std::vector<std::string>& keys = sweep_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    std::string known;
    for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError("unknown key '" + key + "' (known: " + known + ")");
  }
  if (const Knob* k = find_knob(key)) {
    if (key == "size") s.size_given = true;
    if (k->kind == KnobKind::Flag && v.is_boolean()) k->set_axis(s, {v.get<bool>() ? 1u : 0u});
    else if (named_kind(k->kind)) k->set_axis(s, names_from_json(*k, v));
    else k->set_axis(s, axis_from_json(key, v));
  } else if (key == "iters" || key == "warmup" || key == "repetitions") {
    std::vector<uint64_t> one = axis_from_json(key, v);
    if (one.size() != 1) throw ConfigError(key + ": takes one value, not a list");
    if (key == "iters") s.iters = one[0];
    else if (key == "warmup") s.warmup = one[0];
    else {
      if (one[0] < 1 || one[0] > 1000) throw ConfigError("repetitions: must be between 1 and 1000");
      s.repetitions = static_cast<uint32_t>(one[0]);
    }
  } else if (key == "duration") {
    if (v.is_number() && v.get<double>() >= 0) s.duration = v.get<double>();
    else if (v.is_string()) {
      try {
        size_t used = 0;
        s.duration = std::stod(v.get<std::string>(), &used);
        if (used != v.get<std::string>().size() || s.duration < 0) throw ConfigError("");
      } catch (const std::exception&) {
        throw ConfigError("duration: '" + v.get<std::string>() + "' is not a number of seconds");
      }
    } else throw ConfigError("duration: must be a non-negative number of seconds");
  } else if (key == "description") {
    if (!v.is_string()) throw ConfigError("description: must be a string");
    s.description = v.get<std::string>();
  } else {
    throw ConfigError("sweep key '" + key + "' has no reader: add it to apply_value in core/config/sweep.cpp");
  }
}

void apply_json(SweepSpec& spec, const json& j) {
  if (!j.is_object()) throw ConfigError("a sweep file must hold a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) apply_value(spec, it.key(), it.value());
}

SweepSpec load_sweep_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read sweep file " + path + ": " + std::strerror(errno));
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) throw ConfigError(path + ": not valid JSON");
  SweepSpec s;
  try {
    apply_json(s, j);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
  return s;
}

void apply_override(SweepSpec& spec, const std::string& key, const std::string& text) {
  apply_value(spec, key, json(text));  // text goes through the same checks as a file's strings
}

// One point from one value per knob (`v` in table order); false when it does not apply.
static bool make_point(const SweepSpec& s, const std::vector<uint64_t>& v, TestConfig& c) {
  const auto& ks = knobs();
  for (size_t i = 0; i < kKnobCount; ++i)
    if (ks[i].kind == KnobKind::Flag && v[i] > 1) throw ConfigError(std::string(ks[i].key) + ": takes 0 or 1");
  c = TestConfig{};
  for (size_t i = 0; i < kKnobCount; ++i) {
    // Counts and inline sizes are 32-bit fields; Op and Mode values come checked.
    bool u32 = ks[i].kind == KnobKind::Count || ks[i].kind == KnobKind::Inline;
    if (u32 && v[i] > 0xffffffffu) throw ConfigError(std::string(ks[i].key) + ": " + std::to_string(v[i]) + " is too large");
    ks[i].set(c, v[i]);
  }
  // Only SEND has receive queues to share: a sweep that also has SEND or no SRQ skips the
  // rest; --srq with no SEND at all is refused (core/config/refusals.cpp), not an empty sweep.
  if (c.knobs.srq && c.work.op != Op::Send &&
      (std::find(s.srq.begin(), s.srq.end(), 0) != s.srq.end() ||
       std::find(s.op.begin(), s.op.end(), "send") != s.op.end()))
    return false;
  if (is_atomic(c.work.op)) {
    // An atomic moves 8 bytes whatever the size axis says: one point, at the axis' first size.
    if (c.work.size != s.size.front()) return false;
    c.work.size = kAtomicBytes;
  }
  // Without a size, a latency point is perftest's ib_*_lat default: one point of 2 B.
  if (!s.size_given && c.work.mode == Mode::Lat && !is_atomic(c.work.op)) {
    if (c.work.size != s.size.front()) return false;
    c.work.size = kLatDefaultBytes;
  }
  // --rate paces bandwidth points. In a sweep that also has them, a latency point runs
  // once, closed-loop: the reference a load-latency series is drawn against. A sweep of
  // latency points alone with --rate is refused (core/config/refusals.cpp).
  if (c.work.mode == Mode::Lat && c.knobs.rate != kRateNone &&
      std::find(s.mode.begin(), s.mode.end(), "bw") != s.mode.end()) {
    if (std::find(s.rate.begin(), s.rate.end(), kRateNone) != s.rate.end()) return false;  // made at rate none
    if (c.knobs.rate != s.rate.front() || to_string(c.knobs.arrivals) != s.arrivals.front()) return false;
    c.knobs.rate = kRateNone;
    c.knobs.arrivals = ArrivalProcess::Constant;
  }
  // One thread has one CQ whatever the scope: a sweep over both runs it once.
  if (c.knobs.threads == 1 && c.knobs.cq_scope == CqScope::Process &&
      std::find(s.cq_scope.begin(), s.cq_scope.end(), "thread") != s.cq_scope.end())
    return false;
  c.work.iters = s.iters;
  c.work.duration = s.duration;
  c.work.warmup = s.warmup;
  return true;
}

// The product of the axes, in nesting order.
static std::vector<TestConfig> expand_product(const SweepSpec& s, const PointContext& ctx) {
  // The axes in nesting order, and an odometer over them (the last turns fastest).
  const auto& ks = knobs();
  std::vector<size_t> order(kKnobCount);
  for (size_t i = 0; i < kKnobCount; ++i) order.at(static_cast<size_t>(ks[i].nest)) = i;
  std::vector<std::vector<uint64_t>> axes;
  for (size_t i : order) axes.push_back(ks[i].axis(s));
  std::vector<TestConfig> out;
  for (const auto& a : axes)
    if (a.empty()) return out;
  std::vector<size_t> at(kKnobCount, 0);
  std::vector<uint64_t> v(kKnobCount);
  for (;;) {
    for (size_t n = 0; n < kKnobCount; ++n) v[order[n]] = axes[n][at[n]];
    TestConfig c;
    if (make_point(s, v, c)) {
      try {
        validate(c, ctx);
      } catch (const ConfigError& e) {
        throw ConfigError("point " + point_name(c) + ": " + e.what());
      }
      out.push_back(c);
      if (out.size() > 1000000) throw ConfigError("the sweep has over a million points");
    }
    size_t n = kKnobCount;
    while (n > 0 && ++at[n - 1] == axes[n - 1].size()) at[--n] = 0;
    if (n == 0) return out;
  }
}

TestConfig flat_out_twin(const TestConfig& c) {
  TestConfig t = c;
  t.knobs.rate = kRateNone;
  t.knobs.arrivals = ArrivalProcess::Constant;
  return t;
}

TestConfig paced_at_share(TestConfig c, double flat_out) {
  if (!(flat_out > 0))
    throw ConfigError("--rate " + rate_string(c.knobs.rate) + ": its flat-out point " + point_name(flat_out_twin(c)) +
                      " gave no rate to take a share of (it failed or did not run)");
  c.knobs.rate = share_of(c.knobs.rate, flat_out);
  return c;
}

// Each share point's flat-out twin first (it measures the rate the share is of); a point
// that is already in the list (the twin the sweep has itself) is not run twice.
static std::vector<TestConfig> with_flat_out_twins(const std::vector<TestConfig>& points) {
  if (std::none_of(points.begin(), points.end(), [](const TestConfig& c) { return is_share(c.knobs.rate); }))
    return points;
  std::vector<TestConfig> out;
  std::set<std::string> placed;
  auto place = [&](const TestConfig& c) {
    if (placed.insert(point_name(c)).second) out.push_back(c);
  };
  for (const TestConfig& c : points) {
    if (is_share(c.knobs.rate)) place(flat_out_twin(c));
    place(c);
  }
  return out;
}

std::vector<TestConfig> expand(const SweepSpec& s, const PointContext& ctx) {
  std::vector<TestConfig> points = expand_product(s, ctx);
  return with_flat_out_twins(points);
}

TestConfig background_point(const std::string& text, const PointContext& ctx) {
  const std::string how = ": give the background's knobs as KEY=VALUE pairs, one value each, e.g. "
                          "--beside 'op=write,mode=bw,qps=8,size=64k'";
  SweepSpec spec;
  std::stringstream in(text);
  std::string pair;
  while (std::getline(in, pair, ',')) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
      throw ConfigError("--beside: '" + pair + "' is not KEY=VALUE" + how);
    const std::string key = pair.substr(0, eq);
    if (key == "iters" || key == "duration" || key == "repetitions")
      throw ConfigError("--beside: " + key + ": the background runs as long as the point beside it needs; drop " + key);
    apply_override(spec, key, pair.substr(eq + 1));
  }
  if (text.empty()) throw ConfigError("--beside: empty" + how);
  std::vector<TestConfig> points = expand_product(spec, ctx);
  if (points.size() != 1 || is_share(points[0].knobs.rate))
    throw ConfigError("--beside: one background point, with an absolute --rate if any" + how);
  return points[0];
}

}  // namespace rdmasweep
