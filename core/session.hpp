// One test from both ends: the client side runs the measured operations and the
// server side follows the client's configuration. The command-line tool is a thin
// layer over these, so tests drive exactly what users run.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <exception>
#include <memory>
#include <string>

#include "core/connection.hpp"
#include "core/counters.hpp"
#include "core/control/channel.hpp"
#include "core/lanes.hpp"
#include "core/loop.hpp"
#include "core/placement.hpp"
#include "core/results.hpp"
#include "core/wall_time.hpp"

namespace rdmasweep {

// This process's fabric, opened once: device, port and chosen GID.
struct LocalFabric {
  verbs::Device dev;
  GidEntry gid;
  PortCounters counters;  // may have none (available() false)
  static LocalFabric open(const FabricConfig& f);
  control::Hello hello() const;
};

constexpr double kDefaultInterval = 0.1;

struct SessionOptions {
  std::chrono::milliseconds timeout{10000};  // handshake steps and peer silence
  const std::atomic<bool>* interrupted = nullptr;
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
};

// The interval a point samples throughput over time at: `asked` (--interval), or
// when negative kDefaultInterval for duration points and none for counted ones.
double effective_interval(double asked, const Workload& w);
// The results context's record of it: {"seconds", "points": "all" | "duration"}.
nlohmann::json interval_context(double asked);

// The initiator's measured run of one point on connected resources: the warm-up
// (bandwidth: a loop of its own; latency: inside the loop), the measured loop and the
// point's figures. `sent` gets what was posted per QP, warm-up included (what the
// peer must have received). The client and every mesh flow run exactly this.
// `after_warmup`, when set, runs between the bandwidth warm-up and the measured loop
// (threads of one point meet there, core/lanes.hpp).
PointResult measure_point(TestResources& res, const RunControl& ctl, double interval, std::vector<uint64_t>& sent,
                          const std::function<void()>& after_warmup = {});

// Moves a latency loop's figures (histogram, per-QP min/mean/max) into a result.
void take_latency(PointResult& out, LatStats&& st);

class ClientSession {
 public:
  ClientSession(LocalFabric& fabric, control::Channel channel, SessionOptions opt);
  const control::Hello& server() const { return server_; }
  // Runs one point end to end, on the previous point's QPs when they can serve it,
  // else on new ones with `slot` bytes per QP region (see plan_slots()). Throws on
  // failure; broken() then says whether the session can go on.
  PointResult run(const TestConfig& cfg, uint64_t slot = 0);
  // Tells the server why the client stops (interrupt, error) or that it is done.
  void close(const std::string& error = "");
  // Destroys the last point's QPs and buffers (after close(), or they go with the session).
  void release() { res_.reset(); }
  // True once a failure left client and server out of step: no further point can run.
  bool broken() const { return broken_; }
  // The last point's QPs and buffers (kept for reuse; its first thread's), or null.
  TestResources* resources() { return res_ ? &res_->lane(0) : nullptr; }

 private:
  // Sends SETUP and, for a new shape, creates this side while the server creates its
  // own. Returns what failed on this side (the server was told: ABANDON), else null.
  std::exception_ptr set_up(const TestConfig& cfg, uint64_t slot, bool reuse);
  PointResult run_connected(PointResources& res, bool reuse, std::chrono::steady_clock::time_point t0, Laps& laps);
  void throw_server_cause();  // on a flushed completion: the server's reported failure, if one comes

  LocalFabric& fabric_;
  control::Channel ch_;
  SessionOptions opt_;
  control::Hello server_;
  std::unique_ptr<PointResources> res_;  // kept across points of the same shape
  bool broken_ = false;
};

// Serves one connected client until it says BYE or fails. Returns the number of
// tests served; throws on a protocol or channel error (the caller logs and goes on).
// `admit`, when set, sees the client's HELLO first: a non-empty answer is why it is
// refused, sent to the client as an error (nothing served).
size_t serve_client(LocalFabric& fabric, control::Channel& ch, const SessionOptions& opt,
                    const std::function<void(const std::string&)>& log,
                    const std::function<std::string(const control::Hello&)>& admit = {});

}  // namespace rdmasweep
