// `rdmasweep mesh` under a real mpirun: 3 ranks on one RDMA device (Soft-RoCE in
// tools/rxe-lab), each pattern on a small sweep, and the results file checked flow by
// flow. Skipped when mpirun, a device or an MPI build is missing, unless
// RDMASWEEP_REQUIRE_DEVICE is set (then those fail).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/mpi_run.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr int kRanks = 3;


// Runs one pattern on the small sweep and checks every flow of every point.
void check_pattern(const std::string& pattern) {
  const std::string out = temp_dir() + "/mesh.json";
  const uint64_t iters = 100, size = 4096;
  std::vector<std::string> argv = mpirun(kRanks);
  for (const char* a : {"--pattern", pattern.c_str(), "--op", "write,send", "-q", "1,2", "-s", "4096", "-n", "100",
                               "--warmup", "10", "--out", out.c_str()})
    argv.push_back(a);
  Outcome o = run(argv, 600s);
  ASSERT_EQ(o.code, 0) << both(o);
  json doc = load(out);
  ASSERT_TRUE(doc.is_object()) << "no valid results file; " << both(o);
  const json& ctx = doc["context"];
  EXPECT_EQ(ctx["schema_version"], 1);
  EXPECT_EQ(ctx["tool"], "rdmasweep");
  EXPECT_EQ(ctx["pattern"], pattern);
  EXPECT_EQ(ctx["ranks"], kRanks);
  EXPECT_EQ(ctx["incomplete"], false);
  EXPECT_TRUE(ctx.contains("git_revision"));
  ASSERT_EQ(ctx["rank_info"].size(), static_cast<size_t>(kRanks));
  for (const json& r : ctx["rank_info"]) {
    EXPECT_FALSE(r.value("host", "").empty()) << r.dump();
    EXPECT_FALSE(r.value("device", "").empty()) << r.dump();
    EXPECT_FALSE(r.value("clock_reason", "").empty()) << r.dump();  // each rank calibrates its own TSC
  }

  // Expected flows per point.
  std::set<std::pair<int, int>> flows;
  for (int i = 0; i < kRanks; ++i)
    for (int j = 0; j < kRanks; ++j)
      if (i != j && (pattern != "incast" || j == 0)) flows.insert({i, j});
  const bool totals = pattern != "pairs";

  std::map<std::string, std::set<std::pair<int, int>>> seen;  // point -> flows
  const bool counted = ports_have_counters();
  std::map<std::string, double> flow_rate_sum, total_rate;
  const std::regex name_re("^mesh/" + pattern + "/((send|write)/bw/qps:([0-9]+)/size:4096/cq:[0-9]+)/(src:([0-9]+)/dst:([0-9]+)|total)$");
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    std::string name = b["name"];
    std::smatch m;
    ASSERT_TRUE(std::regex_match(name, m, name_re));
    const std::string point = m[1];
    const uint64_t qps = std::stoull(m[3]);
    EXPECT_EQ(b["run_type"], "iteration");
    EXPECT_EQ(b["iterations"], 1);
    EXPECT_EQ(b["time_unit"], "ms");
    EXPECT_GT(b["real_time"].get<double>(), 0);
    EXPECT_GT(b["bytes_per_second"].get<double>(), 0);
    EXPECT_GT(b["items_per_second"].get<double>(), 0);
    const double messages = b["messages"], bytes = b["bytes"];
    EXPECT_EQ(bytes, messages * static_cast<double>(size));
    // Every entry's rate is its bytes over its own seconds (a total's: the union of its flows' windows).
    EXPECT_NEAR(b["bytes_per_second"].get<double>(), bytes / b["seconds"].get<double>(), bytes / b["seconds"].get<double>() * 1e-9);
    if (m[4] == "total") {
      EXPECT_EQ(messages, static_cast<double>(flows.size() * qps * iters));
      total_rate[point] = b["sum_of_flow_bytes_per_second"];
      EXPECT_LE(b["bytes_per_second"].get<double>(), total_rate[point] * (1 + 1e-9));
      continue;
    }
    const int src = std::stoi(m[5]), dst = std::stoi(m[6]);
    EXPECT_EQ(b["src_rank"], src);
    EXPECT_EQ(b["dst_rank"], dst);
    EXPECT_FALSE(b.value("src_host", "").empty());
    EXPECT_FALSE(b.value("dst_host", "").empty());
    EXPECT_EQ(messages, static_cast<double>(qps * iters));
    EXPECT_EQ(b["qp_messages_min"].get<double>(), static_cast<double>(iters));
    EXPECT_EQ(b["qp_messages_max"].get<double>(), static_cast<double>(iters));
    EXPECT_TRUE(seen[point].insert({src, dst}).second) << "flow reported twice";
    // Each end's port over the phase: the source rank sent at least a packet per message.
    if (counted) {
      ASSERT_TRUE(b.contains("counters")) << "a flow without its ports' counters";
      const json& c = b["counters"];
      ASSERT_TRUE(c.contains("client") && c.contains("server"));
      EXPECT_GE(c["normalized"]["client"].value("packets_sent", 0.0), messages);
      EXPECT_GE(c["shared_by_flows"]["client"].get<int>(), 1);
      EXPECT_GE(b.value("packets_sent", 0.0), messages);
    }
    flow_rate_sum[point] += b["bytes_per_second"].get<double>();
  }
  // 2 ops x 2 QP counts, every flow of each.
  ASSERT_EQ(seen.size(), 4u) << both(o);
  for (const auto& [point, got] : seen) {
    EXPECT_EQ(got, flows) << point;
    if (totals) {
      ASSERT_TRUE(total_rate.count(point)) << point << ": no total entry";
      EXPECT_NEAR(total_rate[point], flow_rate_sum[point], flow_rate_sum[point] * 1e-9) << point;
    }
  }
  if (!totals) {
    EXPECT_TRUE(total_rate.empty());
  }
  // The table on stdout names every flow.
  EXPECT_NE(o.out.find("1->0"), std::string::npos) << o.out;
}

}  // namespace

