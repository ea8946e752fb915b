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

#include "core/control/channel.hpp"
#include "core/setup/test_resources.hpp"
#include "core/setup/sizing.hpp"
#include "core/engine/loop.hpp"
#include "core/host/counters.hpp"
#include "core/host/placement.hpp"
#include "core/measure/wall_time.hpp"
#include "core/point/lanes.hpp"
#include "core/point/side.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

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
  // Called once each point's traffic begins (its QPs connected, warm-up first): what
  // a point run beside this one waits for (core/point/beside.hpp); null: nothing.
  void on_traffic(std::function<void()> f) { opt_.on_traffic = std::move(f); }
  // True once a failure left client and server out of step: no further point can run.
  bool broken() const { return broken_; }
  // The control channel after HELLO, for the messages outside the point protocol
  // (PROBE and MCAST_*: core/point/multicast_session.hpp).
  control::Channel& channel() { return ch_; }
  // The last point's QPs and buffers (kept for reuse; its first thread's), or null.
  TestResources* resources() { return res_ ? &res_->lane(0) : nullptr; }

 private:
  // Sends SETUP and, for a new shape, creates this side while the server creates its
  // own. Returns what failed on this side (the server was told: ABANDON), else null.
  std::exception_ptr set_up(const TestConfig& cfg, uint64_t slot, bool reuse);
  PointResult run_connected(PointResources& res, bool reuse, std::chrono::steady_clock::time_point t0, Laps& laps);

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
