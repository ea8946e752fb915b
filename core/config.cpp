#include "core/config.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <nlohmann/json.hpp>

namespace rdmasweep {

const char* to_string(Op op) {
  switch (op) {
    case Op::Send: return "send";
    case Op::Write: return "write";
    case Op::Read: return "read";
    case Op::Cas: return "cas";
    case Op::Faa: return "faa";
  }
  return "?";
}

const char* to_string(Mode m) { return m == Mode::Bw ? "bw" : "lat"; }

Op parse_op(const std::string& s) {
  if (s == "send") return Op::Send;
  if (s == "write") return Op::Write;
  if (s == "read") return Op::Read;
  if (s == "cas") return Op::Cas;
  if (s == "faa") return Op::Faa;
  throw ConfigError("op: '" + s + "' is not one of send, write, read, cas, faa");
}

const char* to_string(CqScope s) { return s == CqScope::Process ? "process" : "thread"; }

CqScope parse_cq_scope(const std::string& s) {
  if (s == "thread") return CqScope::Thread;
  if (s == "process") return CqScope::Process;
  throw ConfigError("cq_scope: '" + s + "' is not one of thread, process");
}

const char* to_string(Transport t) { return t == Transport::Ud ? "ud" : "rc"; }

Transport parse_transport(const std::string& s) {
  if (s == "rc") return Transport::Rc;
  if (s == "ud") return Transport::Ud;
  throw ConfigError("transport: '" + s + "' is not one of rc, ud");
}

Mode parse_mode(const std::string& s) {
  if (s == "bw") return Mode::Bw;
  if (s == "lat") return Mode::Lat;
  throw ConfigError("mode: '" + s + "' is not one of bw, lat");
}

static void require(bool ok, const std::string& what) {
  if (!ok) throw ConfigError(what);
}

void validate(const TestConfig& c, const PointContext& ctx) {
  const Workload& w = c.work;
  const LoopKnobs& k = c.knobs;
  // size's own words first (the table's range would say the same less plainly).
  require(w.size >= 1, "size: a message must carry at least 1 byte (got 0)");
  require(w.size <= (1ull << 30), "size: " + std::to_string(w.size) + " bytes is over the 1 GiB limit");
  for (const Knob& kn : knobs()) check_knob_range(kn, kn.get(c));
  require(w.duration >= 0 && w.duration <= 86400, "duration: must be between 0 and 86400 seconds");
  require(w.duration > 0 || w.iters >= 1, "iters: at least 1 measured iteration is needed (or set a duration)");
  require(w.iters <= (1ull << 40), "iters: " + std::to_string(w.iters) + " is too large");
  require(w.warmup <= (1ull << 32), "warmup: " + std::to_string(w.warmup) + " is too large");
  require(k.mtu == 0 || k.mtu == 256 || k.mtu == 512 || k.mtu == 1024 || k.mtu == 2048 || k.mtu == 4096,
          "mtu: " + std::to_string(k.mtu) + " is not a path MTU: use 256, 512, 1024, 2048 or 4096 (0: the ports' own)");
  check_refusals(c, ctx);  // the combinations that cannot run: core/refusals.cpp
}

uint32_t default_inline(Op op) {
  switch (op) {
    case Op::Send: return 236;
    case Op::Write: return 220;
    case Op::Read:
    case Op::Cas:
    case Op::Faa: return 0;
  }
  return 0;
}

uint32_t inline_limit(const TestConfig& c, uint32_t device_max) {
  if (fetches(c.work.op)) return 0;
  if (c.knobs.inline_size != kInlineAuto) return c.knobs.inline_size;
  return std::min(default_inline(c.work.op), device_max);
}

uint32_t effective_signal_every(const TestConfig& c) {
  return (fetches(c.work.op) && c.work.mode == Mode::Lat) ? 1 : c.knobs.signal_every;
}

// One thread's QPs (and its shared receive queue): what its own CQ must hold.
static uint64_t thread_cq_entries(const TestConfig& c) {
  uint64_t sig = effective_signal_every(c);
  if (sig == 0) sig = 1;  // not yet validated (names of invalid points are built for their error messages)
  uint64_t per_qp = (c.knobs.tx_depth + sig - 1) / sig;
  if (c.knobs.srq) {
    // The receiver's receives are in one shared queue; a client that receives too (a
    // latency client, or SEND --bidir) still has its own.
    const bool client_receives = c.work.mode == Mode::Lat || (c.knobs.bidir && c.work.op == Op::Send);
    uint64_t client_rx = client_receives ? c.knobs.rx_depth : 0;
    return (per_qp + client_rx) * c.work.qps + c.knobs.rx_depth;
  }
  if (c.work.op == Op::Send || write_with_imm(c)) per_qp += c.knobs.rx_depth;
  return per_qp * c.work.qps;
}

uint64_t required_cq_entries(const TestConfig& c) {
  // --cq-scope process: one CQ holds every thread's share.
  return thread_cq_entries(c) * (c.knobs.cq_scope == CqScope::Process ? c.knobs.threads : 1);
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
  // The tagged knobs appear only when they differ from their defaults, so names stay
  // short and every point of a sweep over them stays distinct.
  for (const Knob& k : knobs()) {
    uint64_t v = k.get(c);
    if (!k.tag || v == k.def) continue;
    n += std::string("/") + k.tag;
    if (named_kind(k.kind)) n += std::string(":") + named_value(k.kind, v);
    else if (k.kind != KnobKind::Flag) n += ":" + std::to_string(v);
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
