// `rdmasweep mesh --pattern multicast` under a real mpirun: rank 0 sends to a group
// that ranks 1 and 2 joined through RDMA-CM, on one Soft-RoCE device in tools/rxe-lab.
// Every receiver is named and its counts are exact (the receive queue holds more than
// a point sends, so nothing may be lost on a loopback device).
#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/engine/multicast.hpp"
#include "tests/rdma/context_check.hpp"
#include "tests/support/mpi_run.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kIters = 50, kWarmup = 5, kSent = kIters + kWarmup;

// One sender row and one row per receiver, each point; all counts exact.
TEST(Multicast, OneSenderTwoReceiversCountedExactly) {
  REQUIRE_MESH();
  const std::string out = temp_dir() + "/mc.json";
  std::vector<std::string> argv = mpirun(3);
  for (const char* a : {"--pattern", "multicast", "--mode", "bw,lat", "-s", "64,1024", "-n", "50", "--warmup", "5",
                        "--out", out.c_str()})
    argv.push_back(a);
  Outcome o = run(argv, 600s);
  ASSERT_EQ(o.code, 0) << both(o);
  json doc = load(out);
  ASSERT_TRUE(doc.is_object()) << both(o);
  EXPECT_EQ(doc["context"]["pattern"], "multicast");
  EXPECT_EQ(doc["context"]["incomplete"], false);
  std::map<std::string, std::set<int>> rows;  // point -> dst ranks (-1: the sender)
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false));
    EXPECT_EQ(b["group"], "239.255.82.1");
    EXPECT_EQ(b["src_rank"], 0);
    EXPECT_EQ(b["messages_sent"].get<uint64_t>(), kSent);
    const int dst = b["dst_rank"].get<int>();
    // A receiver's window runs from its first measured arrival to its last: it holds the others.
    EXPECT_EQ(b["messages"].get<double>(), dst < 0 ? kIters : kIters - 1);
    rows[b["point"].get<std::string>()].insert(dst);
    if (dst < 0) {
      EXPECT_EQ(b["name"].get<std::string>().substr(b["name"].get<std::string>().size() - 6), "/src:0");
      EXPECT_GT(b["items_per_second"].get<double>(), 0);
      continue;
    }
    EXPECT_EQ(b["messages_received"].get<uint64_t>(), kSent);
    EXPECT_EQ(b["messages_lost"].get<uint64_t>(), 0u);
    EXPECT_EQ(b["loss_ratio"].get<double>(), 0);
    EXPECT_EQ(b["warmup_received"].get<uint64_t>(), kWarmup);
    EXPECT_EQ(b["late_from_earlier_point"].get<uint64_t>(), 0u);
    EXPECT_EQ(b["dst_host"], b["src_host"]);
    // One host, one CLOCK_MONOTONIC: the one-way latency is measured.
    EXPECT_TRUE(b["latency_measured"].get<bool>());
    EXPECT_GT(b["lat_p50_us"].get<double>(), 0);
    EXPECT_LE(b["lat_min_us"].get<double>(), b["lat_max_us"].get<double>());
    EXPECT_EQ(b["bytes"].get<double>(), (kIters - 1) * b["config"]["size"].get<double>());  // the window's messages
  }
  ASSERT_EQ(rows.size(), 4u) << both(o);
  for (const auto& [point, dsts] : rows) EXPECT_EQ(dsts, (std::set<int>{-1, 1, 2})) << point;
  json hist = load(out.substr(0, out.size() - 5) + ".hist.json");
  ASSERT_TRUE(hist.is_object());
  EXPECT_NE(hist.dump().find("one-way (send to arrival, one host's clock)"), std::string::npos);
}

// A datagram is one packet: a size over the port's MTU fails in one line before any
// QP is made, and the results file says why it is incomplete.
TEST(Multicast, SizeOverTheMtuRefusedInOneLine) {
  REQUIRE_MESH();
  const std::string out = temp_dir() + "/mc.json";
  std::vector<std::string> argv = mpirun(3);
  for (const char* a : {"--pattern", "multicast", "-s", "8192", "-n", "10", "--out", out.c_str()}) argv.push_back(a);
  Outcome o = run(argv, 300s);
  EXPECT_NE(o.code, 0) << both(o);
  size_t lines = 0;
  std::string line;
  std::istringstream err(o.err);
  while (std::getline(err, line))
    if (line.find("rdmasweep mesh:") != std::string::npos && line.find("MTU") != std::string::npos) ++lines;
  EXPECT_EQ(lines, 1u) << both(o);
  EXPECT_NE(o.err.find("--size 8192 is over the port's active MTU"), std::string::npos) << both(o);
  json doc = load(out);
  ASSERT_TRUE(doc.is_object()) << both(o);
  EXPECT_EQ(doc["context"]["incomplete"], true);
  EXPECT_EQ(doc["benchmarks"].size(), 0u);
}

