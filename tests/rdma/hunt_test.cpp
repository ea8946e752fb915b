// `rdmasweep hunt` against a real server on this host's device (tools/rxe-lab): the
// report of a hunt with no planted fault, an interrupted hunt, and bad input. The
// planted fault (loss of big packets) is tools/two-host-test's: it needs a link.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "tests/rdma/context_check.hpp"
#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class Hunt : public ServerSuite {
 protected:
  std::vector<std::string> hunt_argv(const std::vector<std::string>& args) const {
    std::vector<std::string> a{RDMASWEEP_BIN, "hunt", "127.0.0.1", "--port", port_};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }
  std::string space(const std::string& text) const {
    std::string path = dir_ + "/space.json";
    std::ofstream(path) << text;
    return path;
  }
};

// A small space, half its candidates beside an aggressor, short points.
const char* kSmallSpace = R"({
  "axes": {"op": ["write", "send"], "mode": ["bw", "lat"], "qps": [1, 2], "size": [64, 4096],
           "duration": 0.15, "warmup": 8},
  "aggressor_share": 0.5})";

// No planted fault: the report says what it explored, every anomaly it reports held in
// every new run, and every point it flagged but did not report says why.
TEST_F(Hunt, ReportSaysWhatWasExploredAndWhyAnythingIsFlagged) {
  const std::string out = dir_ + "/h";
  Outcome o = run(hunt_argv({"--budget", "40s", "--seed", "3", "--space", space(kSmallSpace), "--out", out}), 240s);
  ASSERT_EQ(o.code, 0) << o.err;
  json rep = load_json(out + "/anomalies.json"), pts = load_json(out + "/points.json");
  ASSERT_TRUE(rep.is_object()) << o.err;
  ASSERT_TRUE(pts.is_object()) << o.err;
  EXPECT_EQ(pts["context"]["incomplete"], false);
  expect_common_context(pts["context"], "hunt");
  EXPECT_GE(rep["explored"].get<size_t>(), 5u);
  EXPECT_LE(rep["seconds"].get<double>(), 40 + 15) << "the budget was not honoured";
  EXPECT_EQ(rep["searched_knobs"], json({"mode", "op", "qps", "size"}));
  size_t runs = 0, beside = 0, aggressor = 0;
  for (const json& b : pts["benchmarks"]) {
    const std::string role = b["hunt"]["role"];
    runs += role != "aggressor";
    beside += role == "beside";
    aggressor += role == "aggressor";
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
  }
  EXPECT_EQ(runs, rep["measurements"].get<size_t>() + beside) << "a run the report counts is missing from points.json";
  EXPECT_GE(beside, 1u) << "no candidate was measured beside an aggressor";
  EXPECT_EQ(aggressor, beside) << "each victim run has its aggressor's beside it (the server served both at once)";
  const uint32_t must = rep["space"]["must_hold"];
  for (const json& a : rep["anomalies"]) {
    EXPECT_GE(a["evidence"]["held"].get<uint32_t>(), must) << a.dump();
    EXPECT_EQ(a["reproduce"].get<std::string>().rfind("rdmasweep client 127.0.0.1 --port " + port_, 0), 0u) << a.dump();
  }
  const std::regex status("noise|covered by anomaly [0-9]+|not examined \\((budget|stopped)\\)");
  for (const json& f : rep["not_reported"]) {
    EXPECT_TRUE(std::regex_match(f["status"].get<std::string>(), status)) << f.dump();
    if (f["status"] == "noise") {
      EXPECT_LT(f["rerun"]["held"].get<uint32_t>(), must) << f.dump();
    }
  }
  const std::string md = read_file(out + "/anomalies.md");
  EXPECT_NE(md.find("Explored " + rep["explored"].dump() + " point(s)"), std::string::npos) << md;
  EXPECT_NE(md.find(rep["anomalies"].empty() ? "**No anomaly** reproduced" : "## Anomaly 1: "), std::string::npos) << md;
}

// Ctrl-C mid-hunt: exit 130, every run so far kept in valid JSON, the report written.
TEST_F(Hunt, InterruptKeepsEveryRunAndWritesTheReport) {
  const std::string out = dir_ + "/i";
  Process h(hunt_argv({"--budget", "10m", "--seed", "5", "--space", space(kSmallSpace), "--out", out}));
  for (auto end = std::chrono::steady_clock::now() + 120s; std::chrono::steady_clock::now() < end;) {
    json p = load_json(out + "/points.json");
    if (p.is_object() && p["benchmarks"].size() >= 2) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(h.running()) << h.err();
  h.signal(SIGINT);
  EXPECT_EQ(h.wait(60s), 130) << h.err();
  json pts = load_json(out + "/points.json"), rep = load_json(out + "/anomalies.json");
  ASSERT_TRUE(pts.is_object());
  EXPECT_GE(pts["benchmarks"].size(), 2u);
  EXPECT_EQ(pts["context"]["incomplete"], true);
  ASSERT_TRUE(rep.is_object()) << h.err();
  EXPECT_EQ(rep["interrupted"], true);
  EXPECT_NE(read_file(out + "/anomalies.md").find("**Interrupted**"), std::string::npos);
}

// Another client holds the server for longer than the hunt waits for it: the hunt
// retries for its patience (2 x --timeout, at least 10 s), then ends in one line, non-zero.
TEST_F(Hunt, AServerHeldByAnotherClientEndsTheHuntInOneLine) {
  Process holder(client_argv({"--op", "write", "-s", "64", "-D", "90", "--timeout", "5", "--out", dir_ + "/held.json"}));
  ASSERT_NE(server_->wait_for_stderr("connected", 120s), "") << server_->err();
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o = run(hunt_argv({"--budget", "60s", "--timeout", "2", "--space", space(kSmallSpace), "--out", dir_ + "/h"}), 120s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.err.find("stayed unusable for 10 s"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("the server is busy"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_LT(took, 40) << "the hunt waited far longer than its patience";
  holder.signal(SIGINT);
  EXPECT_EQ(holder.wait(60s), 130) << holder.err();
}

TEST_F(Hunt, BadInputEndsInOneLine) {
  auto one_line = [](const Outcome& o, const std::string& needle) {
    EXPECT_NE(o.code, 0) << o.err;
    EXPECT_NE(o.code, -1) << "timed out: " << o.err;
    EXPECT_NE(o.err.find(needle), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  };
  one_line(run(hunt_argv({"--space", space(R"({"axis": {}})"), "--out", dir_ + "/b"}), 30s), "--space: unknown key 'axis'");
  one_line(run(hunt_argv({"--budget", "ten", "--out", dir_ + "/b"}), 30s), "--budget: 'ten' is not a time");
  // Nothing listens on the port: connecting fails within --timeout.
  one_line(run({RDMASWEEP_BIN, "hunt", "127.0.0.1", "--port", "9", "--timeout", "3", "--out", dir_ + "/c"}, 60s),
           "127.0.0.1");
}

}  // namespace
}  // namespace rdmasweep::test
