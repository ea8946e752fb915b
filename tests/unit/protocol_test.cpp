#include "core/config/knobs.hpp"
#include "core/control/protocol.hpp"

#include <gtest/gtest.h>

namespace rdmasweep::control {

static std::pair<Header, nlohmann::json> decode(const std::string& frame) {
  Header h = decode_header(reinterpret_cast<const uint8_t*>(frame.data()));
  EXPECT_EQ(frame.size(), kHeaderBytes + h.length);
  return {h, decode_payload(frame.substr(kHeaderBytes))};
}

TEST(Protocol, EndpointRoundTrip) {
  Endpoint e;
  e.lid = 7;
  e.gid = "::ffff:192.0.2.1";
  e.mtu = 3;
  e.rkey = 0xdeadbeef;
  e.addr = 0x7f0000001000ull;
  e.slot_bytes = 4096;
  e.regions = 2;
  e.qpn = {17, 18};
  e.psn = {0x123456, 0xabcdef};
  auto [h, body] = decode(encode_frame(MsgType::SetupOk, to_json(e)));
  EXPECT_EQ(h.type, MsgType::SetupOk);
  Endpoint b = endpoint_from_json(body, 2);
  EXPECT_EQ(b.gid, e.gid);
  EXPECT_EQ(b.rkey, e.rkey);
  EXPECT_EQ(b.addr, e.addr);
  EXPECT_EQ(b.qpn, e.qpn);
  EXPECT_EQ(b.psn, e.psn);
}

// Each side names the GID it picked in its HELLO (the results' context shows both);
// a HELLO from an older peer without them still decodes.
TEST(Protocol, HelloCarriesThePickedGidAndOlderHellosStillDecode) {
  Hello h;
  h.host = "rxe-a";
  h.device = "rxe0";
  h.gid = "::ffff:192.0.2.1";
  h.gid_index = 1;
  h.gid_type = "RoCE v2";
  h.cpus = "0-7: the device's NUMA node 0";
  h.beside = true;
  Hello back = hello_from_json(to_json(h));
  EXPECT_EQ(back.cpus, h.cpus);
  EXPECT_TRUE(back.beside);
  EXPECT_EQ(back.gid, "::ffff:192.0.2.1");
  EXPECT_EQ(back.gid_index, 1u);
  EXPECT_EQ(back.gid_type, "RoCE v2");
  nlohmann::json old = to_json(h);
  old.erase("gid");
  old.erase("gid_index");
  old.erase("gid_type");
  old.erase("cpus");
  old.erase("beside");
  EXPECT_FALSE(hello_from_json(old).beside);
  EXPECT_EQ(hello_from_json(old).gid, "");
  EXPECT_EQ(hello_from_json(old).cpus, "");
  old["gid_index"] = -1;
  EXPECT_THROW(hello_from_json(old), ProtocolError);
}

// --cm: the client's HELLO says it connects its QPs with RDMA-CM, and the server's
// SETUP_OK names the port of its RDMA-CM listener; messages without them (older
// peers, or no --cm) decode as "no".
TEST(Protocol, CmFlagAndListenerPortRoundTripAndDefaultToNone) {
  Hello h;
  h.cm = true;
  EXPECT_TRUE(hello_from_json(to_json(h)).cm);
  nlohmann::json old = to_json(h);
  old.erase("cm");
  EXPECT_FALSE(hello_from_json(old).cm);
  old["cm"] = "yes";
  EXPECT_THROW(hello_from_json(old), ProtocolError);

  Endpoint e;
  e.gid = "::ffff:192.0.2.1";
  e.qpn = {17};
  e.psn = {1};
  e.regions = 1;
  EXPECT_FALSE(to_json(e).contains("cm_port"));  // not --cm: nothing new on the wire
  EXPECT_EQ(endpoint_from_json(to_json(e), 1).cm_port, 0u);
  e.cm_port = 40001;
  EXPECT_EQ(endpoint_from_json(to_json(e), 1).cm_port, 40001u);
  nlohmann::json bad = to_json(e);
  bad["cm_port"] = 70000;
  EXPECT_THROW(endpoint_from_json(bad, 1), ProtocolError);
}

// The server's counter deltas ride on RESULT; a RESULT without them (older servers)
// still decodes, and a malformed set is refused rather than copied into the results.
TEST(Protocol, ResultCarriesTheServersCounterDeltas) {
  Counts c;
  c.per_qp = {5, 6};
  c.cpu_seconds = 0.5;
  c.has_counters = true;
  c.counters = {{"sent_pkts", 11}, {"duplicate_request", 0}};
  Counts back = counts_from_json(to_json(c), 2);
  EXPECT_TRUE(back.has_counters);
  EXPECT_EQ(back.counters, c.counters);
  nlohmann::json j = to_json(c);
  j.erase("counters");
  EXPECT_FALSE(counts_from_json(j, 2).has_counters);
  j["counters"] = {{"sent_pkts", -1}};
  EXPECT_THROW(counts_from_json(j, 2), ProtocolError);
  j["counters"] = nlohmann::json::array();
  EXPECT_THROW(counts_from_json(j, 2), ProtocolError);
}

// How long the server spent on its counters (the client's wall-time split): optional,
// 0 from older servers, checked when present.
TEST(Protocol, ResultSaysHowLongTheServersCountersTook) {
  Counts c;
  c.per_qp = {1, 2};
  c.counters_seconds = 0.025;
  EXPECT_DOUBLE_EQ(counts_from_json(to_json(c), 2).counters_seconds, 0.025);
  nlohmann::json j = to_json(c);
  j.erase("counters_seconds");
  EXPECT_EQ(counts_from_json(j, 2).counters_seconds, 0.0);
  j["counters_seconds"] = -1;
  EXPECT_THROW(counts_from_json(j, 2), ProtocolError);
}

// An atomic test's RESULT carries the server's words, a --bidir one the server's own
// direction; --mr-per-qp endpoints a key per region. Each is optional (older peers
// decode) and checked when present.
TEST(Protocol, AtomicSumReverseDirectionAndPerRegionKeys) {
  Counts c;
  c.per_qp = {5, 6};
  c.atomic_sum = 220;
  c.reverse = Counts::Reverse{{110, 110}, 200, 0.25};
  Counts back = counts_from_json(to_json(c), 2);
  ASSERT_TRUE(back.atomic_sum && back.reverse);
  EXPECT_EQ(*back.atomic_sum, 220u);
  EXPECT_EQ(back.reverse->sent, (std::vector<uint64_t>{110, 110}));
  EXPECT_EQ(back.reverse->messages, 200u);
  EXPECT_EQ(back.reverse->seconds, 0.25);
  nlohmann::json j = to_json(c);
  j.erase("atomic_sum");
  j.erase("reverse");
  back = counts_from_json(j, 2);
  EXPECT_FALSE(back.atomic_sum || back.reverse);
  j["reverse"] = {{"sent", {1}}, {"messages", 1}, {"seconds", 0.1}};  // one QP's count for two
  EXPECT_THROW(counts_from_json(j, 2), ProtocolError);
  j["reverse"] = {{"sent", {1, 1}}, {"messages", 1}, {"seconds", -1}};
  EXPECT_THROW(counts_from_json(j, 2), ProtocolError);

  Endpoint e;
  e.gid = "::1";
  e.regions = 2;
  e.qpn = {1, 2};
  e.psn = {3, 4};
  EXPECT_FALSE(to_json(e).contains("rkeys"));
  e.rkeys = {0x11, 0x22};
  EXPECT_EQ(endpoint_from_json(to_json(e), 2).rkeys, e.rkeys);
  nlohmann::json ej = to_json(e);
  ej["rkeys"] = {0x11};
  EXPECT_THROW(endpoint_from_json(ej, 2), ProtocolError);
}

TEST(Protocol, EndpointWithWrongQpCountIsRejected) {
  Endpoint e;
  e.gid = "::1";
  e.regions = 1;
  e.qpn = {1, 2, 3};
  e.psn = {1, 2, 3};
  EXPECT_THROW(endpoint_from_json(to_json(e), 2), ProtocolError);
}

TEST(Protocol, SetupCarriesAValidatedConfig) {
  TestConfig c;
  c.work.qps = 16;
  c.work.op = Op::Write;
  Endpoint e;
  e.gid = "::ffff:192.0.2.1";
  e.mtu = 3;
  e.rkey = 0xbeef;
  e.slot_bytes = 65536;
  e.regions = 1;  // bandwidth: one region for all QPs
  for (uint32_t q = 0; q < 16; ++q) {
    e.qpn.push_back(100 + q);
    e.psn.push_back(q);
  }
  SetupRequest req{c, 65536, true, {e}};  // reusing QPs: the client's endpoints (this test's rkey) come along
  SetupRequest back = setup_from_json(to_json(req));
  EXPECT_EQ(point_name(back.cfg), point_name(c));
  EXPECT_EQ(back.slot_bytes, 65536u);
  EXPECT_TRUE(back.reuse);
  ASSERT_EQ(back.peer.size(), 1u);
  EXPECT_EQ(back.peer[0].rkey, 0xbeefu);
  EXPECT_EQ(back.peer[0].qpn, e.qpn);
  nlohmann::json no_endpoints = to_json(req);
  no_endpoints.erase("endpoints");
  EXPECT_THROW(setup_from_json(no_endpoints), ProtocolError);
  SetupRequest fresh{c, 65536, false, {}};  // new QPs: the endpoints come in CONNECT
  EXPECT_FALSE(to_json(fresh).contains("endpoints"));
  EXPECT_FALSE(setup_from_json(to_json(fresh)).reuse);
  nlohmann::json bad = to_json(req);
  bad["config"]["size"] = 0;
  EXPECT_THROW(setup_from_json(bad), ProtocolError);
  nlohmann::json small_slot = to_json(req);
  small_slot["slot_bytes"] = 64;  // smaller than the message
  EXPECT_THROW(setup_from_json(small_slot), ProtocolError);
  nlohmann::json no_reuse = to_json(req);
  no_reuse.erase("reuse");
  EXPECT_THROW(setup_from_json(no_reuse), ProtocolError);
}

TEST(Protocol, HeaderRejectsGarbageVersionAndOversize) {
  std::string f = encode_frame(MsgType::Hello, {{"x", 1}});
  std::string bad_magic = f;
  bad_magic[0] = 'X';
  EXPECT_THROW(decode_header(reinterpret_cast<const uint8_t*>(bad_magic.data())), ProtocolError);
  std::string bad_version = f;
  bad_version[5] = 99;
  EXPECT_THROW(decode_header(reinterpret_cast<const uint8_t*>(bad_version.data())), ProtocolError);
  std::string bad_type = f;
  bad_type[7] = 77;
  EXPECT_THROW(decode_header(reinterpret_cast<const uint8_t*>(bad_type.data())), ProtocolError);
  std::string huge = f;
  huge[8] = 0x7f;
  EXPECT_THROW(decode_header(reinterpret_cast<const uint8_t*>(huge.data())), ProtocolError);
}

TEST(Protocol, PayloadMustBeAnObjectWithTypedFields) {
  EXPECT_THROW(decode_payload("not json"), ProtocolError);
  EXPECT_THROW(decode_payload("[1,2]"), ProtocolError);
  EXPECT_THROW(hello_from_json(nlohmann::json{{"protocol", "one"}}), ProtocolError);
  EXPECT_THROW(counts_from_json(nlohmann::json{{"per_qp", {1, -2}}, {"cpu_seconds", 0.5}}, 2), ProtocolError);
  EXPECT_THROW(counts_from_json(nlohmann::json::parse(R"({"per_qp": [1, 2], "cpu_seconds": -1})"), 2), ProtocolError);
  Counts c = counts_from_json(nlohmann::json::parse(R"({"per_qp": [1, 2], "cpu_seconds": 0.25})"), 2);
  EXPECT_EQ(c.per_qp, (std::vector<uint64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(c.cpu_seconds, 0.25);
}

}  // namespace rdmasweep::control
