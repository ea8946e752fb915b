// One side of a point, whichever role it plays: this process's fabric, the session's
// options, and what the client's and the server's halves (core/point/session.cpp,
// core/point/serve.cpp) both do around a point.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "core/control/protocol.hpp"
#include "core/host/counters.hpp"
#include "core/host/inventory.hpp"
#include "core/host/placement.hpp"
#include "core/point/lanes.hpp"
#include "core/point/point_protocol.hpp"
#include "core/verbs/device.hpp"

namespace rdmasweep {

// This process's fabric, opened once: device, port and chosen GID.
struct LocalFabric {
  verbs::Device dev;
  GidEntry gid;
  PortCounters counters;  // may have none (available() false)
  static LocalFabric open(const FabricConfig& f);
  control::Hello hello() const;
};

struct SessionOptions {
  std::chrono::milliseconds timeout{10000};  // handshake steps and peer silence
  const std::atomic<bool>* interrupted = nullptr;
  // Client: once set, a duration-mode point's window ends (RunControl::wind_up).
  const std::atomic<bool>* wind_up = nullptr;
  // Client: seconds between throughput-over-time samples (--interval); 0: none;
  // negative: kDefaultInterval for duration-mode points, none for counted ones (whose
  // loop then never reads the clock mid-window).
  double interval = -1;
  // When set, every QP's state and attributes are logged after connection (--verbose).
  std::function<void(const std::string&)> verbose;
  // Where a point's threads run (--cpus, or the device's NUMA node); null: unpinned.
  const Placement* placement = nullptr;
  // Client: say in HELLO that this client runs beside another on purpose (Hello::beside).
  bool beside = false;
  // Client --cm: the server's address its QPs connect to with RDMA-CM (HELLO says so,
  // and the server listens for them); empty: QPs connect from the exchanged QP data.
  std::string cm_address;
  // Server --join: the multicast group it receives for a client's --multicast (HELLO
  // says so); empty: none.
  std::string join;
  // --progress-file: each point's steps as they happen (core/results/progress_file.hpp); null: none.
  const ProgressFile* progress_file = nullptr;
  // Client: called as each point's traffic begins (EndOptions::on_traffic).
  std::function<void()> on_traffic;
};

// Long enough for any test; a dead peer is noticed sooner by its silence, EOF or TCP keepalive.
constexpr std::chrono::milliseconds kTestWait = std::chrono::hours(24);

// --verbose: every QP's state and attributes after the point's QPs connect.
void log_qps(const PointResources& res, const char* side, const std::function<void(const std::string&)>& log);
// The NUMA node a point's memory goes on: the device's, when known.
int memory_node(const SessionOptions& opt);
// This side's HELLO, with where its threads run.
control::Hello hello_with_cpus(const LocalFabric& fabric, const SessionOptions& opt);
// The point protocol's options (core/point/point_protocol.hpp) for this side.
EndOptions end_options(const SessionOptions& opt, const LocalFabric& fabric);
// A side's counters before a point; its deltas after (the point's whole exchange,
// outside the measured window).
CounterValues sample(const LocalFabric& f);
CounterValues sample_after(const LocalFabric& f, std::chrono::steady_clock::time_point last_traffic);

}  // namespace rdmasweep
