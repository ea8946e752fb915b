// client --multicast / server --join without a device: the clock offset estimate and
// the messages' decoders (every bad input a ProtocolError).
#include <gtest/gtest.h>

#include "core/config/knobs.hpp"
#include "core/control/mcast_messages.hpp"
#include "core/control/protocol.hpp"
#include "core/point/multicast_session.hpp"

namespace rdmasweep {

namespace {

// A probe whose request took `out` ns and answer `back` ns, sent at client time t1 to a
// server whose clock is `offset` ahead: (t1, t2, t4).
std::array<uint64_t, 3> probe(uint64_t t1, uint64_t out, uint64_t back, int64_t offset) {
  return {t1, static_cast<uint64_t>(static_cast<int64_t>(t1 + out) + offset), t1 + out + back};
}

TEST(ClockOffset, TheShortestRoundTripDecidesAndHalfOfItIsTheUncertainty) {
  const int64_t offset = 5'000'000'000;  // the server's clock 5 s ahead
  // Symmetric 50 us each way: exact. An asymmetric slow probe (900 us out, 100 us back)
  // would be wrong by 400 us; a shorter symmetric one wins over it.
  ClockOffset c = offset_from_probes({probe(1'000'000, 900'000, 100'000, offset), probe(3'000'000, 50'000, 50'000, offset)});
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.offset_ns, offset);
  EXPECT_EQ(c.uncertainty_ns, 50'000);
  EXPECT_EQ(c.rounds, 2u);
  // Alone, the asymmetric probe is off by (out - back) / 2, within its uncertainty.
  c = offset_from_probes({probe(1'000'000, 900'000, 100'000, offset)});
  EXPECT_EQ(c.offset_ns, offset + 400'000);
  EXPECT_EQ(c.uncertainty_ns, 500'000);
  EXPECT_LE(std::llabs(c.offset_ns - offset), c.uncertainty_ns);
}

TEST(ClockOffset, AServerBehindGivesANegativeOffset) {
  const int64_t offset = -7'000'000'000'000;  // booted two hours later: its clock far behind
  ClockOffset c = offset_from_probes({probe(9'000'000'000'000, 20'000, 20'000, offset)});
  EXPECT_EQ(c.offset_ns, offset);
  EXPECT_EQ(c.uncertainty_ns, 20'000);
}

TEST(ClockOffset, NoUsableProbeIsNoEstimate) {
  ClockOffset c = offset_from_probes({{5'000, 1, 4'000}});  // t4 before t1: not a round trip
  EXPECT_FALSE(c.known);
  EXPECT_FALSE(offset_from_probes({}).known);
  EXPECT_EQ(c.offset_ns, 0);
  EXPECT_EQ(c.uncertainty_ns, 0);
}

TestConfig mcast_point() {
  TestConfig c;
  c.work.size = 1024;
  c.work.iters = 50;
  c.knobs.transport = Transport::Ud;
  return c;
}

TEST(McastMessages, RoundTripThroughTheirDecoders) {
  control::McastStart s{"239.255.82.9", {mcast_point(), mcast_point()}};
  s.points[1].work.size = 64;
  const control::McastStart s2 = control::mcast_start_from_json(control::to_json(s));
  EXPECT_EQ(s2.group, s.group);
  ASSERT_EQ(s2.points.size(), 2u);
  EXPECT_EQ(s2.points[1].work.size, 64u);
  const control::McastPoint p = control::mcast_point_from_json(control::to_json(control::McastPoint{1, 7, true, -42}), 2);
  EXPECT_EQ(p.index, 1u);
  EXPECT_EQ(p.tag, 7u);
  EXPECT_TRUE(p.latency);
  EXPECT_EQ(p.offset_ns, -42);
  control::McastArrived a;
  a.received = 55;
  a.warmup_received = 5;
  a.measured = 50;
  a.windowed = 49;
  a.latency = {{"lat_p50_us", 12.5}};
  const control::McastArrived a2 = control::mcast_arrived_from_json(control::to_json(a));
  EXPECT_EQ(a2.received, 55u);
  EXPECT_EQ(a2.windowed, 49u);
  EXPECT_EQ(a2.latency["lat_p50_us"], 12.5);
  EXPECT_TRUE(a2.histogram.is_null());
  control::Hello h;
  h.join = "ff05::1";
  EXPECT_EQ(control::hello_from_json(control::to_json(h)).join, "ff05::1");
}

TEST(McastMessages, BadInputIsAProtocolError) {
  using control::ProtocolError;
  nlohmann::json start = control::to_json(control::McastStart{"239.255.82.9", {mcast_point()}});
  nlohmann::json not_group = start;
  not_group["group"] = "192.0.2.1";
  EXPECT_THROW(control::mcast_start_from_json(not_group), ProtocolError);
  nlohmann::json write = start;
  write["points"][0]["op"] = "write";  // multicast sends
  EXPECT_THROW(control::mcast_start_from_json(write), ProtocolError);
  nlohmann::json none = start;
  none["points"] = nlohmann::json::array();
  EXPECT_THROW(control::mcast_start_from_json(none), ProtocolError);
  EXPECT_THROW(control::mcast_point_from_json(control::to_json(control::McastPoint{2, 1, false, 0}), 2), ProtocolError);
  nlohmann::json arrived = control::to_json(control::McastArrived{});
  arrived["measured"] = 3;  // more measured than received
  EXPECT_THROW(control::mcast_arrived_from_json(arrived), ProtocolError);
  arrived = control::to_json(control::McastArrived{});
  arrived["latency"] = {{"lat_p50_us", "fast"}};
  EXPECT_THROW(control::mcast_arrived_from_json(arrived), ProtocolError);
  EXPECT_THROW(control::probe_from_json({{"t1", -1}, {"t2", 0}}), ProtocolError);
}

}  // namespace

}  // namespace rdmasweep