TEST(Mesh, PairsEveryOrderedPair) {
  REQUIRE_MESH();
  check_pattern("pairs");
}

TEST(Mesh, IncastAllToRankZero) {
  REQUIRE_MESH();
  check_pattern("incast");
}

TEST(Mesh, AllToAll) {
  REQUIRE_MESH();
  check_pattern("all-to-all");
}

TEST(Mesh, LatencyPairs) {
  REQUIRE_MESH();
  json doc;
  ASSERT_NO_FATAL_FAILURE(run_ok(2, {"--pattern", "pairs", "--mode", "lat", "--op", "send,write,read", "-s", "64", "-n", "50",
                                     "--warmup", "5"},
                                 &doc));
  ASSERT_EQ(doc["benchmarks"].size(), 6u);  // 3 ops x 2 ordered pairs
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false));
    EXPECT_EQ(b["messages"].get<double>(), 50);
    double prev = 0;
    for (const char* k : {"lat_min_us", "lat_p50_us", "lat_p99_us", "lat_max_us"}) {
      EXPECT_GT(b[k].get<double>(), 0) << k;
      EXPECT_GE(b[k].get<double>(), prev) << k;
      prev = b[k];
    }
  }
}

// --threads in a mesh: each flow end runs its QPs on two threads, the target's
// receivers and responders too; every flow's counts are exact and its threads fared.
TEST(Mesh, ThreadsPerFlow) {
  REQUIRE_MESH();
  json doc;
  ASSERT_NO_FATAL_FAILURE(run_ok(2, {"--pattern", "pairs", "--op", "send,write", "--mode", "bw,lat", "-q", "2", "--threads", "2",
                                     "-s", "64", "-n", "40", "--warmup", "5"},
                                 &doc));
  ASSERT_EQ(doc["benchmarks"].size(), 8u);  // 2 ops x 2 modes x 2 ordered pairs
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    EXPECT_NE(b["name"].get<std::string>().find("/threads:2/"), std::string::npos);
    EXPECT_EQ(b["messages"].get<double>(), 2 * 2 * 40);  // threads x QPs per thread x iters
    EXPECT_EQ(b["qp_messages_min"].get<double>(), 40);
    EXPECT_EQ(b["qp_messages_max"].get<double>(), 40);
    EXPECT_GT(b["thread_jain_index"].get<double>(), 0);
  }
}

