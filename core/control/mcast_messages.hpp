// Multicast between a client and servers (`client --multicast GROUP` to servers started
// with `server --join GROUP`, whose HELLO names the group). After HELLO:
//   PROBE {t1} -> PROBE {t1, t2}: a few round trips, each reading the server's
//       CLOCK_MONOTONIC (t2) between the client's send (t1) and receipt, as NTP does;
//   MCAST_START {group, points} -> MCAST_START {}: the server joined the group, its QP
//       is attached and its receives are posted;
//   per point: MCAST_POINT {index, tag, latency, offset_ns} -> MCAST_POINT {}: the
//       server is receiving; the datagrams; MCAST_SENT {sent} -> MCAST_RESULT: what
//       arrived (McastArrived).
// Every decoder validates as the rest of the protocol does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"

namespace rdmasweep::control {

struct Probe {
  uint64_t t1 = 0;  // the client's clock when it sent the probe
  uint64_t t2 = 0;  // the server's clock when it answered (0 in the request)
};
nlohmann::json to_json(const Probe& p);
Probe probe_from_json(const nlohmann::json& j);

struct McastStart {
  std::string group;
  std::vector<TestConfig> points;  // validated as SETUP's, each a multicast point
};
nlohmann::json to_json(const McastStart& s);
McastStart mcast_start_from_json(const nlohmann::json& j);

struct McastPoint {
  uint32_t index = 0;  // into McastStart::points
  uint32_t tag = 0;    // carried by this point's datagrams
  // Record one-way latency: the server's clock minus the client's is offset_ns (0 on
  // one host), known to within the client's stated uncertainty.
  bool latency = false;
  int64_t offset_ns = 0;
};
nlohmann::json to_json(const McastPoint& p);
McastPoint mcast_point_from_json(const nlohmann::json& j, size_t points);

// What one receiver got of a point (core/engine/multicast.hpp's McastReceived, and
// its latency figures and histogram when it recorded latency).
struct McastArrived {
  uint64_t received = 0, warmup_received = 0, measured = 0, windowed = 0, late = 0, before_send = 0;
  double seconds = 0, cpu_seconds = 0;
  nlohmann::json latency;    // lat_* figures, or null
  nlohmann::json histogram;  // histogram_json, or null
};
nlohmann::json to_json(const McastArrived& a);
McastArrived mcast_arrived_from_json(const nlohmann::json& j);

}  // namespace rdmasweep::control
