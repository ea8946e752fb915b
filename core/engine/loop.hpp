// The hot loops' interface. The loops live in loop_bw.* and loop_lat.* and do
// nothing but post, poll and count: every choice that does not change per message
// (opcode, signaling interval, inline, post list, addresses) is made before they start.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/engine/loop_resources.hpp"
#include "core/measure/histogram.hpp"
#include "core/measure/timeline.hpp"

namespace rdmasweep {

// How a loop is stopped from outside: checked every few thousand polls, and the stop
// flag also whenever the bandwidth initiator reads its clock.
struct RunControl {
  const std::atomic<bool>* interrupted = nullptr;     // set by SIGINT/SIGTERM
  // Duration mode: once set, the window ends as at its deadline (client --beside ends
  // its background when the point beside it has run). Read where the deadline is.
  const std::atomic<bool>* wind_up = nullptr;
  std::chrono::milliseconds idle_timeout{10000};      // no completion for this long: peer presumed dead
  const char* idle_hint = "the peer is gone or stuck";  // what that timeout's message says happened
  // A following loop once *settled is true (the leading end's DONE is in: on RC all it
  // sent has been acknowledged, so nothing more is on its way but what is in flight):
  // no completion for settle_timeout ends it, whatever idle_timeout says.
  const std::atomic<bool>* settled = nullptr;
  std::chrono::milliseconds settle_timeout{10000};
  // Called every few thousand empty polls; may throw to abort, or update the targets
  // of a receiving loop (the peer's DONE message in duration mode).
  std::function<void()> on_idle;
  // Called by an initiator as its measured window opens (after the warm-up, before the
  // window's clock starts; a latency loop at its first measured ping): --progress-file's
  // `measuring` line, the moment a test may act on what the figures will hold.
  std::function<void()> on_window;
};

class RunAborted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoopStats {
  double seconds = 0;                  // first post to last completion
  std::chrono::steady_clock::time_point began{}, ended{};  // that window (threads' windows combine)
  std::vector<uint64_t> per_qp;        // messages (bw) or round trips (lat) completed, per QP
  // User + system CPU of this process over the loop's measured window: the window
  // of `seconds` for the initiators; for the receiver and responder, from the end of
  // the client's warm-up (see their comments) to the loop's end (a UD receiver's last
  // arrival, the responder's last pong: LastMove).
  double cpu_seconds = 0;
  Timeline timeline;                   // initiators, when asked for an interval
  uint64_t messages() const;
};

// User + system CPU time the calling thread has used so far, in seconds: the loop's
// own, also where a mesh rank runs several flows' loops in threads side by side.
double loop_cpu_seconds();

struct LatStats : LoopStats {
  Histogram hist;                      // samples in ns: one-way for SEND/WRITE, round trip for READ
  std::vector<uint64_t> qp_min_ns, qp_max_ns, qp_sum_ns;
};

// A paced bandwidth initiator's figures (--rate, core/engine/loop_paced.hpp): what the
// schedule offered and how the sender kept it, beside the loop's own.
struct PacedStats : LoopStats {
  Histogram from_due, from_post;  // ns per message: from when it was due, from its post
  double offered_per_second = 0;  // the schedule's messages over the gaps they span
  uint64_t late = 0;              // posted more than 1 us after due (its QP full, or the loop behind)
  uint64_t late_full = 0;         // of those, the ones that found their QP full once due: the device held them
  double late_max_ns = 0, late_sum_ns = 0;
};

// Bandwidth initiator: posts `per_qp` operations on every QP (or until `duration`
// seconds pass, when > 0) as fast as the send queues allow; with `interval` > 0,
// records the timeline.
LoopStats run_bw_initiator(LoopResources& r, uint64_t per_qp, double duration, const RunControl& ctl,
                           double interval = 0);

// Paced bandwidth initiator (--rate): `per_qp` messages on every QP (or for `duration`
// seconds, when > 0), each posted when the schedule makes it due (this loop's share of
// the point's rate: its threads divide it), every one signaled.
PacedStats run_paced_initiator(LoopResources& r, uint64_t per_qp, double duration, const RunControl& ctl,
                               double interval = 0);

// Bandwidth receiver of SEND: reposts receives until `expected[q]` messages arrived on
// every QP. `expected` may grow or be set by ctl.on_idle (duration mode). Its CPU
// window starts when `warmup` messages arrived on every QP (the client measures
// only after its warm-up completed on all QPs).
// UD (`sender_done` set once the sender's DONE is in): messages may be lost, so after
// DONE it ends on what arrived once nothing more has for a second since the last
// arrival; its window and CPU time then end at that arrival.
LoopStats run_bw_receiver(LoopResources& r, std::vector<uint64_t>& expected, const RunControl& ctl,
                          uint64_t warmup = 0, const bool* sender_done = nullptr);

// Latency initiator: `warmup` then `iters` round trips per QP (or round trips for
// `duration` seconds, when > 0), one in flight per QP. Each QP measures its own
// window: from the end of its warm-up for `iters` round trips or `duration` seconds.
// `seconds` spans the first window's start to the last one's end; the timeline (with
// `interval` > 0) starts with the first window and counts measured round trips.
LatStats run_lat_initiator(LoopResources& r, uint64_t warmup, uint64_t iters, double duration, const RunControl& ctl,
                           double interval = 0);

// Latency responder (SEND, WRITE): answers every ping until *finished is set by
// ctl.on_idle. Its CPU window starts when it has answered `warmup` pings on some
// QP (the client's first measured ping comes next).
LoopStats run_lat_responder(LoopResources& r, const bool* finished, const RunControl& ctl, uint64_t warmup = 0);

}  // namespace rdmasweep
