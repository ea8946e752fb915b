// End-to-end tests on a real RDMA device: a real `rdmasweep server` and client, as
// two processes on one device (Soft-RoCE inside tools/rxe-lab, or any local device).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/setup/test_resources.hpp"
#include "core/engine/loop.hpp"
#include "core/measure/clock.hpp"
#include "core/verbs/device.hpp"
#include "core/verbs/gid.hpp"
#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

// Lines a failed command printed, for the assertion message.

// One server for the whole suite, on a port the kernel picks.
class EndToEnd : public ServerSuite {
 protected:
  Outcome client(std::vector<std::string> args, std::chrono::milliseconds timeout = 300s) {
    return run(client_argv(args), timeout);
  }

};

// Every measured point must be self-consistent.
static void check_point(const json& b, uint64_t qps, uint64_t iters, bool latency) {
  SCOPED_TRACE(b.dump());
  ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
  const json& cfg_size = b["bytes"];
  ASSERT_TRUE(cfg_size.is_number());
  double messages = b["messages"], bytes = b["bytes"];
  EXPECT_EQ(messages, static_cast<double>(qps * iters));
  std::smatch m;
  std::string name = b["name"];
  ASSERT_TRUE(std::regex_search(name, m, std::regex("size:([0-9]+)")));
  EXPECT_EQ(bytes, messages * std::stod(m[1]));
  EXPECT_GT(b["bytes_per_second"].get<double>(), 0);
  EXPECT_GT(b["items_per_second"].get<double>(), 0);
  EXPECT_GT(b["real_time"].get<double>(), 0);
  EXPECT_EQ(b["qp_messages_min"].get<double>(), static_cast<double>(iters));
  EXPECT_EQ(b["qp_messages_max"].get<double>(), static_cast<double>(iters));
  EXPECT_EQ(b.contains("lat_p50_us"), latency);
  if (latency) {
    double prev = 0;
    for (const char* k : {"lat_min_us", "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_p9999_us", "lat_max_us"}) {
      double v = b[k];
      EXPECT_GT(v, 0) << k;
      EXPECT_GE(v, prev) << k;
      prev = v;
    }
    EXPECT_GE(b["lat_mean_us"].get<double>(), b["lat_min_us"].get<double>());
    EXPECT_LE(b["lat_mean_us"].get<double>(), b["lat_max_us"].get<double>());
  }
}

// The client's wall time, split: every part timed, the measured windows among them,
// the parts and "other" adding up to the whole; the last line says the same.
void check_wall_time(const json& ctx, const std::string& err) {
  const json& w = ctx["wall_time"];
  ASSERT_TRUE(w.is_object()) << ctx.dump();
  double sum = 0;
  for (const char* k : {"setup_seconds", "warmup_seconds", "measured_seconds", "counters_seconds", "control_seconds",
                        "writing_seconds"}) {
    EXPECT_GE(w.value(k, -1.0), 0.0) << k;
    sum += w.value(k, 0.0);
  }
  EXPECT_GT(w.value("measured_seconds", 0.0), 0.0);
  EXPECT_GT(w.value("setup_seconds", 0.0), 0.0);
  EXPECT_NEAR(sum + w.value("other_seconds", 0.0), w.value("wall_seconds", 0.0), 1e-6);
  EXPECT_GE(w.value("other_seconds", -1.0), -1e-6) << "parts overlap: more time than the wall";
  EXPECT_EQ(ctx.value("time_summary", "").rfind("wall ", 0), 0u);
  EXPECT_NE(err.find(", measured "), std::string::npos) << err;
  EXPECT_NE(err.find(", other "), std::string::npos) << err;
}

struct OpMode {
  const char* op;
  const char* mode;
};

void PrintTo(const OpMode& m, std::ostream* os) { *os << m.op << "/" << m.mode; }

class EveryOpAndMode : public EndToEnd, public ::testing::WithParamInterface<OpMode> {};

