// Faults at run time and bad peers: a dead server or client, garbage on the control
// port, signals. Each must end with a clear message in bounded time, keep completed
// results, and leave a server that goes on serving.
#include <gtest/gtest.h>
#include <signal.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/control/protocol.hpp"
#include "core/engine/fence.hpp"
#include "core/engine/loop.hpp"
#include "core/point/session.hpp"
#include "core/verbs/device.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_DEVICE();
    dir_ = make_temp_dir("rdmasweep-faults");
    start_server();
  }
  void start_server() {
    port_ = test::start_server(&server_, kBin, 120s, {"--timeout", "2"});
    ASSERT_FALSE(port_.empty()) << server_->err();
  }
  std::vector<std::string> client_argv(std::vector<std::string> args) {
    std::vector<std::string> argv{kBin, "client", "127.0.0.1", "--port", port_, "--no-progress", "--timeout", "5"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // Waits until the results file holds at least one completed point.
  static bool wait_for_first_point(Process& p, const std::string& out) {
    auto deadline = std::chrono::steady_clock::now() + 120s;
    while (std::chrono::steady_clock::now() < deadline && p.running()) {
      json r = load_json(out);
      if (r.is_object() && !r["benchmarks"].empty()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  void expect_server_still_serves() {
    Outcome o = run(client_argv({"--op", "write", "-s", "64", "-n", "50", "--out", dir_ + "/after.json"}), 120s);
    EXPECT_EQ(o.code, 0) << o.out << o.err << "\nserver log:\n" << server_->err();
  }

  std::unique_ptr<Process> server_;
  std::string port_, dir_;
};

TEST_F(Faults, ServerKilledMidSweep) {
  std::string out = dir_ + "/r.json";
  Process c(client_argv({"--op", "send", "-s", "64", "-q", "1:16:+1", "-n", "3000", "--out", out}));
  ASSERT_TRUE(wait_for_first_point(c, out)) << c.err();
  server_->signal(SIGKILL);
  auto t0 = std::chrono::steady_clock::now();
  int code = c.wait(60s);
  EXPECT_EQ(code, 1) << c.err();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s) << "the client took too long to notice";
  json r = load_json(out);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["context"]["incomplete"], true);
  ASSERT_GE(r["benchmarks"].size(), 2u);
  EXPECT_FALSE(r["benchmarks"][0].value("error_occurred", false));
  // The point that was running is named with the reason it failed.
  bool named = false;
  for (const auto& b : r["benchmarks"])
    if (b.value("error_occurred", false) && b["error_message"].get<std::string>().find("not run") == std::string::npos)
      named = true;
  EXPECT_TRUE(named) << r["benchmarks"].dump(1);
  EXPECT_NE(c.out().find("ERROR"), std::string::npos) << c.out();
}

TEST_F(Faults, ClientKilledMidTestServerGoesOn) {
  std::string out = dir_ + "/r.json";
  Process c(client_argv({"--op", "send", "-s", "64", "-q", "1:16:+1", "-n", "3000", "--out", out}));
  ASSERT_TRUE(wait_for_first_point(c, out)) << c.err();
  c.signal(SIGKILL);
  c.wait(10s);
  EXPECT_NE(server_->wait_for_stderr("dropped", 30s), "") << server_->err();
  expect_server_still_serves();
}

TEST_F(Faults, ClientInterruptedTellsTheServer) {
  std::string out = dir_ + "/r.json";
  Process c(client_argv({"--op", "write", "-s", "64", "-q", "1:32:+1", "-n", "2000", "--out", out}));
  ASSERT_TRUE(wait_for_first_point(c, out)) << c.err();
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait(30s), 130) << c.err();
  EXPECT_NE(server_->wait_for_stderr("interrupted", 30s), "") << server_->err();
  EXPECT_EQ(load_json(out)["context"]["incomplete"], true);
  expect_server_still_serves();
}

TEST_F(Faults, ServerInterruptedMidTest) {
  std::string out = dir_ + "/r.json";
  Process c(client_argv({"--op", "send", "-s", "64", "-q", "1:16:+1", "-n", "3000", "--out", out}));
  ASSERT_TRUE(wait_for_first_point(c, out)) << c.err();
  server_->signal(SIGTERM);
  EXPECT_EQ(server_->wait(30s), 130) << server_->err();
  EXPECT_EQ(c.wait(60s), 1) << c.err();
  EXPECT_EQ(load_json(out)["context"]["incomplete"], true);
}

TEST_F(Faults, GarbageAndBrokenClientsAreDroppedAndTheServerGoesOn) {
  auto frame = [](uint16_t version, uint16_t type, uint32_t len, const std::string& payload) {
    std::string s = "RDSW";
    for (int i = 1; i >= 0; --i) s.push_back(static_cast<char>(version >> (8 * i)));
    for (int i = 1; i >= 0; --i) s.push_back(static_cast<char>(type >> (8 * i)));
    for (int i = 3; i >= 0; --i) s.push_back(static_cast<char>(len >> (8 * i)));
    return s + payload;
  };
  struct Case {
    const char* what;
    std::string bytes;
    const char* logged;
  };
  const Case cases[] = {
      {"HTTP request", "GET / HTTP/1.0\r\n\r\n", "bad magic"},
      {"wrong protocol version", frame(99, 1, 2, "{}"), "protocol 99"},
      {"oversized length", frame(control::kProtocolVersion, 1, 0xffffffffu, ""), "over the limit"},
      {"truncated message", frame(control::kProtocolVersion, 1, 100, "{\"protocol\""), "sent nothing"},
      {"not JSON", frame(control::kProtocolVersion, 1, 5, "abcde"), "not a JSON object"},
      {"HELLO with wrong types", frame(control::kProtocolVersion, 1, 16, "{\"protocol\":\"x\"}"), "wrong type"},
      {"silent client", "", "sent nothing"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    EXPECT_TRUE(send_raw_and_wait_close(port_, k.bytes, 20s)) << "the server did not drop the connection";
    EXPECT_NE(server_->wait_for_stderr(k.logged, 10s), "") << server_->err();
  }
  expect_server_still_serves();
}

// The catalogue of bad inputs: each is one clear line and a non-zero exit, before
// any QP is created (or, for device limits, as soon as the device is opened).
struct BadInput {
  const char* name;
  std::vector<std::string> args;
  int code;
  const char* says;
};

// ctest shows the case's name, not its bytes.
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class BadInputs : public Faults, public ::testing::WithParamInterface<BadInput> {};

TEST_P(BadInputs, OneClearLine) {
  std::vector<std::string> args = GetParam().args;
  if (std::find(args.begin(), args.end(), "--out") == args.end()) {
    args.push_back("--out");
    args.push_back(dir_ + "/bad.json");
  }
  Outcome o = run(client_argv(args), 60s);
  EXPECT_EQ(o.code, GetParam().code) << o.err;
  EXPECT_NE(o.err.find(GetParam().says), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line: " << o.err;
}

static std::string write_bad_config() {
  // One a process: every rdma_tests process writes it as it starts, two at a time.
  std::string path = "/tmp/rdmasweep-bad-config-" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << R"({"op": "write", "qp": 4})";
  return path;
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, BadInputs,
    ::testing::Values(
        BadInput{"IterationsAndDuration", {"-n", "10", "-D", "1"}, 2, "exclude each other"},
        BadInput{"UnknownOption", {"--bogus"}, 2, "bogus"},
        BadInput{"NegativeSize", {"-s", "-5"}, 2, "size"},
        BadInput{"SizeOverLimit", {"-s", "2g"}, 2, "1 GiB"},
        BadInput{"UnknownConfigKey", {"--config", write_bad_config()}, 2, "unknown key 'qp'"},
        BadInput{"MissingConfigFile", {"--config", "/nonexistent/sweep.json"}, 2, "cannot read sweep file"},
        BadInput{"BadRange", {"-q", "8:1:x2"}, 2, "runs backwards"},
        BadInput{"SignalIntervalOverDepth", {"-t", "16", "-Q", "32"}, 2, "signal_every"},
        BadInput{"PortThatDoesNotExist", {"--ib-port", "2"}, 1, "has no port 2"},
        BadInput{"CqDepthOverDevice", {"--cq-depth", "40000"}, 1, "max_cqe"},
        BadInput{"CqTooSmallForTheWork", {"-q", "4", "--cq-depth", "8"}, 2, "cannot hold"},
        BadInput{"InlineOverDevice", {"--op", "write", "-s", "64", "-I", "60000"}, 1, "max inline data"},
        BadInput{"UnwritableOutput", {"--out", "/nonexistent-dir/r.json"}, 1, "cannot write results"},
        BadInput{"TimeoutOutOfRange", {"--timeout", "0"}, 2, "--timeout"}),
    [](const ::testing::TestParamInfo<BadInput>& p) { return std::string(p.param.name); });

}  // namespace rdmasweep::test

namespace rdmasweep::test {

// A disk that fills mid-sweep: every point still runs, the write error is reported
// once, and at the end the results go to stdout instead of being lost.
TEST_F(Faults, DiskFullMidSweepKeepsResultsInMemory) {
  std::string small = dir_ + "/small";
  mkdir(small.c_str(), 0755);
  if (std::system(("mount -t tmpfs -o size=24k tmpfs " + small + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "needs root to mount a small tmpfs";
  Outcome o = run(client_argv({"--op", "write", "--mode", "bw,lat", "-q", "1:8:+1", "-s", "64", "-n", "20", "--warmup", "2",
                               "--out", small + "/r.json"}),
                  300s);
  std::system(("umount " + small).c_str());
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.err.find("No space left on device"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("printing them to stdout"), std::string::npos) << o.err;
  size_t start = o.out.find("\n{\n");
  ASSERT_NE(start, std::string::npos) << o.out;
  json r = json::parse(o.out.substr(start + 1), nullptr, false);
  ASSERT_TRUE(r.is_object()) << "stdout does not end with the results JSON";
  EXPECT_EQ(r["benchmarks"].size(), 16u);  // every point, none lost
}

// A message larger than the port's max_msg_sz (8 MiB on rxe), where that is below the
// tool's own 1 GiB limit.
TEST_F(Faults, SizeOverThePortsMaxMessage) {
  uint64_t max = verbs::Device::open("", 1).port_attr().max_msg_sz;
  if (max == 0 || max >= (1u << 30)) GTEST_SKIP() << "the port takes messages up to the tool's own limit";
  Outcome o = run(client_argv({"--op", "write", "-s", std::to_string(2 * max), "--out", dir_ + "/x.json"}), 60s);
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.err.find("max_msg_sz"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

// rdmasweep doctor: what would break a run, each with its fix, and the exit code.
TEST_F(Faults, DoctorReportsEachProblemWithAFix) {
  Outcome fine = run({kBin, "doctor", "127.0.0.1", "--port", port_, "--config", RDMASWEEP_SOURCE_DIR "/configs/quick.json"}, 60s);
  EXPECT_EQ(fine.code, 0) << fine.out << fine.err;
  EXPECT_NE(fine.out.find("[ ok ] server"), std::string::npos) << fine.out;
  EXPECT_EQ(fine.out.find("[FAIL]"), std::string::npos) << fine.out;

  Outcome bad = run({kBin, "doctor", "127.0.0.1", "--port", "1", "--timeout", "2", "-q", "64", "--mode", "lat", "-s", "1m"}, 60s);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("cannot reach rdmasweep server"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("max_cqe"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("fix: start `rdmasweep server` there"), std::string::npos) << bad.out;

  Outcome gid = run({kBin, "doctor", "-x", "250"}, 60s);
  EXPECT_EQ(gid.code, 1) << gid.out;
  EXPECT_NE(gid.out.find("GID index 250 does not exist"), std::string::npos) << gid.out;
}

}  // namespace rdmasweep::test

namespace rdmasweep::test {

// The send-queue depth a device gives (max_qp_wr) is the limit, not a number of ours.
TEST_F(Faults, SendQueueDepthOverTheDevicesMaxQpWr) {
  uint64_t max = verbs::Device::open("", 1).attr().max_qp_wr;
  if (max >= (1u << 24)) GTEST_SKIP() << "the device takes send queues up to the tool's own limit";
  // A signal every 1024 WRs keeps the CQ small, so the send queue is what is over.
  Outcome o = run(client_argv({"--op", "write", "-s", "64", "-t", std::to_string(max + 1), "-Q", "1024", "--out",
                               dir_ + "/x.json"}),
                  60s);
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.err.find("send-queue depth " + std::to_string(max + 1) + " is over the device's max_qp_wr (" +
                       std::to_string(max) + ")"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

// A test's rkey dies with it: the server deregisters its remote-access window before
// it sends RESULT, so the client's QPs, still connected for the next point, are
// refused when they write with the old rkey. (A control: the same QPs and rkey
// worked during the test.)
TEST_F(Faults, RkeysDoNotOutliveTheirTest) {
  LocalFabric fabric = LocalFabric::open(FabricConfig{});
  SessionOptions so;
  so.timeout = 10s;
  ClientSession session(fabric, control::Channel::connect("127.0.0.1", static_cast<uint16_t>(std::stoi(port_)), so.timeout),
                        so);
  TestConfig c;
  c.work.op = Op::Write;
  c.work.qps = 1;
  c.work.size = 64;
  c.work.iters = 20;
  c.work.warmup = 0;
  PointResult r = session.run(c);
  EXPECT_EQ(r.messages, 20u);
  TestResources* res = session.resources();
  ASSERT_NE(res, nullptr);
  RunControl ctl;
  ctl.idle_timeout = 5s;
  std::string e;
  try {
    run_bw_initiator(*res, 5, 0, ctl);
    // iWARP completes a WRITE once TCP has it: the refusal comes behind it.
    if (fabric.dev.is_iwarp()) fence_writes({res}, 5s);
  } catch (const std::exception& x) {
    e = x.what();
  }
  // iWARP refuses the rkey by ending the connection (TERMINATE): siw reports it as a local
  // QP operation error, or first as the flush of the WRITEs still queued behind it, or
  // not at all: siw never completes what was posted after the TERMINATE came in (no
  // flush of a user QP's posts), so the fence's READ or the last WRITEs wait until the
  // timeout. Either way the old rkey did not work: where it does, every WRITE and the
  // READ behind them complete, and `e` stays empty.
  const bool iwarp_end = e.find("local QP operation error") != std::string::npos ||
                         e.find("Work Request Flushed Error") != std::string::npos ||
                         e.find("had not landed at the peer") != std::string::npos ||
                         e.find("no completion for 5 s") != std::string::npos;
  const bool refused = e.find("remote access error") != std::string::npos ||
                       e.find("remote invalid request") != std::string::npos || (fabric.dev.is_iwarp() && iwarp_end);
  EXPECT_TRUE(refused) << (e.empty() ? "the old rkey still worked" : e);
  session.close();
  expect_server_still_serves();
}

// One client at a time: a second client is told so within its --timeout, in one
// line, and the first one's run is not disturbed.
TEST_F(Faults, SecondClientIsToldTheServerIsBusy) {
  std::string out = dir_ + "/a.json";
  Process a(client_argv({"--op", "write", "-s", "64", "-D", "4", "-q", "1,2,3", "--out", out}));
  ASSERT_NE(server_->wait_for_stderr("connected", 60s), "") << server_->err();
  auto t0 = std::chrono::steady_clock::now();
  Outcome b = run(client_argv({"--op", "write", "-s", "64", "-n", "10", "--out", dir_ + "/b.json"}), 60s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
  EXPECT_EQ(b.code, 1) << b.err;
  EXPECT_NE(b.err.find("it serves one client at a time"), std::string::npos) << b.err;
  EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
  EXPECT_EQ(a.wait(180s), 0) << a.err();
  EXPECT_EQ(load_json(out)["benchmarks"].size(), 3u);
  expect_server_still_serves();
}

static std::string hello_frame(const control::Hello& h) {
  return control::encode_frame(control::MsgType::Hello, control::to_json(h));
}

// A server that speaks another control-protocol version: doctor says so with the fix;
// the client stops with one line.
TEST_F(Faults, ServerWithAnotherProtocolVersion) {
  std::string frame = hello_frame(control::Hello{});
  frame[4] = 0;  // bytes 4-5: the protocol version, big-endian
  frame[5] = static_cast<char>(control::kProtocolVersion + 1);
  FakeServer other(frame);
  std::string want = "peer speaks control protocol " + std::to_string(control::kProtocolVersion + 1);

  Outcome d = run({kBin, "doctor", "127.0.0.1", "--port", other.port(), "--timeout", "5"}, 60s);
  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("[FAIL] the server answered, but: " + want), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("fix: run the same rdmasweep version on both hosts"), std::string::npos) << d.out;

  Outcome c = run({kBin, "client", "127.0.0.1", "--port", other.port(), "--no-progress", "--timeout", "5", "--op", "write",
                   "-s", "64", "-n", "10", "--out", dir_ + "/v.json"},
                  60s);
  EXPECT_EQ(c.code, 1) << c.err;
  EXPECT_NE(c.err.find(want), std::string::npos) << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
}

// A listener that accepts and never answers (a stopped server, another service on the
// port): the client gives it up after its --timeout, in one line that names what can
// leave a HELLO unanswered, since a running server answers at once, even when busy.
TEST_F(Faults, AServerThatNeverAnswersIsGivenUpInOneLine) {
  FakeServer silent("");  // reads the client's HELLO and says nothing
  Outcome c = run({kBin, "client", "127.0.0.1", "--port", silent.port(), "--no-progress", "--timeout", "2", "--op",
                   "write", "-s", "64", "-n", "10", "--out", dir_ + "/silent.json"},
                  60s);
  EXPECT_EQ(c.code, 1) << c.err;
  EXPECT_NE(c.err.find("accepted the connection but did not answer within 2 s"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("not an rdmasweep server"), std::string::npos) << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
}

// A server on another fabric with a smaller device and another release: doctor names
// each difference that matters.
TEST_F(Faults, DoctorNamesAnIncompatibleServerDevice) {
  control::Hello h;
  h.tool_version = "0.0-other";
  h.host = "elsewhere";
  h.device = "mlx5_0";
  h.link_layer = "InfiniBand";
  h.active_mtu = 4096;
  h.max_qp = 2;
  h.max_cqe = 1024;
  FakeServer ib(hello_frame(h));
  Outcome d = run({kBin, "doctor", "127.0.0.1", "--port", ib.port(), "--timeout", "5", "-q", "4"}, 60s);
  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("[warn] server runs rdmasweep 0.0-other"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("[FAIL] the server's link layer is InfiniBand"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("than the server's device has (max_qp 2, max_cqe 1024)"), std::string::npos) << d.out;
}

}  // namespace rdmasweep::test
