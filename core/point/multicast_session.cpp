#include "core/point/multicast_session.hpp"

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <limits>
#include <string>
#include <thread>

#include "core/results/records.hpp"

namespace rdmasweep {

using control::MsgType;

ClockOffset offset_from_probes(const std::vector<std::array<uint64_t, 3>>& samples) {
  ClockOffset best;
  uint64_t best_rtt = std::numeric_limits<uint64_t>::max();
  for (const auto& [t1, t2, t4] : samples) {
    if (t4 < t1) continue;  // not a round trip of this clock
    const uint64_t rtt = t4 - t1;
    if (rtt >= best_rtt) continue;
    best_rtt = rtt;
    best.known = true;
    // t2 - (t1 + t4) / 2 without overflow: the midpoint is t1 + rtt / 2.
    best.offset_ns = static_cast<int64_t>(t2 - (t1 + rtt / 2));
    best.uncertainty_ns = static_cast<int64_t>((rtt + 1) / 2);
  }
  best.rounds = static_cast<uint32_t>(samples.size());
  return best;
}

std::string mcast_latency_kind(bool same_host, const ClockOffset& clock) {
  if (same_host) return "one-way (send to arrival, one host's clock)";
  char b[160];
  std::snprintf(b, sizeof b, "one-way (send to arrival, clocks aligned by an estimated offset, +-%.1f us)",
                static_cast<double>(clock.uncertainty_ns) / 1e3);
  return b;
}

ClockOffset estimate_clock_offset(uint32_t rounds, const ProbeRoundTrip& round_trip) {
  std::vector<std::array<uint64_t, 3>> samples;
  for (uint32_t i = 0; i < rounds; ++i) {
    const uint64_t t1 = monotonic_ns();
    const control::Probe back = round_trip(control::Probe{t1, 0});
    const uint64_t t4 = monotonic_ns();
    if (back.t1 != t1) throw control::ProtocolError("PROBE answered out of order");
    samples.push_back({t1, back.t2, t4});
  }
  return offset_from_probes(samples);
}

ClockOffset estimate_clock_offset(control::Channel& ch, uint32_t rounds, std::chrono::milliseconds timeout) {
  return estimate_clock_offset(rounds, [&](const control::Probe& p) {
    ch.send(MsgType::Probe, control::to_json(p));
    return control::probe_from_json(ch.expect(MsgType::Probe, timeout));
  });
}

control::Probe answer_probe(control::Probe p) {
  p.t2 = monotonic_ns();
  return p;
}

McastReceiver::~McastReceiver() = default;

bool McastReceiver::handle(control::Channel& ch, const control::Message& m) {
  switch (m.type) {
    case MsgType::Probe: ch.send(MsgType::Probe, control::to_json(answer_probe(control::probe_from_json(m.body)))); return true;
    case MsgType::McastStart: start(ch, control::mcast_start_from_json(m.body)); return true;
    case MsgType::McastPoint:
      if (!end_) throw control::ProtocolError("MCAST_POINT before MCAST_START");
      point(ch, control::mcast_point_from_json(m.body, points_.size()));
      return true;
    default: return false;
  }
}

void McastReceiver::start(control::Channel& ch, control::McastStart s) {
  try {
    if (opt_.join.empty())
      throw ConfigError("this server receives no multicast: start it with --join " + s.group);
    if (s.group != opt_.join)
      throw ConfigError("this server receives multicast group " + opt_.join + ", not " + s.group);
    end_.reset();
    end_ = std::make_unique<McastEnd>(fabric_.dev, fabric_.gid, s.group, /*receiver=*/true, s.points, opt_.timeout);
  } catch (const std::exception& e) {
    ch.send(MsgType::Error, {{"message", std::string("server cannot join: ") + e.what()}});
    throw;
  }
  points_ = std::move(s.points);
  ch.send(MsgType::McastStart, nlohmann::json::object());
}

// Receives on a thread of its own while this one waits for the client's count; what
// arrived goes back as MCAST_RESULT (or the receiver's failure as ERROR).
void McastReceiver::point(control::Channel& ch, const control::McastPoint& p) {
  McastReception reception(*end_, points_[p.index], p.tag, p.latency, p.offset_ns);
  ch.send(MsgType::McastPoint, nlohmann::json::object());  // receiving: the client may send
  const nlohmann::json sent = ch.expect(MsgType::McastSent, kTestWait);  // throws: the reception stops
  auto it = sent.find("sent");
  if (it == sent.end() || !it->is_number_unsigned()) throw control::ProtocolError("MCAST_SENT lacks 'sent'");
  reception.expect(it->get<uint64_t>());
  const McastReceived& got = reception.finish();
  if (!reception.error().empty()) {
    ch.send(MsgType::Error, {{"message", "server: " + reception.error()}});
    throw verbs::Error(reception.error());
  }
  ch.send(MsgType::McastResult, control::to_json(mcast_arrived(got, p.latency)));
}

}  // namespace rdmasweep
