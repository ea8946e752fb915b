// A point measured beside a background workload (client --beside, hunt's isolation
// oracle): the background runs on a session of its own (its own QPs and threads; the
// server serves it alongside, as HELLO's `beside` asks), the point on the caller's
// session once the background's traffic flows. The point counts as measured beside it
// only when its whole window lies inside the background's traffic.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/point/session.hpp"

namespace rdmasweep {

struct BesideRun {
  std::optional<PointResult> point;       // the foreground beside the background; null: not run or failed
  std::string point_error;                // why it was not run
  std::optional<PointResult> background;  // null: failed (background_error says why)
  std::string background_error;
  // When the background's traffic began (its QPs connected, warm-up first) and ended.
  std::chrono::steady_clock::time_point traffic_began{}, traffic_ended{};
  // Both ran, and the point's window lay inside the background's traffic.
  bool overlapped() const;
};

// Opens the background's session (HELLO says beside) when needed: `background` holds it
// across runs, and a broken one is replaced.
using BesideConnect = std::function<std::unique_ptr<ClientSession>()>;

// Runs `bg` (in duration mode: give it long enough to cover the point's setup and
// window) on `background`, and `run_point` (the point on the caller's session) as soon
// as the background's traffic flows; when the background ends first (failed), the
// point is not run. The background's failure is caught into the result; the point's
// exception is rethrown once the background has ended too. With `wind_up` (the flag
// the background's session was opened with, SessionOptions::wind_up) the background's
// window ends once the point has run: its duration is then only a bound.
BesideRun run_beside(std::unique_ptr<ClientSession>& background, const BesideConnect& connect, const TestConfig& bg,
                     const std::function<std::optional<PointResult>()>& run_point,
                     std::atomic<bool>* wind_up = nullptr);

// The background's duration for a point whose window alone took `alone_seconds`: ten
// times that plus two seconds, so the point's setup and a slowdown of about 10x fit
// (3x + 1 s was too short once: a 64 B WRITE ping-pong on Soft-iWARP beside 4 QPs of
// 16 KiB WRITE on a busy host).
double background_seconds(double alone_seconds);

// A background that ends with the point (client --beside's wind-up) runs at most
// kBesideBoundFactor times the point's window alone plus two seconds (a 64 B WRITE
// ping-pong between two one-vCPU lab hosts beside 8 QPs of 64 KiB WRITE ran about 100x
// slower).
constexpr int kBesideBoundFactor = 160;
double background_bound_seconds(double alone_seconds);

}  // namespace rdmasweep