// The engine without MPI (so the sanitizers run it too: tools/sanitize leaves the
// mpirun tests out): a sender and a receiver in one process, on one device, joined to
// one group; a point's datagrams counted exactly, then a second point's apart from it.
TEST(MulticastEngine, SenderAndReceiverInOneProcess) {
  REQUIRE_DEVICE();
  verbs::Device dev = verbs::Device::open("", 1);
  const GidEntry gid = select_gid(dev, -1);
  TestConfig c;
  c.work.size = 256;
  c.work.iters = kIters;
  c.work.warmup = kWarmup;
  c.knobs.transport = Transport::Ud;
  check_multicast_point(c);
  McastEnd receiver(dev, gid, "239.255.82.7", true, {c}, std::chrono::seconds(10));
  McastEnd sender(dev, gid, "239.255.82.7", false, {c}, std::chrono::seconds(10));
  std::atomic<bool> stop{false};
  for (uint32_t tag : {1u, 2u}) {
    SCOPED_TRACE(tag);
    c.work.mode = tag == 1 ? Mode::Bw : Mode::Lat;
    std::atomic<int64_t> expected{-1};
    McastReceived got;
    std::string err;
    std::thread t([&] {
      try {
        got = receiver.receive(c, tag, expected, true, stop);
      } catch (const std::exception& e) {
        err = e.what();
      }
    });
    const McastSent sent = sender.send(c, tag, stop);
    expected = static_cast<int64_t>(sent.sent);
    t.join();
    ASSERT_EQ(err, "");
    EXPECT_EQ(sent.sent, kSent);
    EXPECT_EQ(sent.measured, kIters);
    EXPECT_GT(sent.seconds, 0);
    EXPECT_EQ(got.received, kSent);
    EXPECT_EQ(got.warmup_received, kWarmup);
    EXPECT_EQ(got.measured, kIters);
    EXPECT_EQ(got.windowed, kIters - 1);  // the first measured arrival opens the window
    EXPECT_EQ(got.late, 0u);
    EXPECT_EQ(got.hist.count(), kIters);  // one clock: every measured datagram's latency
  }
}

// Without MPI: `rdmasweep server --join GROUP` receives what `rdmasweep client
// --multicast GROUP` sends (the same engine, over the control channel). On one host
// the receiver shares the sender's clock: latency measured, no offset estimated. A
// client asking for another group, or a server that joined none, is refused in one line.
TEST(MulticastClient, ServerJoinsAndCountsExactly) {
  REQUIRE_DEVICE();
  std::unique_ptr<Process> server;
  const std::string port = start_server(&server, RDMASWEEP_BIN, 120s, {"--join", "239.255.82.11"});
  ASSERT_FALSE(port.empty()) << (server ? server->err() : "");
  const std::string dir = make_temp_dir("rdmasweep-mc"), out = dir + "/mc.json";
  Outcome o = run({RDMASWEEP_BIN, "client", "127.0.0.1", "-p", port, "--multicast", "239.255.82.11", "--mode", "bw,lat",
                   "-s", "64,1024", "-n", "50", "--warmup", "5", "--out", out},
                  300s);
  ASSERT_EQ(o.code, 0) << both(o);
  json doc = load_json(out);
  ASSERT_TRUE(doc.is_object()) << both(o);
  const json& ctx = doc["context"];
  expect_common_context(ctx, "multicast");
  expect_sweep_context(ctx);
  EXPECT_EQ(ctx["incomplete"], false);
  EXPECT_EQ(ctx["group"], "239.255.82.11");
  ASSERT_EQ(ctx["receivers"].size(), 1u);
  EXPECT_EQ(ctx["receivers"][0]["same_host"], true);
  std::map<std::string, std::set<int>> rows;
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false));
    EXPECT_EQ(b["messages_sent"].get<uint64_t>(), kSent);
    const int dst = b["dst_rank"].get<int>();
    rows[b["point"].get<std::string>()].insert(dst);
    if (dst < 0) {
      EXPECT_EQ(b["messages"].get<double>(), kIters);
      continue;
    }
    EXPECT_EQ(b["messages_received"].get<uint64_t>(), kSent);
    EXPECT_EQ(b["messages_lost"].get<uint64_t>(), 0u);
    EXPECT_EQ(b["warmup_received"].get<uint64_t>(), kWarmup);
    EXPECT_EQ(b["messages"].get<double>(), kIters - 1);
    EXPECT_TRUE(b["latency_measured"].get<bool>());
    EXPECT_GT(b["lat_p50_us"].get<double>(), 0);
    EXPECT_EQ(b["latency_before_send"].get<uint64_t>(), 0u);  // one clock: never before its send
    EXPECT_NE(b.value("label", "").find("one host's clock"), std::string::npos);
  }
  ASSERT_EQ(rows.size(), 4u) << both(o);
  for (const auto& [point, dsts] : rows) EXPECT_EQ(dsts, (std::set<int>{-1, 1})) << point;

  // Another group: one line, exit 2, before anything is sent.
  o = run({RDMASWEEP_BIN, "client", "127.0.0.1", "-p", port, "--multicast", "239.255.82.12", "-n", "5", "--out",
           dir + "/other.json"},
          60s);
  EXPECT_EQ(o.code, 2) << both(o);
  EXPECT_NE(o.err.find("receives multicast group 239.255.82.11, not 239.255.82.12"), std::string::npos) << both(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << both(o);
}

TEST(MulticastClient, AServerThatJoinedNoneIsNamed) {
  REQUIRE_DEVICE();
  std::unique_ptr<Process> server;
  const std::string port = start_server(&server, RDMASWEEP_BIN, 120s);
  ASSERT_FALSE(port.empty()) << (server ? server->err() : "");
  Outcome o = run({RDMASWEEP_BIN, "client", "127.0.0.1", "-p", port, "--multicast", "239.255.82.13", "-n", "5", "--out",
                   make_temp_dir("rdmasweep-mc") + "/mc.json"},
                  60s);
  EXPECT_EQ(o.code, 2) << both(o);
  EXPECT_NE(o.err.find("receives no multicast: start it with `rdmasweep server --join 239.255.82.13`"), std::string::npos)
      << both(o);
}

}  // namespace
}  // namespace rdmasweep::test
