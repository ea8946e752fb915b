#include "core/sweep.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace rdmasweep {

using nlohmann::json;

const std::vector<std::string>& sweep_axes() {
  static const std::vector<std::string> axes = {"op",       "mode",         "qps",         "cq_depth",
                                                "tx_depth", "rx_depth",     "post_list",   "signal_every",
                                                "inline_size", "poll_batch", "srq", "events", "outs",
                                                "size"};
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

// inline_size's values as a sweep file writes them: kInlineAuto as "auto".
static json inline_json(const std::vector<uint64_t>& values) {
  json a = json::array();
  for (uint64_t v : values) a.push_back(v == kInlineAuto ? json("auto") : json(v));
  return a;
}

json sweep_json(const SweepSpec& s) {
  return {{"op", s.op},
          {"mode", s.mode},
          {"qps", s.qps},
          {"cq_depth", s.cq_depth},
          {"tx_depth", s.tx_depth},
          {"rx_depth", s.rx_depth},
          {"post_list", s.post_list},
          {"signal_every", s.signal_every},
          {"inline_size", inline_json(s.inline_size)},
          {"poll_batch", s.poll_batch},
          {"srq", s.srq},
          {"events", s.events},
          {"outs", s.outs},
          {"size", s.size},
          {"iters", s.iters},
          {"duration", s.duration},
          {"warmup", s.warmup},
          {"repetitions", s.repetitions},
          {"description", s.description}};
}

static bool is_size_key(const std::string& key) { return key == "size" || key == "inline_size"; }

static uint64_t parse_number(const std::string& key, const std::string& t) {
  if (key == "inline_size" && t == "auto") return kInlineAuto;
  if (is_size_key(key)) {
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

std::vector<uint64_t> parse_axis(const std::string& key, const std::string& text) {
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t c1 = item.find(':');
    if (c1 == std::string::npos) {
      out.push_back(parse_number(key, item));
      continue;
    }
    size_t c2 = item.find(':', c1 + 1);
    if (c2 == std::string::npos || c2 + 2 > item.size())
      throw ConfigError(key + ": range '" + item + "' must look like FROM:TO:xMUL or FROM:TO:+STEP");
    uint64_t from = parse_number(key, item.substr(0, c1));
    uint64_t to = parse_number(key, item.substr(c1 + 1, c2 - c1 - 1));
    char kind = item[c2 + 1];
    uint64_t step = parse_number(key + " step", item.substr(c2 + 2));
    if (from > to) throw ConfigError(key + ": range '" + item + "' runs backwards");
    if (kind == 'x' || kind == '*') {
      if (step < 2 || from == 0) throw ConfigError(key + ": range '" + item + "' needs FROM >= 1 and a multiplier >= 2");
      for (uint64_t v = from; v <= to; v *= step) {
        out.push_back(v);
        if (v > to / step) break;
      }
    } else if (kind == '+') {
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
  }
  if (out.empty()) throw ConfigError(key + ": no value given");
  return out;
}

static std::vector<uint64_t> axis_from_json(const std::string& key, const json& v) {
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

static std::vector<std::string> names_from_json(const std::string& key, const json& v) {
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
  for (const std::string& s : out) key == "op" ? (void)parse_op(s) : (void)parse_mode(s);
  return out;
}

static std::vector<uint64_t>* axis_slot(SweepSpec& s, const std::string& key) {
  if (key == "qps") return &s.qps;
  if (key == "size") return &s.size;
  if (key == "cq_depth") return &s.cq_depth;
  if (key == "tx_depth") return &s.tx_depth;
  if (key == "rx_depth") return &s.rx_depth;
  if (key == "post_list") return &s.post_list;
  if (key == "signal_every") return &s.signal_every;
  if (key == "inline_size") return &s.inline_size;
  if (key == "poll_batch") return &s.poll_batch;
  if (key == "srq") return &s.srq;
  if (key == "events") return &s.events;
  if (key == "outs") return &s.outs;
  return nullptr;
}

static void apply_value(SweepSpec& s, const std::string& key, const json& v) {
  const std::vector<std::string>& keys = sweep_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    std::string known;
    for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError("unknown key '" + key + "' (known: " + known + ")");
  }
  if ((key == "srq" || key == "events") && v.is_boolean()) {
    (key == "srq" ? s.srq : s.events) = {v.get<bool>() ? 1u : 0u};
    return;
  }
  if (key == "op") s.op = names_from_json(key, v);
  else if (key == "mode") s.mode = names_from_json(key, v);
  else if (auto* slot = axis_slot(s, key)) *slot = axis_from_json(key, v);
  else if (key == "iters" || key == "warmup" || key == "repetitions") {
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
    throw ConfigError("sweep key '" + key + "' has no reader: add it to apply_value in core/sweep.cpp");
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

std::vector<TestConfig> expand(const SweepSpec& s) {
  std::vector<TestConfig> out;
  auto u32 = [](const char* key, uint64_t v) {
    if (v > 0xffffffffu) throw ConfigError(std::string(key) + ": " + std::to_string(v) + " is too large");
    return static_cast<uint32_t>(v);
  };
  for (const std::string& op : s.op)
    for (const std::string& mode : s.mode)
      for (uint64_t qps : s.qps)
        for (uint64_t cq : s.cq_depth)
          for (uint64_t tx : s.tx_depth)
            for (uint64_t rx : s.rx_depth)
              for (uint64_t pl : s.post_list)
                for (uint64_t sig : s.signal_every)
                  for (uint64_t inl : s.inline_size)
                    for (uint64_t pb : s.poll_batch)
                      for (uint64_t srq : s.srq)
                      for (uint64_t events : s.events)
                      for (uint64_t outs : s.outs)
                      for (uint64_t size : s.size) {
                        if (srq > 1) throw ConfigError("srq: takes 0 or 1");
                        if (events > 1) throw ConfigError("events: takes 0 or 1");
                        if (srq && op != "send") continue;  // only SEND has receive queues to share
                        TestConfig c;
                        c.work.op = parse_op(op);
                        c.work.mode = parse_mode(mode);
                        c.work.qps = u32("qps", qps);
                        c.work.size = size;
                        c.work.iters = s.iters;
                        c.work.duration = s.duration;
                        c.work.warmup = s.warmup;
                        c.knobs.cq_depth = u32("cq_depth", cq);
                        c.knobs.tx_depth = u32("tx_depth", tx);
                        c.knobs.rx_depth = u32("rx_depth", rx);
                        c.knobs.post_list = u32("post_list", pl);
                        c.knobs.signal_every = u32("signal_every", sig);
                        c.knobs.inline_size = u32("inline_size", inl);
                        c.knobs.poll_batch = u32("poll_batch", pb);
                        c.knobs.srq = srq != 0;
                        c.knobs.events = events != 0;
                        c.knobs.outs = u32("outs", outs);
                        try {
                          validate(c);
                        } catch (const ConfigError& e) {
                          throw ConfigError("point " + point_name(c) + ": " + e.what());
                        }
                        out.push_back(c);
                        if (out.size() > 1000000) throw ConfigError("the sweep has over a million points");
                      }
  return out;
}

}  // namespace rdmasweep
