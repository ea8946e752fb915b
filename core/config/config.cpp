#include "core/config/config.hpp"

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
  // READ latency needs every completion, and a paced point each message's own time.
  return ((fetches(c.work.op) && c.work.mode == Mode::Lat) || c.knobs.rate != kRateNone) ? 1 : c.knobs.signal_every;
}

uint64_t thread_cq_entries(const TestConfig& c) {
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
