// Control-channel messages. A frame is a 12-byte header (magic "RDSW", protocol
// version, type, payload length, all big-endian) and a JSON payload. Every decoder
// checks types, counts and ranges: nothing read from the network reaches the
// engine unvalidated.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/control/protocol_error.hpp"
#include "core/setup/endpoint.hpp"

namespace rdmasweep::control {

// 2: TICK heartbeats, Hello::timeout_ms; 3: SETUP first, ABANDON; 4: SEND credit counts in
// 64-byte slots (kCreditSlotWords), READ whole
constexpr uint16_t kProtocolVersion = 4;
constexpr size_t kHeaderBytes = 12;
constexpr uint32_t kMaxPayload = 64u << 20;  // room for the QP data of 65536 QPs
constexpr uint32_t kMaxQps = 1u << 20;  // matches the configuration limit

// PROBE and MCAST_*: core/control/mcast_messages.hpp (sent only to a server whose
// HELLO names a multicast group, so an older server never sees them).
enum class MsgType : uint16_t {
  Hello = 1, Setup, SetupOk, Connect, Ready, Done, Result, Error, Bye, Tick, Abandon,
  Probe, McastStart, McastPoint, McastSent, McastResult
};
constexpr MsgType kLastMsgType = MsgType::McastResult;

// Each side sends TICK this often from HELLO on (Channel::start_heartbeat), so the
// other can tell a silent peer (stopped, hung, its host gone) from a busy one.
constexpr std::chrono::milliseconds kTickEvery{500};
// How long a peer that sent nothing, not even a TICK, is waited for: its own
// --timeout (Hello::timeout_ms), and never less than a few missed TICKs.
std::chrono::milliseconds silence_bound(uint32_t peer_timeout_ms);
const char* to_string(MsgType t);


struct Header {
  MsgType type;
  uint32_t length;
};

std::string encode_frame(MsgType type, const nlohmann::json& body);
Header decode_header(const uint8_t* p);  // throws ProtocolError
nlohmann::json decode_payload(const std::string& payload);  // throws ProtocolError

// Who is at the other end: sent both ways at connection time; also fills the
// results' context with the peer's host and fabric.
struct Hello {
  uint32_t protocol = kProtocolVersion;
  std::string tool_version;
  std::string host;
  std::string device;
  std::string firmware;
  std::string link_layer;
  std::string kernel;
  uint32_t active_mtu = 0;
  double rate_gbps = 0;
  uint32_t max_qp = 0;
  uint32_t max_cqe = 0;
  uint32_t max_qp_rd_atom = 0;  // READs in flight per QP it takes both ways (the lower of its device's
                                // max_qp_rd_atom and max_qp_init_rd_atom); 0: not said (older peers)
  // The GID this side picked (each side picks its own): named in the results' context.
  // gid empty: not said (older peers).
  std::string gid;
  uint32_t gid_index = 0;
  std::string gid_type;
  // The cores this side runs a point's threads on, and why ("0-7: the device's NUMA
  // node 0"); empty from older peers.
  std::string cpus;
  // A client that runs beside another on purpose (`rdmasweep hunt`'s aggressor): the
  // server admits it while it serves someone else; any other client waits its turn.
  bool beside = false;
  // A client that connects its QPs with RDMA-CM (--cm): the server then listens for
  // them (Endpoint::cm_port) instead of connecting from the exchanged QP data.
  bool cm = false;
  // The sender's --timeout: how long the other side waits through its silence
  // (silence_bound); 0 from a peer that did not say.
  uint32_t timeout_ms = 0;
  // What the sender's device is and can do (capabilities_json): recorded in the
  // results' context; null from a peer that did not say.
  nlohmann::json capabilities;
  // A server started with --join GROUP: the multicast group it receives for a client's
  // --multicast; empty: none (or an older server).
  std::string join;
};

// Endpoint (core/setup/endpoint.hpp): everything the peer needs to connect its QPs to
// ours and address our buffer, carried in SETUP, SETUP_OK and CONNECT.

struct Counts {
  std::vector<uint64_t> per_qp;
  double cpu_seconds = 0;  // RESULT: the server's CPU time (user + system) during the test
  // RESULT: the server port's counter deltas over the point (raw driver names), when
  // its device has counters; absent from older servers.
  bool has_counters = false;
  std::map<std::string, uint64_t> counters;
  double counters_seconds = 0;  // RESULT: how long the server waited for and read them (0 from older servers)
  // RESULT of an atomic (cas, faa) test: the 8-byte words the client's atomics hit in the
  // server's buffer, summed (absent otherwise).
  std::optional<uint64_t> atomic_sum;
  // RESULT of a --bidir test: the server's own direction, measured as the client's is.
  struct Reverse {
    std::vector<uint64_t> sent;  // per QP, warm-up included
    uint64_t messages = 0;       // in its measured window
    double seconds = 0;          // that window
  };
  std::optional<Reverse> reverse;
};

nlohmann::json to_json(const Hello& h);
Hello hello_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Endpoint& e);
Endpoint endpoint_from_json(const nlohmann::json& j, uint32_t expected_qps);
// A point's endpoints, one per thread: with one thread the plain endpoint, else
// {"lanes": [endpoint, ...]}.
nlohmann::json to_json(const std::vector<Endpoint>& lanes);
std::vector<Endpoint> endpoints_from_json(const nlohmann::json& j, uint32_t threads, uint32_t qps_per_thread);
nlohmann::json to_json(const Counts& c);
Counts counts_from_json(const nlohmann::json& j, uint32_t expected_qps);
// The client's request for one point. `reuse`: keep the QPs of the previous point
// (same shape, see same_shape()), already connected; `slot_bytes`: buffer per QP region.
// For a new shape the client sends SETUP before it creates its own side, so both sides
// create at once; if its side then fails, it answers the SETUP_OK with ABANDON (body:
// {"message"}) instead of CONNECT, and the server frees its side and waits for the
// next SETUP: the session goes on, as when the client fails before any exchange.
// A SETUP that reuses QPs carries the client's endpoints (this test's rkey), and its
// SETUP_OK also means READY: one round trip instead of two.
struct SetupRequest {
  TestConfig cfg;
  uint64_t slot_bytes = 0;
  bool reuse = false;
  std::vector<Endpoint> peer;  // reuse only: the client's endpoints
};
nlohmann::json to_json(const SetupRequest& s);
SetupRequest setup_from_json(const nlohmann::json& j);  // validated
std::string error_from_json(const nlohmann::json& j);

}  // namespace rdmasweep::control
