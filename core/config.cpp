#include "core/config.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

namespace rdmasweep {

const char* to_string(Op op) {
  switch (op) {
    case Op::Send: return "send";
    case Op::Write: return "write";
    case Op::Read: return "read";
  }
  return "?";
}

const char* to_string(Mode m) { return m == Mode::Bw ? "bw" : "lat"; }

Op parse_op(const std::string& s) {
  if (s == "send") return Op::Send;
  if (s == "write") return Op::Write;
  if (s == "read") return Op::Read;
  throw ConfigError("op: '" + s + "' is not one of send, write, read");
}

Mode parse_mode(const std::string& s) {
  if (s == "bw") return Mode::Bw;
  if (s == "lat") return Mode::Lat;
  throw ConfigError("mode: '" + s + "' is not one of bw, lat");
}

static void require(bool ok, const std::string& what) {
  if (!ok) throw ConfigError(what);
}

void validate(const TestConfig& c) {
  const Workload& w = c.work;
  const LoopKnobs& k = c.knobs;
  require(w.qps >= 1 && w.qps <= (1u << 20), "qps: " + std::to_string(w.qps) + " is out of range 1..1048576");
  require(w.size >= 1, "size: a message must carry at least 1 byte (got 0)");
  require(w.size <= (1ull << 30), "size: " + std::to_string(w.size) + " bytes is over the 1 GiB limit");
  require(w.duration >= 0 && w.duration <= 86400, "duration: must be between 0 and 86400 seconds");
  require(w.duration > 0 || w.iters >= 1, "iters: at least 1 measured iteration is needed (or set a duration)");
  require(w.iters <= (1ull << 40), "iters: " + std::to_string(w.iters) + " is too large");
  require(w.warmup <= (1ull << 32), "warmup: " + std::to_string(w.warmup) + " is too large");
  // Sanity bounds only: the device's max_qp_wr / max_srq_wr are the real limits (check_device_limits).
  constexpr uint32_t kMaxDepth = 1u << 24;
  require(k.tx_depth >= 1 && k.tx_depth <= kMaxDepth,
          "tx_depth: " + std::to_string(k.tx_depth) + " is out of range 1.." + std::to_string(kMaxDepth));
  require(k.rx_depth >= 1 && k.rx_depth <= kMaxDepth,
          "rx_depth: " + std::to_string(k.rx_depth) + " is out of range 1.." + std::to_string(kMaxDepth));
  require(k.post_list >= 1 && k.post_list <= k.tx_depth,
          "post_list: " + std::to_string(k.post_list) + " must be between 1 and tx_depth (" + std::to_string(k.tx_depth) + ")");
  require(k.signal_every >= 1, "signal_every: must be at least 1");
  // Progress needs a signaled WR among any window of outstanding WRs the loop can wait on.
  require(uint64_t{k.signal_every} + k.post_list <= uint64_t{k.tx_depth} + 1,  // 64-bit: no wrap-around
          "signal_every: " + std::to_string(k.signal_every) + " + post_list " + std::to_string(k.post_list) +
              " must not exceed tx_depth + 1 (" + std::to_string(k.tx_depth + 1) +
              "), or the send queue fills with no signaled work request to free it");
  require(k.poll_batch >= 1 && k.poll_batch <= 4096, "poll_batch: " + std::to_string(k.poll_batch) + " is out of range 1..4096");
  require(k.inline_size == kInlineAuto || k.inline_size <= 65536,
          "inline_size: " + std::to_string(k.inline_size) + " is over 65536");
  // max_rd_atomic is 8 bits wide in the verbs QP attributes.
  require(k.outs <= 255, "outs: " + std::to_string(k.outs) + " is over 255 (0 = the devices' limit)");
  require(!k.srq || w.op == Op::Send, "srq: only SEND tests have receive queues to share");
  if (k.cq_depth != 0) {
    uint64_t need = required_cq_entries(c);
    require(k.cq_depth >= need,
            "cq_depth: " + std::to_string(k.cq_depth) + " cannot hold the " + std::to_string(need) +
                " completions " + std::to_string(w.qps) +
                " QPs can have outstanding (qps x (tx_depth/signal_every + rx_depth for SEND)); raise --cq-depth "
                "or lower --qps/--tx-depth/--rx-depth");
  }
}

uint32_t default_inline(Op op) {
  switch (op) {
    case Op::Send: return 236;
    case Op::Write: return 220;
    case Op::Read: return 0;
  }
  return 0;
}

uint32_t inline_limit(const TestConfig& c, uint32_t device_max) {
  if (c.work.op == Op::Read) return 0;
  if (c.knobs.inline_size != kInlineAuto) return c.knobs.inline_size;
  return std::min(default_inline(c.work.op), device_max);
}

uint32_t effective_signal_every(const TestConfig& c) {
  return (c.work.op == Op::Read && c.work.mode == Mode::Lat) ? 1 : c.knobs.signal_every;
}

uint64_t required_cq_entries(const TestConfig& c) {
  uint64_t sig = effective_signal_every(c);
  if (sig == 0) sig = 1;  // not yet validated (names of invalid points are built for their error messages)
  uint64_t per_qp = (c.knobs.tx_depth + sig - 1) / sig;
  if (c.knobs.srq) {
    // The receiver's receives are in one shared queue; a latency client still has its own.
    uint64_t client_rx = c.work.mode == Mode::Lat ? c.knobs.rx_depth : 0;
    return (per_qp + client_rx) * c.work.qps + c.knobs.rx_depth;
  }
  if (c.work.op == Op::Send || write_with_imm(c)) per_qp += c.knobs.rx_depth;
  return per_qp * c.work.qps;
}

uint32_t cq_depth_for(const TestConfig& c) {
  if (c.knobs.cq_depth != 0) return c.knobs.cq_depth;
  uint64_t need = required_cq_entries(c);
  return need > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(need);
}

TestConfig cap_to_cq(const TestConfig& c, uint64_t max_cqe) {
  TestConfig t = c;
  if (t.knobs.cq_depth != 0) return t;
  LoopKnobs& k = t.knobs;
  while (required_cq_entries(t) > max_cqe) {
    uint64_t send_cqes = (k.tx_depth + effective_signal_every(t) - 1) / effective_signal_every(t);
    bool receives = t.work.op == Op::Send;
    if (receives && k.rx_depth > 1 && (k.srq || k.rx_depth >= send_cqes)) {
      k.rx_depth = std::max(1u, k.rx_depth / 2);
    } else if (k.tx_depth > 1) {
      k.tx_depth = std::max(1u, k.tx_depth / 2);
      k.signal_every = std::min(k.signal_every, k.tx_depth);
      k.post_list = std::min(k.post_list, k.tx_depth + 1 - k.signal_every);
    } else if (receives && k.rx_depth > 1) {
      k.rx_depth = std::max(1u, k.rx_depth / 2);
    } else {
      throw ConfigError("qps: " + std::to_string(t.work.qps) + " QPs with one outstanding work request each need " +
                        std::to_string(required_cq_entries(t)) + " CQ entries, over the device's max_cqe (" +
                        std::to_string(max_cqe) + ")");
    }
  }
  return t;
}

std::string point_name(const TestConfig& c) {
  std::string n = std::string(to_string(c.work.op)) + "/" + to_string(c.work.mode) + "/qps:" + std::to_string(c.work.qps) +
                  "/size:" + std::to_string(c.work.size) + "/cq:" + std::to_string(cq_depth_for(c));
  // Loop knobs appear only when they differ from the defaults, so names stay short
  // and every point of a sweep over them stays distinct.
  const LoopKnobs d;
  const LoopKnobs& k = c.knobs;
  if (k.tx_depth != d.tx_depth) n += "/tx:" + std::to_string(k.tx_depth);
  if (k.rx_depth != d.rx_depth) n += "/rx:" + std::to_string(k.rx_depth);
  if (k.post_list != d.post_list) n += "/post:" + std::to_string(k.post_list);
  if (k.signal_every != d.signal_every) n += "/signal:" + std::to_string(k.signal_every);
  if (k.inline_size != d.inline_size) n += "/inline:" + std::to_string(k.inline_size);
  if (k.outs != d.outs) n += "/outs:" + std::to_string(k.outs);
  if (k.poll_batch != d.poll_batch) n += "/poll:" + std::to_string(k.poll_batch);
  if (k.srq) n += "/srq";
  if (k.events) n += "/events";
  return n;
}

void to_json(nlohmann::json& j, const TestConfig& c) {
  j = {{"op", to_string(c.work.op)},          {"mode", to_string(c.work.mode)},
       {"qps", c.work.qps},                    {"size", c.work.size},
       {"iters", c.work.iters},                {"duration", c.work.duration},
       {"warmup", c.work.warmup},              {"tx_depth", c.knobs.tx_depth},
       {"rx_depth", c.knobs.rx_depth},         {"cq_depth", c.knobs.cq_depth},
       {"post_list", c.knobs.post_list},       {"signal_every", c.knobs.signal_every},
       {"poll_batch", c.knobs.poll_batch},     {"outs", c.knobs.outs},
       {"srq", c.knobs.srq},                   {"events", c.knobs.events}};
  if (c.knobs.inline_size == kInlineAuto) j["inline_size"] = "auto";
  else j["inline_size"] = c.knobs.inline_size;
}

template <typename T>
static void get_uint(const nlohmann::json& j, const char* key, T* out) {
  if (!j.contains(key)) return;
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_unsigned()) throw ConfigError(std::string(key) + ": must be a non-negative integer");
  uint64_t x = v.get<uint64_t>();
  if (x > static_cast<uint64_t>(std::numeric_limits<T>::max()))
    throw ConfigError(std::string(key) + ": " + std::to_string(x) + " is too large");
  *out = static_cast<T>(x);
}