TEST_P(EveryOpAndMode, OneFourAndSixteenQpsOnOneSharedCq) {
  const uint64_t iters = std::string(GetParam().mode) == "lat" ? 50 : 200;
  std::string out = dir_ + "/r.json";
  Outcome o = client({"--op", GetParam().op, "--mode", GetParam().mode, "-q", "1,4,16", "-s", "64,4096", "-n",
                      std::to_string(iters), "--warmup", "10", "--label", "commit=abc123", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  ASSERT_TRUE(r.is_object()) << "results are not valid JSON";
  EXPECT_EQ(r["context"]["labels"], json({{"commit", "abc123"}}));  // --label, for tools/history
  EXPECT_EQ(r["context"]["incomplete"], false);
  EXPECT_EQ(r["context"]["schema_version"], 1);
  EXPECT_FALSE(r["context"]["device"].get<std::string>().empty());
  // --clock auto: the choice, why, and (x86) the TSC's rate and drift, checked again at the end
  EXPECT_FALSE(r["context"].value("clock_reason", "").empty()) << r["context"].dump();
#ifdef RDMASWEEP_HAVE_TSC
  EXPECT_TRUE(r["context"]["clock_ghz"].is_number()) << r["context"].dump();
  EXPECT_TRUE(r["context"]["clock_drift_ppm"].is_number()) << r["context"].dump();
  EXPECT_TRUE(r["context"]["clock_end_drift_ppm"].is_number()) << r["context"].dump();
#endif
  ASSERT_EQ(r["benchmarks"].size(), 6u);
  bool lat = std::string(GetParam().mode) == "lat";
  const uint64_t qps[] = {1, 1, 4, 4, 16, 16};
  for (size_t i = 0; i < 6; ++i) {
    check_point(r["benchmarks"][i], qps[i], iters, lat);
    // QPs are connected once per QP count: the 4096-byte point runs on the 64-byte point's QPs.
    EXPECT_EQ(r["benchmarks"][i]["reused_qps"], i % 2 == 1 ? 1 : 0) << i;
  }

  json h = load_json(dir_ + "/r.hist.json");
  ASSERT_TRUE(h.is_object());
  EXPECT_EQ(h["points"].size(), 6u);
  for (const auto& [name, p] : h["points"].items()) {
    uint64_t per_qp_sum = 0;
    for (uint64_t v : p["per_qp_messages"][0]) per_qp_sum += v;
    EXPECT_GT(per_qp_sum, 0u) << name;
    EXPECT_EQ(p.contains("histogram"), lat) << name;
    if (lat) {
      uint64_t counted = 0;
      for (const auto& b : p["histogram"]["buckets"]) counted += b[2].get<uint64_t>();
      EXPECT_EQ(counted, per_qp_sum) << name;  // one sample per measured round trip
    }
  }
  // The table on stdout names every point.
  EXPECT_NE(o.out.find(std::string(GetParam().op) + "/" + GetParam().mode + "/qps:16/size:4096"), std::string::npos) << o.out;
  check_wall_time(r["context"], o.err);
}

INSTANTIATE_TEST_SUITE_P(Rdma, EveryOpAndMode,
                         ::testing::Values(OpMode{"send", "bw"}, OpMode{"send", "lat"}, OpMode{"write", "bw"},
                                           OpMode{"write", "lat"}, OpMode{"read", "bw"}, OpMode{"read", "lat"}),
                         [](const ::testing::TestParamInfo<OpMode>& p) { return std::string(p.param.op) + "_" + p.param.mode; });

TEST_F(EndToEnd, LoopKnobsAndDurationMode) {
  std::string out = dir_ + "/k.json";
  Outcome o = client({"--op", "write", "-q", "2", "-s", "256", "-D", "0.5", "-t", "64", "-l", "4", "-Q", "8",
                      "-I", "256", "--poll-batch", "4", "--cq-depth", "64", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json b = load_json(out)["benchmarks"][0];
  EXPECT_EQ(b["name"], "write/bw/qps:2/size:256/cq:64/tx:64/post:4/signal:8/inline:256/poll:4");
  EXPECT_GT(b["messages"].get<double>(), 0);
  EXPECT_NEAR(b["seconds"].get<double>(), 0.5, 0.4);
  // Duration mode stops each QP at a signaled WR: every QP completes a multiple of 8.
  EXPECT_EQ(static_cast<uint64_t>(b["qp_messages_min"].get<double>()) % 8, 0u);
}

// What "auto" inline and "the devices' limit" of READs in flight became, per point:
// perftest's defaults (inline up to 236 B SEND / 220 B WRITE, READs up to
// max_qp_rd_atom) bounded by this device; -I 0 and --outs N are taken as given.
TEST_F(EndToEnd, ResolvedInlineAndOutstandingReadsAreRecorded) {
  verbs::Device dev = verbs::Device::open("", 1);
  const uint32_t max_inline = dev.max_inline();
  const uint32_t reads = static_cast<uint32_t>(std::min(dev.attr().max_qp_rd_atom, dev.attr().max_qp_init_rd_atom));
  std::string out = dir_ + "/res.json";
  Outcome o = client({"--op", "send,write,read", "-s", "64", "-n", "50", "--warmup", "0", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  ASSERT_EQ(r["benchmarks"].size(), 3u);
  EXPECT_EQ(r["benchmarks"][0]["inline_size"].get<double>(), std::min(236u, max_inline));
  EXPECT_EQ(r["benchmarks"][1]["inline_size"].get<double>(), std::min(220u, max_inline));
  EXPECT_EQ(r["benchmarks"][2]["outs"].get<double>(), reads);
  EXPECT_FALSE(r["benchmarks"][2].contains("inline_size"));
  EXPECT_EQ(r["context"]["sweep"]["inline_size"], json::array({"auto"}));

  o = client({"--op", "write,read", "-s", "64", "-n", "50", "-I", "0", "--outs", "2", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  r = load_json(out);
  EXPECT_EQ(r["benchmarks"][0]["name"], "write/bw/qps:1/size:64/cq:4/inline:0/outs:2");
  EXPECT_EQ(r["benchmarks"][0]["inline_size"].get<double>(), 0);
  EXPECT_EQ(r["benchmarks"][1]["outs"].get<double>(), 2);
}

TEST_F(EndToEnd, RepetitionsAddAggregatesOnReusedQps) {
  std::string out = dir_ + "/a.json";
  Outcome o = client({"--op", "write", "--mode", "lat", "-s", "64", "-n", "256", "--warmup", "0", "--repetitions", "3",
                      "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  std::set<std::string> names;
  int reused = 0;
  for (const auto& b : r["benchmarks"]) {
    names.insert(b["name"].get<std::string>());
    if (b["run_type"] != "iteration") continue;
    check_point(b, 1, 256, true);
    reused += b["reused_qps"].get<int>();
  }
  EXPECT_EQ(reused, 2);  // repetitions 2 and 3 run on the QPs of the first
  for (const char* agg : {"_mean", "_median", "_stddev"})
    EXPECT_TRUE(names.count("write/lat/qps:1/size:64/cq:4" + std::string(agg))) << agg;
}

// The engine itself, without the tool: a point of the same shape reuses the QPs, and
// the receive area starts clean. WRITE latency sees each pong as a tag in memory; a
// tag left from the previous point would "complete" a round trip that never happened.
TEST(Resources, RetargetKeepsTheQpsAndClearsTheReceiveArea) {
  REQUIRE_DEVICE();
  verbs::Device dev = verbs::Device::open("", 1);
  GidEntry gid = select_gid(dev, -1);
  TestConfig c;
  c.work.op = Op::Write;
  c.work.mode = Mode::Lat;
  c.work.qps = 2;
  c.work.size = 64;
  TestResources res(dev, gid, c, Role::Initiator, 4096);
  EXPECT_EQ(res.slot_bytes, 4096u);
  uint32_t qpn = res.qps[1].qpn();

  TestConfig bigger = c;
  bigger.work.size = 4096;
  TestConfig too_big = c;
  too_big.work.size = 8192;
  TestConfig more_qps = c;
  more_qps.work.qps = 3;
  TestConfig other_op = bigger;
  other_op.work.op = Op::Read;
  EXPECT_TRUE(res.can_serve(bigger));
  EXPECT_FALSE(res.can_serve(too_big));
  EXPECT_FALSE(res.can_serve(more_qps));
  EXPECT_FALSE(res.can_serve(other_op));

  res.rx_region(1)[4095] = 1;
  res.rx_region(0)[63] = 7;
  res.retarget(bigger);
  EXPECT_EQ(res.cfg.work.size, 4096u);
  EXPECT_EQ(res.qps[1].qpn(), qpn);
  EXPECT_EQ(res.rx_region(1)[4095], 0);
  EXPECT_EQ(res.rx_region(0)[63], 0);
}

TEST_F(EndToEnd, InterruptedSweepKeepsCompletedPointsAndServerKeepsServing) {
  std::string out = dir_ + "/i.json";
  std::vector<std::string> argv{kBin, "client", "127.0.0.1", "--port", port_, "--no-progress", "--op", "write",
                                "-s", "64", "-q", "1:64:+1", "-n", "300", "--out", out};
  Process c(argv);
  // Wait until at least one point is on disk, then interrupt.
  auto deadline = std::chrono::steady_clock::now() + 120s;
  while (std::chrono::steady_clock::now() < deadline && c.running()) {
    json r = load_json(out);
    if (r.is_object() && !r["benchmarks"].empty()) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(c.running()) << "the sweep ended before it could be interrupted: " << c.err();
  c.signal(SIGINT);
  EXPECT_EQ(c.wait(60s), 130) << c.err();
  json r = load_json(out);
  ASSERT_TRUE(r.is_object()) << "results are not valid JSON after the interrupt";
  EXPECT_EQ(r["context"]["incomplete"], true);
  ASSERT_GE(r["benchmarks"].size(), 1u);
  EXPECT_FALSE(r["benchmarks"][0].value("error_occurred", false));
  EXPECT_TRUE(load_json(dir_ + "/i.hist.json").is_object());

  Outcome again = client({"--op", "write", "-s", "64", "-n", "50", "--out", dir_ + "/after.json"});
  EXPECT_EQ(again.code, 0) << both(again);
}

// A run estimated over 10 minutes says so on stderr once every check has passed (a
// refused one stays one line: MoreOutstandingWorkThanTheCqHolds); the test waits for that
// line, then interrupts the run.
TEST_F(EndToEnd, ALongRunSaysItsEstimateAsItStarts) {
  Process c({kBin, "client", "127.0.0.1", "--port", port_, "--no-progress", "--op", "write", "-s", "64",
             "--duration", "700", "--out", dir_ + "/long.json"});
  const std::string line = c.wait_for_stderr("(--plan for details)", 120s);
  EXPECT_EQ(line.rfind("rdmasweep: 1 point, about 11.", 0), 0u) << c.err();
  c.signal(SIGINT);
  EXPECT_EQ(c.wait(60s), 130) << c.err();
}

// Each bad input ends with one clear line on stderr and a non-zero exit, never a hang.
static void expect_clear_failure(const Outcome& o, const std::string& needle) {
  EXPECT_NE(o.code, 0) << both(o);
  EXPECT_NE(o.code, -1) << "timed out: " << both(o);
  EXPECT_NE(o.err.find(needle), std::string::npos) << both(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line: " << o.err;
}

TEST_F(EndToEnd, WrongDeviceName) {
  expect_clear_failure(client({"-d", "nosuchdev0", "--out", dir_ + "/x.json"}, 60s), "no RDMA device named 'nosuchdev0'");
}

TEST_F(EndToEnd, GidIndexThatDoesNotExist) {
  expect_clear_failure(client({"-x", "250", "--out", dir_ + "/x.json"}, 60s), "GID index 250 does not exist");
}

TEST_F(EndToEnd, SizeZero) {
  expect_clear_failure(client({"-s", "0", "--out", dir_ + "/x.json"}, 60s), "size");
}

TEST_F(EndToEnd, MoreQpsThanTheDeviceGives) {
  expect_clear_failure(client({"-q", "1048576", "--op", "write", "--out", dir_ + "/x.json"}, 60s), "max_qp");
}

TEST_F(EndToEnd, MoreOutstandingReadsThanTheDeviceAllows) {
  expect_clear_failure(client({"--op", "read", "--outs", "255", "--out", dir_ + "/x.json"}, 60s), "--outs");
}

TEST_F(EndToEnd, MoreOutstandingWorkThanTheCqHolds) {
  expect_clear_failure(client({"-q", "4096", "-r", "4096", "--out", dir_ + "/x.json"}, 60s), "max_cqe");
}

// --events: every operation and mode sleeps on a completion channel instead of
// spinning, and still moves every message; CPU time is reported for both sides. Its
// value is not held above 0: a side that sleeps through most of a 60-message window
// uses little CPU, and in the lab VM on a build machine far over its cores the client's
// read 0 once (as the SEND receiver's had before).
// Measurement.CpuCoversTheMeasuredWindowOnly holds the CPU figures to their window.
TEST_F(EndToEnd, EventsEveryOperationAndMode) {
  std::string out = dir_ + "/ev.json";
  Outcome o = client({"--op", "send,write,read", "--mode", "bw,lat", "--events", "-q", "1,2", "-s", "64", "-n", "60",
                      "--warmup", "5", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  ASSERT_EQ(r["benchmarks"].size(), 12u);
  for (const auto& b : r["benchmarks"]) {
    std::string name = b["name"];
    EXPECT_NE(name.find("/events"), std::string::npos) << name;
    check_point(b, name.find("qps:2/") != std::string::npos ? 2 : 1, 60, name.find("/lat/") != std::string::npos);
    EXPECT_GE(b["cpu_seconds"].get<double>(), 0) << name;
    EXPECT_GE(b["server_cpu_seconds"].get<double>(), 0) << name;
  }
}

// Shared receive queue: completions are routed by qp_num. The client checks that the
// server's per-QP receive counts equal what it sent on each QP, so a completion
// routed to the wrong QP fails the point.
TEST_F(EndToEnd, SharedReceiveQueueOneToAThousandQps) {
  std::string out = dir_ + "/srq.json";
  Outcome o = client({"--op", "send", "--srq", "-q", "1,64,1024", "-s", "64", "-n", "20", "--warmup", "2", "-r", "4096",
                      "--out", out},
                     600s);
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  ASSERT_EQ(r["benchmarks"].size(), 3u);
  const uint64_t qps[] = {1, 64, 1024};
  for (size_t i = 0; i < 3; ++i) {
    const json& b = r["benchmarks"][i];
    EXPECT_NE(b["name"].get<std::string>().find("/srq"), std::string::npos);
    check_point(b, qps[i], 20, false);
    EXPECT_EQ(b["qp_jain_index"].get<double>(), 1.0);
  }
  Outcome lat = client({"--op", "send", "--mode", "lat", "--srq", "-q", "4", "-s", "64", "-n", "30", "--out", dir_ + "/l.json"});
  ASSERT_EQ(lat.code, 0) << both(lat);
  check_point(load_json(dir_ + "/l.json")["benchmarks"][0], 4, 30, true);
}

// More outstanding work than one CQ can hold: an explicit error by default, or with
// --cq-policy cap the queues shrink until it fits, and the output says so.
TEST_F(EndToEnd, FourThousandQpsCappedToOneCq) {
  Outcome refused = client({"--op", "write", "-q", "4096", "-t", "64", "-Q", "8", "--out", dir_ + "/x.json"}, 60s);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("max_cqe"), std::string::npos) << refused.err;

  std::string out = dir_ + "/cap.json";
  Outcome o = client({"--op", "write", "-q", "4096", "-t", "64", "-Q", "8", "-s", "64", "-n", "8", "--warmup", "0",
                      "--cq-policy", "cap", "--out", out},
                     900s);
  ASSERT_EQ(o.code, 0) << both(o);
  EXPECT_NE(o.err.find("capped to fit"), std::string::npos) << o.err;
  json b = load_json(out)["benchmarks"][0];
  check_point(b, 4096, 8, false);
  std::string name = b["name"];
  EXPECT_NE(name.find("/tx:"), std::string::npos) << name;  // the capped depth is part of the point's name
}

TEST_F(EndToEnd, UnreachableServer) {
  // A port nobody listens on: refused connections are retried until --timeout.
  Outcome o = run({kBin, "client", "127.0.0.1", "--port", "1", "--timeout", "2", "--out", dir_ + "/x.json"}, 60s);
  expect_clear_failure(o, "cannot reach rdmasweep server at 127.0.0.1:1");
}

// --bind: a server on 127.0.0.1 is not reachable at the host's other addresses.
TEST_F(EndToEnd, BoundServerIsNotReachableElsewhere) {
  GidEntry g = select_gid(verbs::Device::open("", 1), -1);
  if (!g.ipv4_mapped) GTEST_SKIP() << "no IPv4 address on the RDMA netdev to try";
  std::string other = gid_to_string(g.gid).substr(7);  // "::ffff:a.b.c.d"
  Outcome o = run({kBin, "client", other, "--port", port_, "--timeout", "2", "--out", dir_ + "/x.json"}, 60s);
  expect_clear_failure(o, "cannot reach rdmasweep server at " + other + ":" + port_);
}

}  // namespace rdmasweep::test

namespace rdmasweep::test {

// Completion errors, provoked in one process on one device: the message names the QP,
// what was posted, the status and a hint; a receiver that never posts receives is
// reported after the idle timeout instead of hanging (RNR retries are infinite).
class CompletionErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_DEVICE();
  }
  // An initiator for `op` connected to a target made for `target_op` (so with only
  // that operation's remote access and receives).
  std::string run_against(Op op, Op target_op) {
    verbs::Device dev = verbs::Device::open("", 1);
    GidEntry gid = select_gid(dev, -1);
    TestConfig ic, tc;
    ic.work.op = op;
    tc.work.op = target_op;
    ic.work.size = tc.work.size = 64;
    TestResources init(dev, gid, ic, Role::Initiator);
    TestResources target(dev, gid, tc, Role::Target);
    init.connect(target.local_endpoint());
    target.connect(init.local_endpoint());
    RunControl ctl;
    ctl.idle_timeout = std::chrono::milliseconds(1500);
    try {
      run_bw_initiator(init, 50, 0, ctl);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(CompletionErrors, RemoteAccessNamesQpOperationStatusAndHint) {
  // The target of a SEND test registers its buffer with no remote access at all.
  std::string e = run_against(Op::Write, Op::Send);
  EXPECT_NE(e.find("QP 0"), std::string::npos) << e;
  EXPECT_NE(e.find("RDMA_WRITE"), std::string::npos) << e;
  // Devices report this as remote access or remote invalid request; the hint names access.
  EXPECT_TRUE(e.find("remote access error") != std::string::npos || e.find("remote invalid request") != std::string::npos)
      << e;
  EXPECT_NE(e.find("does not allow this access"), std::string::npos) << e;
}

TEST_F(CompletionErrors, WriteTargetRefusesReads) {
  // Least access: the target of a WRITE test opens its buffer for writing only.
  std::string e = run_against(Op::Read, Op::Write);
  EXPECT_NE(e.find("RDMA_READ"), std::string::npos) << e;
  EXPECT_TRUE(e.find("remote access error") != std::string::npos || e.find("remote invalid request") != std::string::npos)
      << (e.empty() ? "the READ was allowed" : e);
}

TEST_F(CompletionErrors, ReceiverWithoutReceivesIsReportedNotAHang) {
  // The target of a WRITE test posts no receives: every SEND meets receiver-not-ready.
  auto t0 = std::chrono::steady_clock::now();
  std::string e = run_against(Op::Send, Op::Write);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_FALSE(e.empty());
  EXPECT_TRUE(e.find("no completion for") != std::string::npos || e.find("RNR") != std::string::npos ||
              e.find("receive") != std::string::npos)
      << e;
}

}  // namespace rdmasweep::test
