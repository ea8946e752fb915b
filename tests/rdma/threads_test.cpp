// --threads on a real device: every op and mode with one and two threads, each
// thread's own CQ or one shared CQ, exact counts per QP and per thread, the cores the
// threads ran on in the context, and a --cpus that names no core refused up front.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <regex>

#include <nlohmann/json.hpp>

#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

class Threads : public ServerSuite {};

TEST_F(Threads, EveryOpAndModeOnOneAndTwoThreadsWithEitherCqScope) {
  const uint64_t qps = 2, iters = 40;
  const std::string out = dir_ + "/t.json";
  Outcome o = run(client_argv({"--op", "send,write,read", "--mode", "bw,lat", "-q", std::to_string(qps), "-s", "64",
                               "--iters", std::to_string(iters), "--warmup", "5", "--threads", "1,2", "--cq-scope",
                               "thread,process", "--out", out}),
                  300s);
  ASSERT_EQ(o.code, 0) << o.err;
  json r = load_json(out), h = load_json(dir_ + "/t.hist.json");
  // 3 ops x 2 modes x (1 thread, 2 threads x 2 scopes): one thread has one CQ whatever the scope.
  ASSERT_EQ(r["benchmarks"].size(), 18u);
  int shared = 0;
  for (const json& b : r["benchmarks"]) {
    SCOPED_TRACE(b["name"].get<std::string>());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    const uint64_t threads = b["config"]["threads"];
    shared += b["config"]["cq_scope"] == "process";
    EXPECT_EQ(b["messages"].get<double>(), static_cast<double>(threads * qps * iters));
    const json& rec = h["points"][b["name"].get<std::string>()];
    ASSERT_EQ(rec["per_qp_messages"][0].size(), threads * qps);
    for (const json& n : rec["per_qp_messages"][0]) EXPECT_EQ(n.get<uint64_t>(), iters);
    if (threads == 1) {
      EXPECT_FALSE(rec.contains("per_thread"));
      EXPECT_FALSE(b.contains("thread_jain_index"));
      continue;
    }
    ASSERT_TRUE(rec.contains("per_thread"));
    for (const json& n : rec["per_thread"][0]["messages"]) EXPECT_EQ(n.get<uint64_t>(), qps * iters);
    for (const json& s : rec["per_thread"][0]["seconds"]) EXPECT_GT(s.get<double>(), 0);
    if (b["name"].get<std::string>().find("/lat/") != std::string::npos) {
      // Each thread's own histogram is kept; the point's is their merge.
      ASSERT_EQ(rec["per_thread"][0]["histogram"].size(), threads);
      uint64_t sum = 0;
      for (const json& th : rec["per_thread"][0]["histogram"]) sum += th["count"].get<uint64_t>();
      EXPECT_EQ(sum, rec["histogram"]["count"].get<uint64_t>());
      EXPECT_EQ(sum, threads * qps * iters);
    } else {
      EXPECT_FALSE(rec["per_thread"][0].contains("histogram"));
    }
    // The point's window (first thread's start to last thread's end) holds every thread's own.
    for (const json& s : rec["per_thread"][0]["seconds"]) EXPECT_LE(s.get<double>(), b["seconds"].get<double>() * 1.0001);
    EXPECT_GT(b["thread_jain_index"].get<double>(), 0.5);
    EXPECT_LE(b["thread_jain_index"].get<double>(), 1.0 + 1e-9);
    EXPECT_GT(b["thread_rate_min"].get<double>(), 0);
  }
  EXPECT_EQ(shared, 6);
  // By default two threads are pinned, on the cores this process may use.
  const json& pl = r["context"]["placement"];
  EXPECT_EQ(pl["pinned"], true);
  ASSERT_EQ(pl["per_thread"].size(), 2u);
  EXPECT_FALSE(pl["source"].get<std::string>().empty());
  // The server says where its threads run, and the client prints both.
  EXPECT_FALSE(r["context"]["server"]["cpus"].get<std::string>().empty());
  EXPECT_NE(o.err.find("threads run on cores"), std::string::npos) << o.err;
}

