#include "core/config/config.hpp"
#include "core/config/knobs.hpp"
#include "core/config/refusals.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rdmasweep {

static std::string error_of(const TestConfig& c) {
  try {
    validate(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsAreValid) { EXPECT_EQ(error_of(TestConfig{}), ""); }

TEST(Config, RejectsZeroSizeNamingTheField) {
  TestConfig c;
  c.work.size = 0;
  EXPECT_NE(error_of(c).find("size"), std::string::npos);
}

TEST(Config, RejectsZeroQps) {
  TestConfig c;
  c.work.qps = 0;
  EXPECT_NE(error_of(c).find("qps"), std::string::npos);
}

TEST(Config, ZeroSignalIntervalIsAnErrorNotACrash) {
  TestConfig c;
  c.knobs.signal_every = 0;
  EXPECT_NE(error_of(c).find("signal_every"), std::string::npos);
  EXPECT_FALSE(point_name(c).empty());  // error messages name the point
}

TEST(Config, SignalIntervalMustLeaveRoomForProgress) {
  TestConfig c;
  c.knobs.tx_depth = 16;
  c.knobs.signal_every = 16;
  c.knobs.post_list = 1;
  EXPECT_EQ(error_of(c), "");
  c.knobs.post_list = 2;  // 16 + 2 > 17: the queue could fill with no signaled WR
  EXPECT_NE(error_of(c).find("signal_every"), std::string::npos);
}

TEST(Config, PostListBoundedByDepth) {
  TestConfig c;
  c.knobs.tx_depth = 8;
  c.knobs.signal_every = 1;
  c.knobs.post_list = 9;
  EXPECT_NE(error_of(c).find("post_list"), std::string::npos);
}

TEST(CqSizing, CountsSignaledSendsAndReceivesPerQp) {
  TestConfig c;
  c.work.qps = 16;
  c.work.op = Op::Write;
  c.knobs.tx_depth = 128;
  c.knobs.signal_every = 32;
  EXPECT_EQ(required_cq_entries(c), 16u * 4);
  c.work.op = Op::Send;
  c.knobs.rx_depth = 512;
  EXPECT_EQ(required_cq_entries(c), 16u * (4 + 512));
  c.knobs.signal_every = 30;  // 128/30 rounds up to 5
  EXPECT_EQ(required_cq_entries(c), 16u * (5 + 512));
}

// --srq: the server's receives share one queue; a SEND --bidir client still receives
// on each of its QPs (its CQ overran with the shared queue's share alone).
TEST(CqSizing, SharedReceiveQueueCountsTheClientsOwnReceivesWhenItHasThem) {
  TestConfig c;
  c.work.qps = 4;
  c.work.op = Op::Send;
  c.knobs.tx_depth = 64;
  c.knobs.signal_every = 32;
  c.knobs.rx_depth = 4;
  c.knobs.srq = true;
  EXPECT_EQ(required_cq_entries(c), 4u * 2 + 4);
  c.knobs.bidir = true;
  EXPECT_EQ(required_cq_entries(c), 4u * (2 + 4) + 4);
}

TEST(CqSizing, ReadLatencySignalsEveryRequest) {
  TestConfig c;
  c.work.op = Op::Read;
  c.work.mode = Mode::Lat;
  c.knobs.tx_depth = 64;
  EXPECT_EQ(effective_signal_every(c), 1u);
  EXPECT_EQ(required_cq_entries(c), 64u);
}

TEST(CqSizing, ExplicitDepthBelowRequirementIsRejected) {
  TestConfig c;
  c.work.qps = 4;
  c.work.op = Op::Write;
  c.knobs.cq_depth = 15;  // 4 QPs x 4 signaled = 16
  EXPECT_NE(error_of(c).find("cq_depth"), std::string::npos);
  c.knobs.cq_depth = 16;
  EXPECT_EQ(error_of(c), "");
  EXPECT_EQ(cq_depth_for(c), 16u);
  c.knobs.cq_depth = 0;
  EXPECT_EQ(cq_depth_for(c), 16u);
}

TEST(CqSizing, CapHalvesDepthsUntilTheWorkFitsOneCq) {
  TestConfig c;
  c.work.op = Op::Send;
  c.work.qps = 4096;  // 4096 x (4 + 512) = 2.1M entries
  TestConfig t = cap_to_cq(c, 32767);
  EXPECT_LE(required_cq_entries(t), 32767u);
  EXPECT_NO_THROW(validate(t));
  EXPECT_LT(t.knobs.rx_depth, c.knobs.rx_depth);
  EXPECT_EQ(t.work.qps, 4096u);  // the QP count is what the user asked to measure
  // Already fitting: unchanged.
  TestConfig small;
  EXPECT_EQ(point_name(cap_to_cq(small, 32767)), point_name(small));
  // WRITE: only the send side can shrink, and the signaling rules stay valid.
  TestConfig w;
  w.work.op = Op::Write;
  w.work.qps = 30000;
  w.knobs.post_list = 8;
  TestConfig tw = cap_to_cq(w, 32767);
  EXPECT_LE(required_cq_entries(tw), 32767u);
  EXPECT_NO_THROW(validate(tw));
  // Impossible: more QPs than entries.
  TestConfig huge = w;
  huge.work.qps = 40000;
  EXPECT_THROW(cap_to_cq(huge, 32767), ConfigError);
}

TEST(Config, PointNameEncodesThePointAndNonDefaultKnobs) {
  TestConfig c;
  c.work.op = Op::Write;
  c.work.qps = 16;
  c.work.size = 4096;
  c.knobs.cq_depth = 1024;
  EXPECT_EQ(point_name(c), "write/bw/qps:16/size:4096/cq:1024");
  c.knobs.post_list = 4;
  EXPECT_EQ(point_name(c), "write/bw/qps:16/size:4096/cq:1024/post:4");
}

TEST(Config, JsonRoundTripAndUnknownKeys) {
  TestConfig c;
  c.work.op = Op::Read;
  c.work.mode = Mode::Lat;
  c.work.qps = 3;
  c.knobs.inline_size = 64;
  nlohmann::json j = c;
  TestConfig back;
  from_json(j, back);
  EXPECT_EQ(point_name(back), point_name(c));
  EXPECT_EQ(back.knobs.inline_size, 64u);
  j["bogus"] = 1;
  EXPECT_THROW(from_json(j, back), ConfigError);
  nlohmann::json bad = {{"qps", -1}};
  EXPECT_THROW(from_json(bad, back), ConfigError);
}

// Defaults no worse than perftest's: small SENDs and WRITEs go inline out of the box,
// up to perftest's sizes and never beyond what the device allows; READ never.
TEST(Config, InlineAutoIsPerftestsDefaultBoundedByTheDevice) {
  TestConfig c;
  EXPECT_EQ(c.knobs.inline_size, kInlineAuto);
  c.work.op = Op::Send;
  EXPECT_EQ(inline_limit(c, 1024), 236u);
  EXPECT_EQ(inline_limit(c, 64), 64u);
  c.work.op = Op::Write;
  EXPECT_EQ(inline_limit(c, 1024), 220u);
  c.work.op = Op::Read;
  EXPECT_EQ(inline_limit(c, 1024), 0u);
  c.work.op = Op::Write;
  c.knobs.inline_size = 0;  // -I 0: off
  EXPECT_EQ(inline_limit(c, 1024), 0u);
  EXPECT_NE(point_name(c).find("/inline:0"), std::string::npos) << point_name(c);
  c.knobs.inline_size = kInlineAuto;
  EXPECT_EQ(point_name(c).find("/inline"), std::string::npos) << point_name(c);
  nlohmann::json j = c;
  EXPECT_EQ(j["inline_size"], "auto");
  TestConfig back;
  back.knobs.inline_size = 0;
  from_json(j, back);
  EXPECT_EQ(back.knobs.inline_size, kInlineAuto);
}

TEST(Config, OutstandingReadsDefaultToTheDeviceAndShowWhenSet) {
  TestConfig c;
  c.work.op = Op::Read;
  EXPECT_EQ(c.knobs.outs, 0u);
  EXPECT_EQ(point_name(c).find("/outs"), std::string::npos);
  c.knobs.outs = 16;
  EXPECT_NE(point_name(c).find("/outs:16"), std::string::npos) << point_name(c);
  nlohmann::json j = c;
  TestConfig back;
  from_json(j, back);
  EXPECT_EQ(back.knobs.outs, 16u);
  c.knobs.outs = 256;  // max_rd_atomic is 8 bits
  EXPECT_THROW(validate(c), ConfigError);
}

TEST(Config, AtomicsAreEightByteRoundTripsWithoutInline) {
  TestConfig c;
  c.work.op = parse_op("faa");
  EXPECT_NE(error_of(c).find("faa: an atomic moves 8 bytes: --size 65536 must be 8"), std::string::npos) << error_of(c);
  c.work.size = 8;
  EXPECT_EQ(error_of(c), "");
  EXPECT_EQ(inline_limit(c, 1024), 0u);  // the operand travels in the WR, nothing to inline
  c.work.mode = Mode::Lat;
  EXPECT_EQ(effective_signal_every(c), 1u);  // each round trip is seen by its own completion
  EXPECT_EQ(std::string(to_string(parse_op("cas"))), "cas");
  EXPECT_TRUE(fetches(Op::Cas) && fetches(Op::Read) && !fetches(Op::Write));
  nlohmann::json j = c;
  EXPECT_EQ(j["op"], "faa");
  EXPECT_THROW(parse_op("xor"), ConfigError);
}

TEST(Config, UdCarriesSendOnlyAndSaysWhich) {
  TestConfig c;
  c.knobs.transport = Transport::Ud;
  EXPECT_EQ(error_of(c), "");  // SEND: fine (the size is checked against the device's MTU later)
  for (Op op : {Op::Write, Op::Read}) {
    c.work.op = op;
    EXPECT_EQ(error_of(c), std::string("transport: ud carries SEND only; --op ") + to_string(op) +
                               " needs --transport rc");
  }
}

TEST(Config, UdMessageOverTheGivenMtuIsRefusedNamingTheLimit) {
  TestConfig c;
  c.knobs.transport = Transport::Ud;
  c.knobs.mtu = 1024;
  c.work.size = 1024;
  EXPECT_EQ(error_of(c), "");
  c.work.size = 8192;
  EXPECT_EQ(error_of(c), "size: 8192 is over the UD limit of 1024 bytes (the path MTU, --mtu): a UD message is one "
                         "packet; lower --size or raise --mtu");
  c.knobs.transport = Transport::Rc;  // RC splits a message into packets
  EXPECT_EQ(error_of(c), "");
}

TEST(Config, UdNamesAndParsesItsTransportAndLeavesRcNamesAlone) {
  TestConfig c;
  const std::string rc = point_name(c);
  EXPECT_EQ(rc.find("transport"), std::string::npos);
  c.knobs.transport = Transport::Ud;
  EXPECT_EQ(point_name(c), rc + "/transport:ud");
  EXPECT_EQ(parse_transport("ud"), Transport::Ud);
  EXPECT_EQ(parse_transport("rc"), Transport::Rc);
  EXPECT_THROW(parse_transport("uc"), ConfigError);
  nlohmann::json j = c;
  EXPECT_EQ(j["transport"], "ud");
  TestConfig back = j.get<TestConfig>();
  EXPECT_EQ(back.knobs.transport, Transport::Ud);
}

TEST(Config, ParsesSizesWithUnits) {
  EXPECT_EQ(parse_size("64"), 64u);
  EXPECT_EQ(parse_size("4k"), 4096u);
  EXPECT_EQ(parse_size("1MiB"), 1u << 20);
  EXPECT_THROW(parse_size("x"), ConfigError);
  EXPECT_THROW(parse_size("12q"), ConfigError);
}

}  // namespace rdmasweep
