// --transport ud on a real device: UD SEND in bw and lat mode (per-QP receive queues
// and a shared one) with exact counts of what was sent, received and lost, and the
// combinations UD cannot run refused in one line before any QP exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/verbs/device.hpp"
#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

static size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

class Ud : public ServerSuite {
 protected:
  // Runs the client with `args`, expects success and returns its results' benchmarks.
  json points(std::vector<std::string> args) {
    const std::string out = dir_ + "/r.json";
    args.insert(args.end(), {"--transport", "ud", "--out", out});
    Outcome o = run(client_argv(args), 300s);
    EXPECT_EQ(o.code, 0) << both(o);
    json r = load_json(out);
    if (!r.is_object()) return json::array();
    return r["benchmarks"];
  }
  // One point's counts: every message sent arrived (a healthy link, every message
  // within the receives posted), measured ones as asked.
  static void check_counts(const json& b, uint64_t qps, uint64_t iters, uint64_t warmup) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    EXPECT_NE(b["name"].get<std::string>().find("/transport:ud"), std::string::npos);
    EXPECT_EQ(b["messages"].get<double>(), static_cast<double>(qps * iters));
    EXPECT_EQ(b["messages_sent"].get<double>(), static_cast<double>(qps * (iters + warmup)));
    EXPECT_EQ(b["messages_received"].get<double>(), static_cast<double>(qps * (iters + warmup)));
    EXPECT_EQ(b["messages_lost"].get<double>(), 0);
  }
};

static uint64_t active_mtu() {
  verbs::Device dev = verbs::Device::open("", 1);
  return static_cast<uint64_t>(verbs::mtu_bytes(dev.port_attr().active_mtu));
}

TEST_F(Ud, SendBandwidthCountsEveryMessageUpToThePathMtu) {
  const std::string mtu = std::to_string(active_mtu());
  // 250 messages a QP: all of them within the 512 receives posted per QP.
  json b = points({"-q", "1,2", "-s", "64," + mtu, "-n", "200", "--warmup", "50"});
  ASSERT_EQ(b.size(), 4u);
  for (size_t i = 0; i < 4; ++i) check_counts(b[i], i < 2 ? 1 : 2, 200, 50);
  EXPECT_EQ(b[0]["name"], "send/bw/qps:1/size:64/cq:516/transport:ud");
  EXPECT_EQ(b[1]["reused_qps"], 1);  // the MTU-sized point on the 64-byte point's QPs
}

TEST_F(Ud, SendLatencyIsAPingPongWithExactCounts) {
  json b = points({"--mode", "lat", "-q", "1,2", "-s", "32", "-n", "100", "--warmup", "10"});
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    check_counts(b[i], i + 1, 100, 10);
    EXPECT_GT(b[i]["lat_p50_us"].get<double>(), 0);
  }
}

TEST_F(Ud, SharedReceiveQueueServesEveryQp) {
  // 4 QPs x 110 messages: within the SRQ's 512 receives.
  json b = points({"--srq", "-q", "4", "-s", "256", "-n", "100", "--warmup", "10"});
  ASSERT_EQ(b.size(), 1u);
  check_counts(b[0], 4, 100, 10);
  EXPECT_NE(b[0]["name"].get<std::string>().find("/srq"), std::string::npos);
}