// The loop knobs the client has: a shared receive queue per flow and completion
// events, on incast (every sender at rank 0's SRQs at once), and the clock named.
TEST(Mesh, SharedReceiveQueueAndEvents) {
  REQUIRE_MESH();
  json doc;
  ASSERT_NO_FATAL_FAILURE(run_ok(kRanks, {"--pattern", "incast", "--op", "send", "--srq", "--events", "0,1", "-q", "4", "-s",
                                          "64", "-n", "50", "--warmup", "5", "--clock", "system"},
                                 &doc));
  EXPECT_EQ(doc["context"]["clock"], "system");
  EXPECT_EQ(doc["context"]["clock_reason"], "forced by --clock system");
  EXPECT_EQ(doc["context"]["sweep"]["srq"], json::array({1}));
  std::set<std::string> points;
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    std::string name = b["name"];
    EXPECT_NE(name.find("/srq"), std::string::npos);
    if (name.find("/total") != std::string::npos) continue;
    points.insert(name.substr(0, name.find("/src:")));
    EXPECT_EQ(b["messages"].get<double>(), 4 * 50);  // every message reached its QP through the SRQ
    EXPECT_EQ(b["qp_messages_min"].get<double>(), 50);
  }
  EXPECT_EQ(points.size(), 2u) << "events 0 and 1";  // the event variant is a point of its own
}

// --repetitions: every flow and total runs once per repetition with Google
// Benchmark's repetition fields, on the QPs of its first run, then gets
// mean/median/stddev/cv aggregates computed from those runs; a latency flow's
// histogram holds every repetition's round trips.
TEST(Mesh, RepetitionsAddAggregates) {
  REQUIRE_MESH();
  json doc;
  ASSERT_NO_FATAL_FAILURE(run_ok(kRanks, {"--pattern", "incast", "--op", "send", "-s", "4096", "-n", "50", "--warmup", "5",
                                          "--repetitions", "3"},
                                 &doc));
  std::map<std::string, std::vector<json>> runs;
  std::map<std::string, std::map<std::string, json>> aggs;
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    EXPECT_EQ(b["repetitions"], 3);
    if (b["run_type"] == "iteration") {
      EXPECT_EQ(b["name"], b["run_name"]);
      runs[b["name"]].push_back(b);
    } else {
      aggs[b["run_name"]][b["aggregate_name"]] = b;
    }
  }
  ASSERT_EQ(runs.size(), 3u) << "2 flows and the total";
  for (const auto& [name, rs] : runs) {
    SCOPED_TRACE(name);
    ASSERT_EQ(rs.size(), 3u);
    std::vector<double> rate;
    for (size_t i = 0; i < rs.size(); ++i) {
      EXPECT_EQ(rs[i]["repetition_index"], i);
      EXPECT_EQ(rs[i]["per_family_instance_index"], rs[0]["per_family_instance_index"]);
      if (rs[i]["src_rank"] >= 0) {  // a flow, not the total: repetitions 2 and 3 run on the QPs of the first
        EXPECT_EQ(rs[i].value("reused_qps", -1.0), i == 0 ? 0 : 1);
      }
      rate.push_back(rs[i]["bytes_per_second"]);
    }
    ASSERT_EQ(aggs[name].size(), 4u);
    const double mean = (rate[0] + rate[1] + rate[2]) / 3;
    std::vector<double> sorted = rate;
    std::sort(sorted.begin(), sorted.end());
    double var = 0;
    for (double r : rate) var += (r - mean) * (r - mean);
    const double sd = std::sqrt(var / 2);
    EXPECT_NEAR(aggs[name]["mean"]["bytes_per_second"].get<double>(), mean, mean * 1e-9);
    EXPECT_NEAR(aggs[name]["median"]["bytes_per_second"].get<double>(), sorted[1], mean * 1e-9);
    EXPECT_NEAR(aggs[name]["stddev"]["bytes_per_second"].get<double>(), sd, mean * 1e-9);
    EXPECT_NEAR(aggs[name]["cv"]["bytes_per_second"].get<double>(), sd / mean, 1e-9);
    EXPECT_EQ(aggs[name]["cv"]["aggregate_unit"], "percentage");
    EXPECT_EQ(aggs[name]["mean"]["messages"].get<double>(), rs[0]["messages"].get<double>());
    EXPECT_EQ(aggs[name]["median"]["iterations"], 3);
    EXPECT_EQ(aggs[name]["median"]["src_rank"], rs[0]["src_rank"]);
  }

  // Latency: one histogram per flow, with the round trips of both repetitions.
  const std::string out = temp_dir() + "/lat.json";
  std::vector<std::string> argv = mpirun(2);
  for (const char* a : {"--pattern", "pairs", "--mode", "lat", "--op", "send,write", "-s", "64", "-n", "20", "--warmup", "2",
                        "--repetitions", "2", "--out", out.c_str()})
    argv.push_back(a);
  Outcome o = run(argv, 300s);
  ASSERT_EQ(o.code, 0) << both(o);
  EXPECT_NE(o.out.find("_median"), std::string::npos) << o.out;
  json hist = load(out.substr(0, out.size() - 5) + ".hist.json");  // lat.json -> lat.hist.json
  ASSERT_TRUE(hist.is_object()) << both(o);
  ASSERT_EQ(hist["points"].size(), 4u) << hist.dump();  // 2 ops x 2 ordered pairs
  for (const auto& [name, p] : hist["points"].items()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(p["per_qp_messages"], json::parse("[[20], [20]]"));
    EXPECT_EQ(p["per_qp_latency"].size(), 2u);
    EXPECT_EQ(p["histogram"]["count"], 40);
  }
}