TEST_F(Threads, ExplicitCpusPinEvenOneThreadAndAreRecorded) {
  const std::string out = dir_ + "/c.json";
  Outcome o = run(client_argv({"--op", "write", "-q", "1", "-s", "64", "--iters", "20", "--cpus", "0", "--out", out}), 120s);
  ASSERT_EQ(o.code, 0) << o.err;
  const json r = load_json(out);
  const json& pl = r["context"]["placement"];
  EXPECT_EQ(pl["source"], "--cpus");
  EXPECT_EQ(pl["per_thread"], json::array({0}));
}

TEST_F(Threads, CpusThatDoNotExistAreRefusedBeforeAnyConnection) {
  // Port 1 has no server: the --cpus error must come first, before the control
  // channel, so before any QP exists on either side.
  Outcome o = run({RDMASWEEP_BIN, "client", "127.0.0.1", "--port", "1", "--threads", "2", "--cpus", "99"}, 60s);
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.err.find("--cpus: CPU 99"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("connect"), std::string::npos) << o.err;
  Outcome s = run({RDMASWEEP_BIN, "server", "--port", "0", "--cpus", "0,99"}, 60s);
  EXPECT_NE(s.code, 0);
  EXPECT_NE(s.err.find("--cpus: CPU 99"), std::string::npos) << s.err;
}

TEST_F(Threads, EventsWithOneSharedCqForSeveralThreadsIsRefused) {
  Outcome o = run(client_argv({"--threads", "2", "--cq-scope", "process", "--events", "1", "--iters", "10"}), 60s);
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.err.find("--cq-scope process"), std::string::npos) << o.err;
}

}  // namespace rdmasweep::test

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

namespace rdmasweep::test {

// A SEND point whose receiving threads cannot all start on the server (its user's process limit,
// RLIMIT_NPROC, reached at thread k of --threads 16): the client gets one line naming the
// limit, the server lives and serves the next client. (It used to unwind past its
// joinable threads into std::terminate, taking every session with it.) The server runs
// as an otherwise unused uid with `prlimit --nproc`: as root the limit does not hold.
TEST(ThreadLimit, AServerThatCannotStartAPointsThreadsSaysSoAndServesTheNext) {
  REQUIRE_DEVICE();
  if (geteuid() != 0 || find_in_path("setpriv").empty() || find_in_path("prlimit").empty())
    GTEST_SKIP() << "needs root, setpriv and prlimit (util-linux) to run the server as another user";
#ifdef UNDER_ASAN
  GTEST_SKIP() << "under AddressSanitizer: the server's leak check needs a thread of its own, which the limit refuses";
#endif
  const std::string dir = make_temp_dir("rdmasweep-nproc");
  Process server({find_in_path("setpriv"), "--reuid", "54321", "--regid", "54321", "--clear-groups", "prlimit", "--nproc=10", "--",
                  RDMASWEEP_BIN, "server", "--port", "0", "--bind", "127.0.0.1"});
  std::smatch m;
  const std::string line = server.wait_for_stderr("listening on", 120s);
  ASSERT_TRUE(std::regex_search(line, m, std::regex(":([0-9]+),"))) << server.err();
  const std::string port = m[1];
  auto client = [&](const std::string& threads, const std::string& out) {
    return run({RDMASWEEP_BIN, "client", "127.0.0.1", "--port", port, "--no-progress", "--op", "send", "-q", "1", "-s",
                "64", "-n", "20", "--warmup", "2", "--threads", threads, "--out", dir + "/" + out},
               120s);
  };
  Outcome big = client("16", "big.json");
  EXPECT_NE(big.code, 0) << both(big);
  const json r = load_json(dir + "/big.json");
  ASSERT_TRUE(r.is_object()) << both(big);
  const std::string why = r["benchmarks"][0].value("error_message", "");
  EXPECT_NE(why.find("cannot start thread"), std::string::npos) << why;
  EXPECT_NE(why.find("RLIMIT_NPROC"), std::string::npos) << why;
  EXPECT_NE(why.find("of 16"), std::string::npos) << why;
  ASSERT_TRUE(server.running()) << "the server died:\n" << server.err();
  Outcome next = client("1", "next.json");
  EXPECT_EQ(next.code, 0) << both(next) << "\nserver:\n" << server.err();
  server.signal(SIGTERM);
  server.wait(10s);
}

}  // namespace rdmasweep::test
