#include "core/host/counters.hpp"
#include "core/results/model.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/process.hpp"

namespace rdmasweep {
namespace {

namespace fs = std::filesystem;

// A sysfs-like tree: ROOT/DEV/ports/1/{hw_counters,counters}/NAME holding a number.
struct FakeSysfs {
  std::string root = test::make_temp_dir("counters");
  void set(const std::string& dir, const std::string& name, const std::string& value) {
    fs::path p = fs::path(root) / "rxe0/ports/1" / dir;
    fs::create_directories(p);
    std::ofstream(p / name) << value << "\n";
  }
  ~FakeSysfs() { fs::remove_all(root); }
};

TEST(Counters, ListsWhateverTheDriverHasAndReadsThem) {
  FakeSysfs s;
  s.set("hw_counters", "sent_pkts", "100");
  s.set("hw_counters", "completer_retry_err", "3");
  s.set("hw_counters", "lifespan", "10");  // a refresh period, not a counter
  s.set("counters", "port_xmit_data", "250");
  PortCounters pc = PortCounters::open("rxe0", 1, s.root);
  ASSERT_TRUE(pc.available());
  EXPECT_EQ(pc.names(), (std::vector<std::string>{"completer_retry_err", "port_xmit_data", "sent_pkts"}));
  CounterValues v = pc.read();
  EXPECT_EQ(v["sent_pkts"], 100u);
  EXPECT_EQ(v["port_xmit_data"], 250u);
}

TEST(Counters, NoDirectoriesMeansNoCountersAndSaysWhere) {
  FakeSysfs s;
  PortCounters pc = PortCounters::open("rxe0", 1, s.root);
  EXPECT_FALSE(pc.available());
  EXPECT_NE(pc.where().find("rxe0/ports/1/hw_counters"), std::string::npos);
  EXPECT_TRUE(pc.read().empty());
}

// The wait for hw_counters' cache is the driver's lifespan plus one coarse jiffy,
// counted from the last traffic: none once that has passed, none without hw_counters.
TEST(Counters, SettleIsTheLifespanFromTheLastTraffic) {
  FakeSysfs s;
  s.set("hw_counters", "sent_pkts", "100");
  s.set("hw_counters", "lifespan", "300");
  PortCounters pc = PortCounters::open("rxe0", 1, s.root);
  EXPECT_EQ(pc.settle(), std::chrono::milliseconds(310));
  using SteadyClock = std::chrono::steady_clock;  // a unity batch may bring in detail::Clock
  SteadyClock::time_point t = SteadyClock::now();
  EXPECT_EQ(pc.read_after_traffic(t - std::chrono::seconds(2))["sent_pkts"], 100u);
  EXPECT_LT(SteadyClock::now() - t, std::chrono::milliseconds(250)) << "waited though the lifespan had passed";
  t = SteadyClock::now();
  pc.read_after_traffic(t);
  EXPECT_GE(SteadyClock::now() - t, std::chrono::milliseconds(310));
}

TEST(Counters, SettleWithoutLifespanFileOrHwCounters) {
  FakeSysfs s;
  s.set("hw_counters", "sent_pkts", "1");
  EXPECT_EQ(PortCounters::open("rxe0", 1, s.root).settle(), std::chrono::milliseconds(20));  // the kernel's default 10 ms
  FakeSysfs ib;
  ib.set("counters", "port_xmit_data", "250");  // asked of the device on every read: no cache
  ib.set("hw_counters", "lifespan", "10");
  PortCounters pc = PortCounters::open("rxe0", 1, ib.root);
  EXPECT_TRUE(pc.available());
  EXPECT_EQ(pc.settle(), std::chrono::milliseconds(0));
}

TEST(Counters, DeltaOfCountersPresentBothTimesAndAcrossAWrap) {
  CounterValues before{{"a", 5}, {"b", UINT64_MAX - 1}, {"gone", 1}};
  CounterValues after{{"a", 12}, {"b", 3}, {"new", 7}};
  CounterValues d = counter_delta(before, after);
  EXPECT_EQ(d, (CounterValues{{"a", 7}, {"b", 5}}));
}

// rxe and mlx5 name the same things differently: the normalized view agrees.
TEST(Counters, NormalizedViewMeansTheSameOnRxeAndMlx5) {
  nlohmann::json rxe = normalize_counters(
      {{"sent_pkts", 10}, {"rcvd_pkts", 9}, {"completer_retry_err", 2}, {"duplicate_request", 1}, {"rcvd_rnr_err", 0}});
  EXPECT_EQ(rxe["packets_sent"], 10);
  EXPECT_EQ(rxe["retransmits"], 3);
  EXPECT_EQ(rxe["rnr_naks"], 0);
  EXPECT_FALSE(rxe.contains("cnp_sent"));  // rxe has no congestion counters: absent, not 0
  nlohmann::json mlx5 = normalize_counters({{"port_xmit_packets", 10},
                                            {"port_xmit_data", 100},
                                            {"local_ack_timeout_err", 2},
                                            {"packet_seq_err", 1},
                                            {"np_cnp_sent", 4},
                                            {"out_of_sequence", 6}});
  EXPECT_EQ(mlx5["packets_sent"], 10);
  EXPECT_EQ(mlx5["bytes_sent"], 400);  // PortCounters count 4-byte words
  EXPECT_EQ(mlx5["retransmits"], 3);
  EXPECT_EQ(mlx5["cnp_sent"], 4);
  EXPECT_EQ(mlx5["out_of_sequence"], 6);
}

TEST(Counters, AnomaliesAreTheNonZeroTroubleCounters) {
  nlohmann::json n = normalize_counters(
      {{"sent_pkts", 1000}, {"completer_retry_err", 2}, {"rcvd_rnr_err", 0}, {"out_of_seq_request", 1}, {"np_cnp_sent", 9}});
  EXPECT_EQ(counter_anomalies(n, "client"),
            (std::vector<std::string>{"retransmits=2 (client)", "out_of_sequence=1 (client)"}));
  EXPECT_TRUE(counter_anomalies(normalize_counters({{"sent_pkts", 5}}), "server").empty());
}

}  // namespace
}  // namespace rdmasweep

