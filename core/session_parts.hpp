// What the client's and the server's halves of a session (core/session.cpp,
// core/serve.cpp) share; not for use outside them.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/session.hpp"

namespace rdmasweep {

// Long enough for any test; a dead peer is noticed sooner by its silence, EOF or TCP keepalive.
constexpr std::chrono::milliseconds kTestWait = std::chrono::hours(24);

// --verbose: every QP's state and attributes after the point's QPs connect.
void log_qps(const PointResources& res, const char* side, const std::function<void(const std::string&)>& log);
// The NUMA node a point's memory goes on: the device's, when known.
int memory_node(const SessionOptions& opt);
// This side's HELLO, with where its threads run.
control::Hello hello_with_cpus(const LocalFabric& fabric, const SessionOptions& opt);
// A side's counters before a point; its deltas after (the point's whole exchange,
// outside the measured window).
CounterValues sample(const LocalFabric& f);
CounterValues sample_after(const LocalFabric& f, std::chrono::steady_clock::time_point last_traffic);

}  // namespace rdmasweep