TEST_F(Ud, MoreMessagesThanReceivesAreAllAccountedFor) {
  // 3000 messages against 64 receives: the receiver may be outrun (no flow control on
  // UD), but the point ends and what was lost is counted.
  json b = points({"-s", "64", "-r", "64", "-n", "2900", "--warmup", "100"});
  ASSERT_EQ(b.size(), 1u);
  SCOPED_TRACE(b[0].dump());
  ASSERT_FALSE(b[0].value("error_occurred", false)) << b[0].value("error_message", "");
  EXPECT_EQ(b[0]["messages_sent"].get<double>(), 3000);
  EXPECT_GT(b[0]["messages_received"].get<double>(), 0);
  EXPECT_EQ(b[0]["messages_received"].get<double>() + b[0]["messages_lost"].get<double>(), 3000);
  // The headline is what arrived: the measured window's share of the arrivals, over it.
  const double received = b[0]["messages_received"].get<double>(), seconds = b[0]["seconds"].get<double>();
  EXPECT_EQ(b[0]["messages"].get<double>(), std::round(2900 * received / 3000));
  EXPECT_NEAR(b[0]["items_per_second"].get<double>(), b[0]["messages"].get<double>() / seconds, 1e-6);
  EXPECT_NEAR(b[0]["sent_items_per_second"].get<double>(), 2900 / seconds, 1e-6);
  std::cout << "UD, 3000 messages against 64 receives: " << b[0]["messages_lost"] << " lost\n";
}

TEST_F(Ud, DurationModeEndsOnTheSendersCount) {
  const std::string out = dir_ + "/d.json";
  Outcome o = run(client_argv({"--transport", "ud", "--mode", "bw,lat", "-s", "64", "-D", "1", "--warmup", "20", "-r",
                               "4096", "--out", out}),
                  300s);
  ASSERT_EQ(o.code, 0) << both(o);
  json b = load_json(out)["benchmarks"];
  ASSERT_EQ(b.size(), 2u);
  for (const json& p : b) {
    SCOPED_TRACE(p.dump());
    EXPECT_GT(p["messages"].get<double>(), 0);
    EXPECT_EQ(p["messages_sent"].get<double>(), p["messages"].get<double>() + 20);
    EXPECT_EQ(p["messages_received"], p["messages_sent"]);
    EXPECT_EQ(p["messages_lost"].get<double>(), 0);
  }
}

TEST_F(Ud, VerboseShowsUdQpsWithTheirQkey) {
  Outcome o = run(client_argv({"--transport", "ud", "-s", "64", "-n", "10", "--warmup", "0", "-v", "--out",
                               dir_ + "/v.json"}),
                  120s);
  ASSERT_EQ(o.code, 0) << both(o);
  EXPECT_NE(o.err.find("UD qpn "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("state RTS, qkey 0x11111111"), std::string::npos) << o.err;
}

// Nothing listens on port 9: a refusal there came before any connection, so before any QP.
TEST_F(Ud, OverThePathMtuIsOneLineBeforeAnyQp) {
  Outcome o = run({kBin, "client", "127.0.0.1", "--port", "9", "--transport", "ud", "-s", "8192"}, 60s);
  EXPECT_NE(o.code, 0) << both(o);
  EXPECT_EQ(lines(o.err), 1u) << o.err;
  EXPECT_NE(o.err.find("--size 8192 is over the UD limit of " + std::to_string(active_mtu()) + " bytes (the path MTU"),
            std::string::npos)
      << o.err;
  Outcome m = run({kBin, "client", "127.0.0.1", "--port", "9", "--transport", "ud", "-s", "1024", "--mtu", "512"}, 60s);
  EXPECT_NE(m.code, 0) << both(m);
  EXPECT_EQ(lines(m.err), 1u) << m.err;
  EXPECT_NE(m.err.find("size: 1024 is over the UD limit of 512 bytes (the path MTU, --mtu)"), std::string::npos) << m.err;
}

TEST_F(Ud, WriteAndReadAreRefusedInOneLine) {
  for (const char* op : {"write", "read"}) {
    Outcome o = run({kBin, "client", "127.0.0.1", "--port", "9", "--transport", "ud", "--op", op}, 60s);
    EXPECT_NE(o.code, 0) << both(o);
    EXPECT_EQ(lines(o.err), 1u) << o.err;
    EXPECT_NE(o.err.find(std::string("transport: ud carries SEND only; --op ") + op + " needs --transport rc"),
              std::string::npos)
        << o.err;
  }
}

}  // namespace rdmasweep::test