// --rate in a mesh paces each flow: every flow of the point is offered the rate (a
// constant schedule's own rate: exactly), carries every message counted and both
// histograms (from due and from post). (A share's refusal: tests/unit/knobs_test.cpp.)
TEST(Mesh, RatePacesEveryFlow) {
  REQUIRE_MESH();
  const std::string out = temp_dir() + "/paced.json";
  std::vector<std::string> argv = mpirun(2);
  for (const char* a : {"--pattern", "pairs", "--op", "write,send", "-s", "64", "-n", "400", "--warmup", "0", "--rate",
                        "2kpps", "--out", out.c_str()})
    argv.push_back(a);
  Outcome o = run(argv, 300s);
  ASSERT_EQ(o.code, 0) << both(o);
  const json doc = load(out), hist = load(out.substr(0, out.size() - 5) + ".hist.json");
  ASSERT_EQ(doc["benchmarks"].size(), 4u) << both(o);  // 2 ops x 2 ordered pairs
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    EXPECT_NE(b["name"].get<std::string>().find("/rate:2kpps/"), std::string::npos);
    EXPECT_EQ(b["messages"].get<double>(), 400);
    EXPECT_NEAR(b["offered_items_per_second"].get<double>(), 2000, 1e-6 * 2000);
    EXPECT_TRUE(b.contains("pacing_error_pct"));
    EXPECT_TRUE(b.contains("late_posts"));
    const json& p = hist["points"][b["name"].get<std::string>()];
    EXPECT_EQ(p["histogram"]["count"], 400);
    EXPECT_EQ(p["posted_histogram"]["count"], 400);
  }
}