void from_json(const nlohmann::json& j, TestConfig& c) {
  static const std::set<std::string> known = {"op",       "mode",      "qps",         "size",     "iters",
                                              "duration", "warmup",    "tx_depth",    "rx_depth", "cq_depth",
                                              "post_list", "signal_every", "inline_size", "poll_batch", "srq", "events",
                                              "outs"};
  if (!j.is_object()) throw ConfigError("test configuration must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) throw ConfigError("unknown key '" + it.key() + "'");
  if (j.contains("op")) {
    if (!j["op"].is_string()) throw ConfigError("op: must be a string");
    c.work.op = parse_op(j["op"].get<std::string>());
  }
  if (j.contains("mode")) {
    if (!j["mode"].is_string()) throw ConfigError("mode: must be a string");
    c.work.mode = parse_mode(j["mode"].get<std::string>());
  }
  get_uint(j, "qps", &c.work.qps);
  get_uint(j, "size", &c.work.size);
  get_uint(j, "iters", &c.work.iters);
  get_uint(j, "warmup", &c.work.warmup);
  if (j.contains("duration")) {
    if (!j["duration"].is_number()) throw ConfigError("duration: must be a number of seconds");
    c.work.duration = j["duration"].get<double>();
  }
  get_uint(j, "tx_depth", &c.knobs.tx_depth);
  get_uint(j, "rx_depth", &c.knobs.rx_depth);
  get_uint(j, "cq_depth", &c.knobs.cq_depth);
  get_uint(j, "post_list", &c.knobs.post_list);
  get_uint(j, "signal_every", &c.knobs.signal_every);
  if (j.contains("inline_size") && j["inline_size"] == "auto") c.knobs.inline_size = kInlineAuto;
  else get_uint(j, "inline_size", &c.knobs.inline_size);
  get_uint(j, "outs", &c.knobs.outs);
  get_uint(j, "poll_batch", &c.knobs.poll_batch);
  for (const char* key : {"srq", "events"}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_boolean()) throw ConfigError(std::string(key) + ": must be true or false");
    (std::string(key) == "srq" ? c.knobs.srq : c.knobs.events) = j[key].get<bool>();
  }
}

uint64_t parse_size(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) throw ConfigError("size: '" + s + "' is not a number of bytes (e.g. 64, 4k, 1m)");
  uint64_t v = 0;
  try {
    v = std::stoull(s.substr(0, i));
  } catch (const std::exception&) {
    throw ConfigError("size: '" + s + "' is too large");
  }
  std::string unit = s.substr(i);
  for (char& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  uint64_t mult = 1;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") mult = 1ull << 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") mult = 1ull << 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") mult = 1ull << 30;
  else throw ConfigError("size: unknown unit in '" + s + "' (use k, m or g)");
  if (v > (~0ull) / mult) throw ConfigError("size: '" + s + "' is too large");
  return v * mult;
}

}  // namespace rdmasweep
