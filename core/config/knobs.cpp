#include "core/config/knobs.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/config/sweep_spec.hpp"

namespace rdmasweep {

using nlohmann::json;

namespace {

// A sweep axis as numbers (names as their enumerators), and back.
std::vector<uint64_t> axis_values(const std::vector<uint64_t>& v, KnobKind) { return v; }
std::vector<uint64_t> axis_values(const std::vector<std::string>& names, KnobKind kind) {
  std::vector<uint64_t> out;
  for (const std::string& n : names) out.push_back(parse_named(kind, n));
  return out;
}

void set_axis_values(std::vector<uint64_t>& axis, const std::vector<uint64_t>& v, KnobKind) { axis = v; }
void set_axis_values(std::vector<std::string>& axis, const std::vector<uint64_t>& v, KnobKind kind) {
  axis.clear();
  for (uint64_t x : v) axis.push_back(named_value(kind, x));
}

#define RDMASWEEP_KNOB_LOOP_work false
#define RDMASWEEP_KNOB_LOOP_knobs true
#define X(key_, in, kind_, def_, tag_, nest_, option_, lo_, hi_, shapes_, help_)                               \
  Knob{#key_,                                                                                                   \
       KnobKind::kind_,                                                                                         \
       RDMASWEEP_KNOB_LOOP_##in,                                                                                \
       static_cast<uint64_t>(def_),                                                                             \
       tag_,                                                                                                    \
       nest_,                                                                                                   \
       option_,                                                                                                 \
       lo_,                                                                                                     \
       hi_,                                                                                                     \
       shapes_,                                                                                                 \
       help_,                                                                                                   \
       [](const TestConfig& c) { return static_cast<uint64_t>(c.in.key_); },                                   \
       [](TestConfig& c, uint64_t v) { c.in.key_ = static_cast<RDMASWEEP_KNOB_TYPE_##kind_>(v); },             \
       [](const SweepSpec& s) { return axis_values(s.key_, KnobKind::kind_); },                              \
       [](SweepSpec& s, const std::vector<uint64_t>& v) { set_axis_values(s.key_, v, KnobKind::kind_); }},
const std::array<Knob, kKnobCount> kKnobs = {{RDMASWEEP_KNOBS(X)}};
#undef X

// The largest value a kind's field holds.
uint64_t type_max(KnobKind kind) {
  switch (kind) {
    case KnobKind::Bytes:
    case KnobKind::Rate: return std::numeric_limits<uint64_t>::max();
    case KnobKind::Flag: return 1;
    default: return std::numeric_limits<uint32_t>::max();
  }
}

}  // namespace

bool named_kind(KnobKind kind) {
  return kind == KnobKind::Op || kind == KnobKind::Mode || kind == KnobKind::Scope || kind == KnobKind::Transport ||
         kind == KnobKind::Arrivals;
}

uint64_t parse_named(KnobKind kind, const std::string& name) {
  switch (kind) {
    case KnobKind::Op: return static_cast<uint64_t>(parse_op(name));
    case KnobKind::Mode: return static_cast<uint64_t>(parse_mode(name));
    case KnobKind::Transport: return static_cast<uint64_t>(parse_transport(name));
    case KnobKind::Arrivals: return static_cast<uint64_t>(parse_arrivals(name));
    default: return static_cast<uint64_t>(parse_cq_scope(name));
  }
}

const char* named_value(KnobKind kind, uint64_t v) {
  switch (kind) {
    case KnobKind::Op: return to_string(static_cast<Op>(v));
    case KnobKind::Mode: return to_string(static_cast<Mode>(v));
    case KnobKind::Transport: return to_string(static_cast<Transport>(v));
    case KnobKind::Arrivals: return to_string(static_cast<ArrivalProcess>(v));
    default: return to_string(static_cast<CqScope>(v));
  }
}

const std::array<Knob, kKnobCount>& knobs() { return kKnobs; }

const Knob* find_knob(const std::string& key) {
  for (const Knob& k : kKnobs)
    if (key == k.key) return &k;
  return nullptr;
}

const Knob& knob(const std::string& key) {
  if (const Knob* k = find_knob(key)) return *k;
  throw std::out_of_range("no knob '" + key + "'");
}

std::string knob_flag(const Knob& k) {
  std::string o = k.option;
  return "--" + o.substr(0, o.find(','));
}

std::string knob_text(const Knob& k, uint64_t v) {
  if (named_kind(k.kind)) return named_value(k.kind, v);
  if (k.kind == KnobKind::Rate) return rate_string(v);
  if (k.kind == KnobKind::Inline && v == kInlineAuto) return "auto";
  return std::to_string(v);
}

json knob_json(const Knob& k, uint64_t v) {
  switch (k.kind) {
    case KnobKind::Op:
    case KnobKind::Mode:
    case KnobKind::Scope:
    case KnobKind::Transport:
    case KnobKind::Arrivals:
    case KnobKind::Rate: return knob_text(k, v);
    case KnobKind::Flag: return v != 0;
    case KnobKind::Inline:
      if (v == kInlineAuto) return "auto";
      return v;
    default: return v;
  }
}

uint64_t knob_from_json(const Knob& k, const json& v) {
  const std::string key = k.key;
  switch (k.kind) {
    case KnobKind::Op:
    case KnobKind::Mode:
    case KnobKind::Scope:
    case KnobKind::Transport:
    case KnobKind::Arrivals:
      if (!v.is_string()) throw ConfigError(key + ": must be a string");
      return parse_named(k.kind, v.get<std::string>());
    case KnobKind::Rate:
      if (v == 0) return kRateNone;
      if (!v.is_string()) throw ConfigError(key + ": must be a string like \"10gbps\" or \"1.5mpps\"");
      return parse_rate(v.get<std::string>());
    case KnobKind::Flag:
      if (!v.is_boolean()) throw ConfigError(key + ": must be true or false");
      return v.get<bool>() ? 1 : 0;
    default: break;
  }
  if (k.kind == KnobKind::Inline && v == "auto") return kInlineAuto;
  if (!v.is_number_unsigned()) throw ConfigError(key + ": must be a non-negative integer");
  uint64_t x = v.get<uint64_t>();
  if (x > type_max(k.kind)) throw ConfigError(key + ": " + std::to_string(x) + " is too large");
  return x;
}

void check_knob_range(const Knob& k, uint64_t v) {
  if (k.kind == KnobKind::Inline && v == kInlineAuto) return;
  if (v >= k.lo && v <= k.hi) return;
  const std::string key = k.key;
  if (k.hi == kKnobNoMax) throw ConfigError(key + ": must be at least " + std::to_string(k.lo));
  if (k.lo == 0) throw ConfigError(key + ": " + std::to_string(v) + " is over " + std::to_string(k.hi));
  throw ConfigError(key + ": " + std::to_string(v) + " is out of range " + std::to_string(k.lo) + ".." +
                    std::to_string(k.hi));
}

json knobs_table_json() {
  json a = json::array();
  for (const Knob& k : kKnobs)
    a.push_back({{"key", k.key},
                 {"tag", k.tag ? json(k.tag) : json(nullptr)},
                 {"flag", knob_flag(k)},
                 {"default", knob_json(k, k.def)},
                 {"help", k.help}});
  return a;
}

std::string point_name(const TestConfig& c) {
  std::string n = std::string(to_string(c.work.op)) + "/" + to_string(c.work.mode) + "/qps:" + std::to_string(c.work.qps) +
                  "/size:" + std::to_string(c.work.size) + "/cq:" + std::to_string(cq_depth_for(c));
  // The tagged knobs appear only when they differ from their defaults, so names stay
  // short and every point of a sweep over them stays distinct.
  for (const Knob& k : knobs()) {
    uint64_t v = k.get(c);
    if (!k.tag || v == k.def) continue;
    n += std::string("/") + k.tag;
    if (k.kind != KnobKind::Flag) n += ":" + knob_text(k, v);
  }
  return n;
}

void to_json(nlohmann::json& j, const TestConfig& c) {
  j = {{"iters", c.work.iters}, {"duration", c.work.duration}, {"warmup", c.work.warmup}};
  for (const Knob& k : knobs()) j[k.key] = knob_json(k, k.get(c));
}

void from_json(const nlohmann::json& j, TestConfig& c) {
  if (!j.is_object()) throw ConfigError("test configuration must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!find_knob(it.key()) && it.key() != "iters" && it.key() != "duration" && it.key() != "warmup")
      throw ConfigError("unknown key '" + it.key() + "'");
  for (const Knob& k : knobs())
    if (j.contains(k.key)) k.set(c, knob_from_json(k, j.at(k.key)));
  for (auto [key, field] : {std::pair{"iters", &c.work.iters}, std::pair{"warmup", &c.work.warmup}}) {
    if (!j.contains(key)) continue;
    if (!j.at(key).is_number_unsigned()) throw ConfigError(std::string(key) + ": must be a non-negative integer");
    *field = j.at(key).get<uint64_t>();
  }
  if (j.contains("duration")) {
    if (!j["duration"].is_number()) throw ConfigError("duration: must be a number of seconds");
    c.work.duration = j["duration"].get<double>();
  }
}

}  // namespace rdmasweep