// --cq-policy: more outstanding work than one CQ holds stops the mesh before any
// QP is made, naming max_cqe; with cap every rank runs the same shrunk points, and
// rank 0 says what changed.
TEST(Mesh, CqPolicyCapShrinksThePointsOnEveryRank) {
  REQUIRE_MESH();
  // 32 QPs x 1024 signaled WRITEs outstanding = 32768 CQEs: one over rxe's 32767.
  std::vector<std::string> argv = mpirun(2);
  for (const char* a : {"--pattern", "pairs", "--op", "write", "-q", "32", "-t", "1024", "-Q", "1", "-s", "64", "-n", "8",
                        "--warmup", "0", "--out", "/tmp/rdmasweep-mesh-unused.json"})
    argv.push_back(a);
  Outcome refused = run(argv, 120s);
  EXPECT_EQ(refused.code, 1) << both(refused);
  EXPECT_NE(refused.err.find("max_cqe"), std::string::npos) << both(refused);

  json doc;
  Outcome o;
  ASSERT_NO_FATAL_FAILURE(run_ok(2, {"--pattern", "pairs", "--op", "write", "-q", "32", "-t", "1024", "-Q", "1", "-s", "64",
                                     "-n", "8", "--warmup", "0", "--cq-policy", "cap"},
                                 &doc, &o));
  // Said once, by rank 0, naming the rank whose CQ set the limit.
  const std::string said = "write/bw/qps:32/size:64/cq:32768/tx:1024/signal:1: capped to fit rank ";
  ASSERT_NE(o.err.find(said), std::string::npos) << both(o);
  EXPECT_EQ(o.err.find(said, o.err.find(said) + 1), std::string::npos) << both(o);
  ASSERT_EQ(doc["benchmarks"].size(), 2u);  // 0->1 and 1->0
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    EXPECT_NE(b["name"].get<std::string>().find("/tx:512"), std::string::npos);  // halved once, in the point's name
    EXPECT_EQ(b["messages"].get<double>(), 32 * 8);
  }
}