namespace rdmasweep {
namespace {

static double figure(const PointResult& r, const std::string& name) {
  for (const auto& [k, v] : figures(r))
    if (k == name) return v;
  return -1;
}

// Both sides' deltas reach the entry: raw under counters.client/server, the
// normalized view summed over both as plain figures (what tools/compare gates on).
TEST(PointCounters, FiguresSumBothSidesAndFlagTrouble) {
  PointResult r;
  r.seconds = 1;
  r.has_client_counters = true;
  r.client_counters = {{"sent_pkts", 100}, {"completer_retry_err", 2}};
  r.has_server_counters = true;
  r.server_counters = {{"sent_pkts", 50}, {"duplicate_request", 1}, {"rcvd_rnr_err", 0}};
  EXPECT_EQ(figure(r, "packets_sent"), 150);
  EXPECT_EQ(figure(r, "retransmits"), 3);
  EXPECT_EQ(figure(r, "rnr_naks"), 0);
  EXPECT_EQ(figure(r, "cnp_sent"), -1);  // neither side has it
  nlohmann::json c = counters_json(r);
  EXPECT_EQ(c["client"]["completer_retry_err"], 2);
  EXPECT_EQ(c["server"]["sent_pkts"], 50);
  EXPECT_EQ(c["normalized"]["server"]["retransmits"], 1);
  EXPECT_EQ(point_anomalies(r), (std::vector<std::string>{"retransmits=2 (client)", "retransmits=1 (server)"}));
}

TEST(PointCounters, NoCountersMeansNoFieldsAtAll) {
  PointResult r;
  r.seconds = 1;
  EXPECT_TRUE(counters_json(r).is_null());
  EXPECT_EQ(figure(r, "packets_sent"), -1);
  EXPECT_TRUE(point_anomalies(r).empty());
}

}  // namespace
}  // namespace rdmasweep
