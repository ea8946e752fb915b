// --cm on a real device: the QPs are connected by RDMA-CM (librdmacm) to the server's
// address on its RDMA interface, the sweep still runs over the control channel, and
// every message is counted exactly as without --cm.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/verbs/device.hpp"
#include "core/verbs/gid.hpp"
#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;


class Cm : public ServerSuite {
 protected:
  static constexpr double kSlack = 5;
  void SetUp() override {
    ServerSuite::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    // The server's address on its RDMA interface: the IPv4 address of the device's
    // RoCE v2 GID (192.0.2.1 on the lab's dummy0).
    verbs::Device dev = verbs::Device::open("", 1);
    if (dev.is_iwarp())
      GTEST_SKIP() << dev.name() << " is iWARP: these tests check RoCE v2 GIDs; Provider.* connects it through RDMA-CM";
    GidEntry g = select_gid(dev, -1);
    if (!g.ipv4_mapped) GTEST_SKIP() << "no IPv4 address on the RDMA netdev for RDMA-CM to resolve";
    addr_ = gid_to_string(g.gid).substr(7);  // "::ffff:a.b.c.d"
  }
  Outcome client(std::vector<std::string> args, std::chrono::milliseconds timeout = 300s) {
    args.insert(args.begin(), {"--cm", "--cm-address", addr_});
    return run(client_argv(args), timeout);
  }
  // What a run of this binary that fails at once costs here: starting (providers, and a
  // sanitizer's start-up in sanitized builds) and exiting. A wait bounded by --timeout 3
  // ends within 3 s plus this plus kSlack (the failed point's own work: under ASan in the
  // VM, 2.5 s more than without); one bounded by the default 10 s would not.
  double startup() {
    auto t0 = std::chrono::steady_clock::now();
    Outcome o = run({RDMASWEEP_BIN, "devices"}, 60s);
    EXPECT_EQ(o.code, 0) << both(o);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::string addr_;
};

// Every point's counts are exact: each QP moved `iters` messages of the point's size.
static void expect_exact(const json& b, uint64_t qps, uint64_t iters) {
  SCOPED_TRACE(b.dump());
  ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
  std::smatch m;
  std::string name = b["name"];
  ASSERT_TRUE(std::regex_search(name, m, std::regex("size:([0-9]+)")));
  EXPECT_EQ(b["messages"].get<double>(), static_cast<double>(qps * iters));
  EXPECT_EQ(b["bytes"].get<double>(), static_cast<double>(qps * iters) * std::stod(m[1]));
  EXPECT_EQ(b["qp_messages_min"].get<double>(), static_cast<double>(iters));
  EXPECT_EQ(b["qp_messages_max"].get<double>(), static_cast<double>(iters));
}

// SEND, WRITE and READ bandwidth on 4 QPs, two sizes each on the same QPs (connected
// once by RDMA-CM per operation); the context says how the QPs were connected and
// which GID routing chose.
TEST_F(Cm, SendWriteReadBandwidthOnFourQpsTwoSizesExactCounts) {
  std::string out = dir_ + "/cm.json";
  Outcome o = client({"--op", "send,write,read", "--mode", "bw", "-q", "4", "-s", "64,4096", "-n", "200", "--warmup",
                      "10", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  EXPECT_NE(o.err.find("QPs connect with RDMA-CM to " + addr_), std::string::npos) << o.err;
  json r = load_json(out);
  ASSERT_TRUE(r.is_object());
  const json& c = r["context"]["connection"];
  EXPECT_EQ(c["method"], "rdma_cm") << c.dump();
  EXPECT_EQ(c["address"], addr_);
  EXPECT_EQ(c["gid"], "::ffff:" + addr_);
  EXPECT_FALSE(c["device"].get<std::string>().empty());
  ASSERT_EQ(r["benchmarks"].size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    expect_exact(r["benchmarks"][i], 4, 200);
    EXPECT_EQ(r["benchmarks"][i]["reused_qps"], i % 2 == 1 ? 1 : 0) << i;
  }
}

// Latency (every operation) and two threads of QPs each: the responders' receives
// and every lane's QPs are connected by RDMA-CM too.
TEST_F(Cm, LatencyAndTwoThreadsExactCounts) {
  std::string lat = dir_ + "/lat.json";
  Outcome o = client({"--op", "send,write,read", "--mode", "lat", "-q", "2", "-s", "64", "-n", "50", "--out", lat});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(lat);
  ASSERT_EQ(r["benchmarks"].size(), 3u);
  for (const json& b : r["benchmarks"]) {
    expect_exact(b, 2, 50);
    EXPECT_TRUE(b.contains("lat_p50_us")) << b["name"];
  }
  std::string thr = dir_ + "/thr.json";
  o = client({"--op", "send,write", "--threads", "2", "-q", "2", "-s", "256", "-n", "100", "--warmup", "5", "--out", thr});
  ASSERT_EQ(o.code, 0) << both(o);
  r = load_json(thr);
  ASSERT_EQ(r["benchmarks"].size(), 2u);
  for (const json& b : r["benchmarks"]) expect_exact(b, 4, 100);
}

// --qp-timeout and --retry-count reach QPs that RDMA-CM moves to RTS (its own
// attributes would be the route's), as ibv_query_qp reports them in -v.
TEST_F(Cm, RetryKnobsReachEveryQp) {
  Outcome o = client({"-v", "--op", "write", "-q", "2", "-s", "64", "-n", "20", "--qp-timeout", "18", "--retry-count",
                      "5", "--out", dir_ + "/retry.json"});
  ASSERT_EQ(o.code, 0) << both(o);
  std::regex line("QP [0-9]+ qpn [0-9]+: state RTS,.* timeout ([0-9]+), retry ([0-9]+),");
  int qps = 0;
  for (auto it = std::sregex_iterator(o.err.begin(), o.err.end(), line); it != std::sregex_iterator(); ++it, ++qps) {
    EXPECT_EQ((*it)[1], "18") << it->str();
    EXPECT_EQ((*it)[2], "5") << it->str();
  }
  EXPECT_EQ(qps, 2) << o.err;
}

// An address nothing answers at (the lab's dummy0 takes the packets and drops them):
// the connection's wait is bounded by --timeout, the point fails naming the address,
// and the client exits non-zero. The server notices the client gave up at once (it
// does not wait out its own timeout) and serves the next client.
TEST_F(Cm, UnansweredAddressFailsWithinTimeout) {
  if (addr_ != "192.0.2.1") GTEST_SKIP() << "needs the lab's dummy0 (192.0.2.0/24)";
  const double start = startup();
  auto t0 = std::chrono::steady_clock::now();
  Outcome o = run(client_argv({"--cm", "--cm-address", "192.0.2.99", "--timeout", "3", "-q", "1", "-n", "10", "--out",
                               dir_ + "/x.json"}),
                  60s);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(o.code, 0) << both(o);
  EXPECT_NE(o.code, -1) << "timed out: " << both(o);
  EXPECT_LT(took, start + 3 + kSlack) << "start-up " << start << " s: " << both(o);  // --timeout, not the default 10 s
  const std::string line = "rdma_cm: no answer from 192.0.2.99";
  const std::string said = o.out + o.err;  // the failed point's line is in the table on stdout
  size_t at = said.find(line);
  ASSERT_NE(at, std::string::npos) << both(o);
  EXPECT_EQ(said.find(line, at + 1), std::string::npos) << "said more than once: " << both(o);
  EXPECT_NE(said.find("within 3 s"), std::string::npos) << both(o);
  json r = load_json(dir_ + "/x.json");
  ASSERT_TRUE(r.is_object());
  EXPECT_NE(r["benchmarks"][0].value("error_message", "").find(line), std::string::npos) << r.dump();

  // Well before the server's own --timeout (10 s) ran out: it saw the client's ERROR.
  const auto failed = std::chrono::steady_clock::now();
  Outcome next;
  do {
    next = client({"--op", "write", "-q", "2", "-s", "64", "-n", "50", "--out", dir_ + "/next.json"}, 120s);
    if (next.err.find("server is busy") == std::string::npos) break;
    std::this_thread::sleep_for(200ms);
  } while (std::chrono::steady_clock::now() - failed < 6s);
  ASSERT_EQ(next.code, 0) << both(next);
  expect_exact(load_json(dir_ + "/next.json")["benchmarks"][0], 2, 50);
}

// Addresses --cm cannot use end in one line, before any QP: one no RDMA device routes
// to (loopback), and a server address nothing answers at (within --timeout).
TEST_F(Cm, UnroutableOrUnreachableAddressEndsInOneLine) {
  Outcome o = run({RDMASWEEP_BIN, "client", "127.0.0.1", "--port", port_, "--cm", "--timeout", "3", "--out",
                   dir_ + "/x.json"},
                  60s);
  EXPECT_NE(o.code, 0) << both(o);
  EXPECT_NE(o.err.find("rdma_cm: could not resolve 127.0.0.1 within 3 s: no RDMA device routes to it"),
            std::string::npos)
      << both(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line: " << o.err;

  if (addr_ != "192.0.2.1") return;
  const double start = startup();
  auto t0 = std::chrono::steady_clock::now();
  o = run({RDMASWEEP_BIN, "client", "192.0.2.99", "--port", port_, "--cm", "--timeout", "3", "--out", dir_ + "/y.json"},
          60s);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(o.code, 0) << both(o);
  EXPECT_NE(o.code, -1) << both(o);
  EXPECT_LT(took, start + 3 + kSlack) << "start-up " << start << " s: " << both(o);
  EXPECT_NE(o.err.find("192.0.2.99"), std::string::npos) << both(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line: " << o.err;
}

// A client whose --cm address answers nothing: the server's RDMA address with no
// listener on the control port, and (lab only) an address no route reaches. Each ends
// within --timeout in exactly one line on stderr naming the address, exit non-zero.
TEST_F(Cm, NoListenerOrNoRouteEndsInOneLineWithinTimeout) {
  std::vector<std::pair<std::string, std::string>> cases = {{addr_, "1"}};  // port 1: nothing listens there
  if (addr_ == "192.0.2.1") cases.emplace_back("10.99.99.99", port_);       // the lab VM has no route to 10/8
  const double start = startup();
  for (const auto& [host, port] : cases) {
    SCOPED_TRACE(host + ":" + port);
    auto t0 = std::chrono::steady_clock::now();
    Outcome o = run({RDMASWEEP_BIN, "client", host, "--port", port, "--cm", "--timeout", "3", "--no-progress", "--out",
                     dir_ + "/x.json"},
                    60s);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_NE(o.code, 0) << both(o);
    EXPECT_NE(o.code, -1) << "hung: " << both(o);
    EXPECT_LT(took, start + 3 + kSlack) << "start-up " << start << " s: " << both(o);  // --timeout, not 10 s
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line: " << o.err;
    EXPECT_NE(o.err.find(host), std::string::npos) << both(o);
  }
}

// --device or --ib-port other than the ones the address routes to: refused in one
// line naming the route's device and port, before anything is opened.
TEST_F(Cm, DeviceOtherThanTheRoutesIsRefusedInOneLine) {
  for (std::vector<std::string> other : {std::vector<std::string>{"-d", "nosuchdev0"}, {"--ib-port", "2"}}) {
    other.insert(other.end(), {"--out", dir_ + "/x.json"});
    Outcome o = client(other, 60s);
    EXPECT_NE(o.code, 0) << both(o);
    EXPECT_NE(o.err.find("rdma_cm: " + addr_ + " is reached through "), std::string::npos) << both(o);
    EXPECT_NE(o.err.find("give --device"), std::string::npos) << both(o);
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line: " << o.err;
  }
}

// An IPv6 address: the server's listener takes IPv4 and IPv6 requests alike, and the
// route's source GID is the IPv6 one. Lab only (it adds 2001:db8::1 to dummy0).
TEST_F(Cm, Ipv6AddressConnects) {
  if (addr_ != "192.0.2.1" || geteuid() != 0) GTEST_SKIP() << "needs the lab's dummy0, as root";
  std::system("ip -6 addr add 2001:db8::1/64 dev dummy0 nodad 2>/dev/null");
  std::this_thread::sleep_for(1s);  // the GID table follows the address
  addr_ = "2001:db8::1";
  Outcome o = client({"--op", "write,send", "-q", "2", "-s", "64", "-n", "100", "--out", dir_ + "/v6.json"});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(dir_ + "/v6.json");
  EXPECT_EQ(r["context"]["connection"]["gid"], "2001:db8::1") << r["context"]["connection"].dump();
  ASSERT_EQ(r["benchmarks"].size(), 2u);
  for (const json& b : r["benchmarks"]) expect_exact(b, 2, 100);
}

// `rdmasweep server --cm` (perftest's -R on both sides): it refuses a client that
// would exchange QP data, in one line, and serves a --cm client.
TEST_F(Cm, ServerWithCmServesOnlyCmClients) {
  std::unique_ptr<Process> server;
  std::string port = start_server(&server, RDMASWEEP_BIN, 120s, {"--cm"});
  ASSERT_FALSE(port.empty()) << (server ? server->err() : "");
  Outcome o = run({RDMASWEEP_BIN, "client", "127.0.0.1", "--port", port, "--no-progress", "-n", "10", "--out",
                   dir_ + "/x.json"},
                  60s);
  EXPECT_NE(o.code, 0) << both(o);
  EXPECT_NE(o.err.find("this server was started with --cm"), std::string::npos) << both(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line: " << o.err;
  o = run({RDMASWEEP_BIN, "client", "127.0.0.1", "--port", port, "--no-progress", "-R", "--cm-address", addr_, "--op",
           "read", "-q", "3", "-s", "1024", "-n", "40", "--out", dir_ + "/y.json"},
          120s);
  ASSERT_EQ(o.code, 0) << both(o);
  expect_exact(load_json(dir_ + "/y.json")["benchmarks"][0], 3, 40);
  server->signal(SIGTERM);
  server->wait(10s);
}

}  // namespace rdmasweep::test