// A rank stopped (SIGSTOP) in the middle of a sweep: the others notice it within
// 3 x --timeout (at least 10 s), rank 0 names it and the flows it took down in the
// results, the phase's other flows keep their results, and the job ends non-zero
// instead of hanging. The stop lands as rank 3 reports a flow's traffic in a phase
// after the first (its --progress-file line), so inside a phase where it has a flow.
TEST(Mesh, StoppedRankIsNamedWithItsFlowsAndTheJobEnds) {
  REQUIRE_MESH();
  const std::string dir = temp_dir(), out = dir + "/mesh.json", progress = dir + "/mesh.progress";
  std::vector<std::string> argv = mpirun(4);
  for (const char* a : {"--pattern", "pairs", "--schedule", "matching", "--op", "write", "-q", "1", "-s", "4096", "-D", "3",
                        "--warmup", "10", "--timeout", "3"})
    argv.push_back(a);
  argv.insert(argv.end(), {"--out", out, "--progress-file", progress});
  Process job(argv);
  const std::string line = job.wait_for_progress(progress, R"(^traffic \S+/phase:[1-9][0-9]* pid=[0-9]+ rank=3 )", 180s);
  ASSERT_NE(line, "") << "rank 3 reported no flow after the first phase\n" << job.err();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"( pid=([0-9]+) )"))) << line;
  const pid_t victim = static_cast<pid_t>(std::stol(m[1]));
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  const int code = job.wait(120s);
  kill(victim, SIGKILL);
  ASSERT_NE(code, -1) << "the job hung; stderr:\n" << job.err();
  EXPECT_NE(code, 0);
  EXPECT_NE(job.err().find("rdmasweep mesh: rank 3 ("), std::string::npos) << job.err();
  EXPECT_NE(job.err().find("stopped answering"), std::string::npos) << job.err();

  json doc = load(out);
  ASSERT_TRUE(doc.is_object()) << job.err();
  const json& ctx = doc["context"];
  EXPECT_EQ(ctx["incomplete"], true);
  const std::string reason = ctx.value("incomplete_reason", "");
  EXPECT_NE(reason.find("rank 3 ("), std::string::npos) << reason;
  const bool mid_measurement = reason.find(" in phase ") != std::string::npos;
  EXPECT_TRUE(mid_measurement) << "stopped as its flow's traffic started, yet not named mid-phase: " << reason;
  int failed_phase = -1;
  for (const json& b : doc["benchmarks"]) {
    // Duration flows sample throughput over time by default, as the client's points.
    if (!b.value("error_occurred", false)) {
      EXPECT_TRUE(b.contains("interval_min")) << b.dump();
      continue;
    }
    SCOPED_TRACE(b.dump());
    // Mid-measurement only the flows with an end on rank 3 fail; a stop during the
    // phase's setup fails every flow of that phase, each naming rank 3.
    if (mid_measurement) EXPECT_TRUE(b["src_rank"] == 3 || b["dst_rank"] == 3) << "a flow without rank 3 failed";
    else EXPECT_NE(b.value("error_message", "").find("while the phase was set up"), std::string::npos);
    EXPECT_NE(b.value("error_message", "").find("rank 3 ("), std::string::npos);
    EXPECT_NE(b.value("error_message", "").find("stopped answering"), std::string::npos);
    failed_phase = b["phase"];
  }
  ASSERT_GE(failed_phase, 1) << "no failed flow";
  // Mid-measurement, the reason names exactly the flows that failed.
  if (mid_measurement) {
    std::string named;
    for (const json& b : doc["benchmarks"])
      if (b.value("error_occurred", false))
        named += (named.empty() ? "" : ", ") + std::to_string(b["src_rank"].get<int>()) + "->" +
                 std::to_string(b["dst_rank"].get<int>());
    EXPECT_NE(reason.find(": flows " + named + " failed;"), std::string::npos) << reason;
  }
  // The failed phase's other flow: its results when the stop came mid-measurement.
  size_t in_phase = 0;
  for (const json& b : doc["benchmarks"]) {
    if (b.value("phase", -1) != failed_phase) continue;
    ++in_phase;
    if (b["src_rank"] == 3 || b["dst_rank"] == 3) continue;
    SCOPED_TRACE(b.dump());
    if (mid_measurement) {
      EXPECT_FALSE(b.value("error_occurred", false));
      EXPECT_GT(b.value("messages", 0.0), 0);
    } else {
      EXPECT_TRUE(b.value("error_occurred", false)) << "a flow of a phase whose setup failed has a result";
    }
  }
  EXPECT_EQ(in_phase, 2u) << "every flow of the phase is reported";
}

// Bad input: one line from rank 0, a non-zero exit, no traffic.
TEST(Mesh, LatencyOnlyWithPairs) {
  REQUIRE_MESH();
  std::vector<std::string> argv = mpirun(2);
  for (const char* a : {"--pattern", "incast", "--mode", "lat", "--out", "/tmp/rdmasweep-mesh-unused.json"}) argv.push_back(a);
  Outcome o = run(argv, 120s);
  EXPECT_EQ(o.code, 2) << both(o);
  EXPECT_NE(o.err.find("rdmasweep mesh: --mode lat runs with --pattern pairs only"), std::string::npos) << both(o);
}

TEST(Mesh, DeviceLimitFailsCleanly) {
  REQUIRE_MESH();
  std::vector<std::string> argv = mpirun(2);
  for (const char* a : {"--pattern", "pairs", "-q", "100000", "--out", "/tmp/rdmasweep-mesh-unused.json"}) argv.push_back(a);
  Outcome o = run(argv, 120s);
  EXPECT_NE(o.code, 0) << both(o);
  EXPECT_NE(o.err.find("rdmasweep mesh: rank 0"), std::string::npos) << both(o);
}

TEST(Mesh, NeedsTwoRanks) {
  REQUIRE_MESH();
  Outcome o = run(mpirun(1), 120s);
  EXPECT_EQ(o.code, 2) << both(o);
  EXPECT_NE(o.err.find("needs at least 2 ranks"), std::string::npos) << both(o);
}

}  // namespace rdmasweep::test
