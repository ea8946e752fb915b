// One small struct per concern, validated once before any verbs object exists.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/config/config_error.hpp"
#include "core/config/knob_table.hpp"
#include "core/config/rate.hpp"

namespace rdmasweep {

// Cas and Faa: 8-byte atomics (compare-and-swap, fetch-and-add) on the peer's buffer.
enum class Op : uint8_t { Send, Write, Read, Cas, Faa };
enum class Mode : uint8_t { Bw, Lat };
// --cq-scope: which QPs share a CQ when a point runs several threads.
enum class CqScope : uint8_t { Thread, Process };
// --transport: reliable connection (RC) or unreliable datagram (UD, SEND only).
enum class Transport : uint8_t { Rc, Ud };

const char* to_string(Op op);
inline bool is_atomic(Op op) { return op == Op::Cas || op == Op::Faa; }
// READ and the atomics: the initiator's own completion brings the answer back (a round
// trip), bounded by the QPs' max_rd_atomic; the target's CPU takes no part.
inline bool fetches(Op op) { return op == Op::Read || is_atomic(op); }
// What an atomic moves, whatever --size says.
constexpr uint64_t kAtomicBytes = 8;
// A latency point's size when the sweep gives none: perftest's ib_*_lat default.
constexpr uint64_t kLatDefaultBytes = 2;
const char* to_string(Mode m);
Op parse_op(const std::string& s);      // throws ConfigError
Mode parse_mode(const std::string& s);  // throws ConfigError
const char* to_string(CqScope s);
CqScope parse_cq_scope(const std::string& s);  // throws ConfigError
const char* to_string(Transport t);
Transport parse_transport(const std::string& s);  // throws ConfigError


// Which device, port and GID this side uses. Never sent to the peer: each side picks its own.
struct FabricConfig {
  std::string device;  // empty: the first device
  uint8_t port = 1;
  int gid_index = -1;  // -1: the port's RoCE v2 IPv4-mapped GID
};

// What is measured: the table's Workload knobs (core/config/knob_table.hpp), then how long.
struct Workload {
  RDMASWEEP_KNOBS(RDMASWEEP_KNOB_WORK_FIELD)
  uint64_t iters = 1000;   // measured messages (bw) or round trips (lat) per QP
  double duration = 0;     // seconds; > 0 selects duration mode and ignores iters
  uint64_t warmup = 100;   // per QP, excluded from every figure
};

// How the post/poll loop runs: the table's LoopKnobs rows (core/config/knob_table.hpp, where
// each one's meaning is). Everything here is decided before the loop starts.
struct LoopKnobs {
  RDMASWEEP_KNOBS(RDMASWEEP_KNOB_LOOP_FIELD)
};

struct TestConfig {
  Workload work;
  LoopKnobs knobs;
};

// --events with WRITE latency: the pong is an RDMA WRITE with immediate, whose receive
// completion wakes the waiter (a plain WRITE lands in memory without any event).
inline bool write_with_imm(const TestConfig& c) {
  return c.knobs.events && c.work.op == Op::Write && c.work.mode == Mode::Lat;
}

// --bidir SEND: each side's sending loop also takes the peer's messages.
inline bool both_ways_send(const TestConfig& c) { return c.knobs.bidir && c.work.op == Op::Send; }
inline bool is_ud(const TestConfig& c) { return c.knobs.transport == Transport::Ud; }
// A UD receive holds the 40-byte Global Routing Header before the payload.
constexpr uint32_t kUdGrhBytes = 40;

// perftest's default inline sizes for RC (DEF_INLINE_SEND_RC_UC, DEF_INLINE_WRITE);
// READ sends no data and never goes inline.
uint32_t default_inline(Op op);
// The inline size a point's QPs are created with on a device that allows
// `device_max` bytes: the explicit knob, or for auto default_inline bounded by the device.
uint32_t inline_limit(const TestConfig& c, uint32_t device_max);

// QPs of a point on each side: --qps per thread.
inline uint64_t total_qps(const TestConfig& c) { return uint64_t{c.work.qps} * c.knobs.threads; }
// CQs of a point on each side: one per thread, or one shared (--cq-scope process).
inline uint32_t cq_count(const TestConfig& c) { return c.knobs.cq_scope == CqScope::Process ? 1 : c.knobs.threads; }

// Signal interval the loops actually use: READ latency needs every completion, and a
// paced point (--rate) every message's.
uint32_t effective_signal_every(const TestConfig& c);

// CQ entries one side can have outstanding: per QP, its signaled sends plus, for
// SEND, its posted receives. The shared CQ must hold at least this many.
uint64_t required_cq_entries(const TestConfig& c);
// One thread's QPs (and its shared receive queue): what its own CQ must hold, and
// what of a shared CQ (--cq-scope process) can be its at once.
uint64_t thread_cq_entries(const TestConfig& c);
uint32_t cq_depth_for(const TestConfig& c);  // knobs.cq_depth, or the requirement when 0

// --cq-policy cap: the same point with its queue depths halved (receive depth first,
// then send depth, keeping the signaling rules valid) until everything its QPs can
// have outstanding fits one CQ of `max_cqe` entries. Throws ConfigError when not even
// one WR per QP fits. An explicit cq_depth is never changed.
TestConfig cap_to_cq(const TestConfig& c, uint64_t max_cqe);

// Parses "4096", "4k", "64K", "1m", "1MiB" into bytes; throws ConfigError.
uint64_t parse_size(const std::string& s);

}  // namespace rdmasweep
