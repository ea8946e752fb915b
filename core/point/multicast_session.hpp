// Multicast between a client and servers, without MPI (`client --multicast GROUP` to
// servers started with `server --join GROUP`; the messages are in
// core/control/mcast_messages.hpp): the server's receiver, and the clock offset the
// client estimates for each server so that one-way latency is measured across hosts.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/control/channel.hpp"
#include "core/control/mcast_messages.hpp"
#include "core/engine/multicast.hpp"
#include "core/point/side.hpp"

namespace rdmasweep {

// The server's clock minus the client's (monotonic_ns(), as the datagrams carry),
// from PROBE round trips as NTP does: each
// sample (t1 sent, t2 the server's clock, t4 received) says offset = t2 - (t1 + t4) / 2,
// wrong by at most half its round trip; the sample with the shortest round trip is
// kept, and half that round trip is the uncertainty.
struct ClockOffset {
  bool known = false;  // false: no probe came back as a round trip of our clock
  int64_t offset_ns = 0;
  int64_t uncertainty_ns = 0;
  uint32_t rounds = 0;
};
// Round trips a receiver's offset is estimated from (client/server and mesh alike).
constexpr uint32_t kProbeRounds = 16;
ClockOffset offset_from_probes(const std::vector<std::array<uint64_t, 3>>& samples);
// A receiver row's latency label: one clock, or clocks aligned by `clock` (+- its uncertainty).
std::string mcast_latency_kind(bool same_host, const ClockOffset& clock);
// What a receiver's row or context says when there is no estimate.
constexpr const char* kNoOffsetEstimate =
    "no estimate: no probe came back as a round trip; one-way latency not measured";
// One PROBE to the receiver and its answer back, over whatever carries them.
using ProbeRoundTrip = std::function<control::Probe(const control::Probe&)>;
// Sends `rounds` PROBEs one after another and estimates from their answers.
ClockOffset estimate_clock_offset(uint32_t rounds, const ProbeRoundTrip& round_trip);
// The same over a control channel (client --multicast to a server's McastReceiver).
ClockOffset estimate_clock_offset(control::Channel& ch, uint32_t rounds, std::chrono::milliseconds timeout);
// The receiver's answer: the probe with this host's clock now as t2.
control::Probe answer_probe(control::Probe p);

// A server's side of --join, within its session with one client: answers PROBE, joins
// the group on MCAST_START and receives each MCAST_POINT's datagrams until the
// client's MCAST_SENT, then answers MCAST_RESULT.
class McastReceiver {
 public:
  McastReceiver(const LocalFabric& fabric, const SessionOptions& opt) : fabric_(fabric), opt_(opt) {}
  ~McastReceiver();
  // True when `m` was one of these messages (and was answered); false for any other.
  // Throws (after telling the client) when the request cannot be served.
  bool handle(control::Channel& ch, const control::Message& m);

 private:
  void start(control::Channel& ch, control::McastStart s);
  void point(control::Channel& ch, const control::McastPoint& p);

  const LocalFabric& fabric_;
  const SessionOptions& opt_;
  std::vector<TestConfig> points_;
  std::unique_ptr<McastEnd> end_;
};

}  // namespace rdmasweep
