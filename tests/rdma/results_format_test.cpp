// Real result files, from `rdmasweep client` and `rdmasweep mesh`, with repetitions
// (aggregates) and failed points, checked entry by entry against Google Benchmark's
// field list (tests/support/gbench_fields.hpp), so that its tools read them, and for
// the point's configuration; and the figures that must agree within an entry:
// bytes_per_second is bytes / seconds, cpu_time is the measured window's cpu_seconds,
// a mesh total's window is the union of its flows' windows. Also the context: every
// sweep knob and the real build type.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/config/knobs.hpp"
#include "core/config/sweep.hpp"
#include "tests/rdma/context_check.hpp"
#include "tests/support/gbench_fields.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Polls the results file until `ready` holds for it (or `p` ended, or 180 s passed).
template <typename Pred>
bool wait_for_results(Process& p, const std::string& out, Pred ready) {
  auto deadline = std::chrono::steady_clock::now() + 180s;
  while (std::chrono::steady_clock::now() < deadline && p.running()) {
    json r = load_json(out);
    if (r.is_object() && ready(r)) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

bool has_aggregate(const json& r) {
  for (const json& b : r["benchmarks"])
    if (b.value("run_type", "") == "aggregate") return true;
  return false;
}

// Google Benchmark's fields in every entry, and what a failed entry holds.
void check_gbench_fields(const json& doc) {
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    std::vector<std::string> bad = gbench_field_problems(b);
    EXPECT_TRUE(bad.empty()) << ::testing::PrintToString(bad);
    if (b.value("error_occurred", false)) {
      EXPECT_EQ(b.value("iterations", -1), 0);
      EXPECT_EQ(b.value("real_time", -1.0), 0);
      EXPECT_EQ(b.value("cpu_time", -1.0), 0);
      EXPECT_EQ(b.value("time_unit", ""), "ms");
    }
  }
}

// Every entry (measured, failed, aggregate) carries its point's configuration, which
// reads back as that point: the client's point is the run name, the mesh's "point".
void check_configs(const json& doc) {
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_TRUE(b.contains("config") && b["config"].is_object());
    TestConfig cfg;
    ASSERT_NO_THROW(cfg = b["config"].get<TestConfig>());
    EXPECT_EQ(json(cfg), b["config"]);
    EXPECT_EQ(point_name(cfg), b.value("point", b["run_name"].get<std::string>()));
  }
}

// In a measured run: rates over the entry's own seconds, CPU time of its window.
void check_measured_run(const json& b) {
  SCOPED_TRACE(b.dump());
  const double secs = b["seconds"], bytes = b["bytes"], msgs = b["messages"];
  ASSERT_GT(secs, 0);
  EXPECT_NEAR(b["bytes_per_second"].get<double>(), bytes / secs, bytes / secs * 1e-9);
  EXPECT_NEAR(b["items_per_second"].get<double>(), msgs / secs, msgs / secs * 1e-9);
  EXPECT_NEAR(b["real_time"].get<double>(), secs * 1e3, secs * 1e-6);
  EXPECT_NEAR(b["cpu_time"].get<double>(), b["cpu_seconds"].get<double>() * 1e3, 1e-9);
}

// The keys every command's context shares (context_check.hpp); every knob of the
// sweep, the clock asked for, the CQ policy.
void check_context(const json& ctx, const std::string& clock_choice, const std::string& command) {
  expect_common_context(ctx, command);
  expect_sweep_context(ctx);
  std::set<std::string> recorded, keys(sweep_keys().begin(), sweep_keys().end());
  for (const auto& [k, v] : ctx["sweep"].items()) recorded.insert(k);
  EXPECT_EQ(recorded, keys);
  EXPECT_EQ(ctx.value("clock_choice", ""), clock_choice);
  EXPECT_EQ(ctx.value("cq_policy", ""), "error");
}

}  // namespace

// A client sweep with repetitions, interrupted after its first point: the first
// point's runs and aggregates, then the interrupted and the not-run points, failed.
TEST(ResultsFormat, ClientFileWithFailuresAndRepetitions) {
  REQUIRE_DEVICE();
  Process server({kBin, "server", "--port", "0", "--bind", "127.0.0.1", "--timeout", "2"});
  std::string line = server.wait_for_stderr("listening on", 120s);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(":([0-9]+),"))) << server.err();
  const std::string out = make_temp_dir("rdmasweep-format") + "/client.json";
  Process c({kBin, "client", "127.0.0.1", "--port", m[1], "--no-progress", "--timeout", "5", "--op", "write", "-s", "64",
             "-q", "1:16:+1", "-D", "0.3", "--warmup", "10", "--repetitions", "2", "--clock", "system", "--out", out});
  ASSERT_TRUE(wait_for_results(c, out, has_aggregate)) << c.err();
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait(60s), 130) << c.err();
  json doc = load_json(out);
  ASSERT_TRUE(doc.is_object());
  std::printf("client results: %s\n", out.c_str());
  check_context(doc["context"], "system", "client");
  check_gbench_fields(doc);
  check_configs(doc);
  size_t failed = 0, aggregates = 0;
  for (const json& b : doc["benchmarks"]) {
    if (b.value("error_occurred", false)) ++failed;
    else if (b["run_type"] == "aggregate") ++aggregates;
    else check_measured_run(b);
  }
  EXPECT_GE(failed, 1u) << doc.dump(1);
  EXPECT_TRUE(aggregates >= 4 && aggregates % 4 == 0) << aggregates << ": mean, median, stddev and cv per point";
}

namespace {

// mpirun with 3 ranks of `rdmasweep mesh ARGS --out OUT`; with `rank2_args`, rank 2
// gets those too (mpirun's A : B). Off the RDMA device, as root, more ranks than CPUs.
std::vector<std::string> mesh_argv(const std::string& mpirun, const std::vector<std::string>& args,
                                   const std::string& out, const std::vector<std::string>& rank2_args = {}) {
  std::vector<std::string> argv{mpirun};
  if (getuid() == 0) argv.push_back("--allow-run-as-root");
  for (const char* a : {"--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp", "--mca",
                        "btl_vader_single_copy_mechanism", "none"})
    argv.push_back(a);
  auto app = [&](int np, const std::vector<std::string>& extra) {
    for (const std::string& a : {std::string("-np"), std::to_string(np), kBin, std::string("mesh")}) argv.push_back(a);
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("--out");
    argv.push_back(out);
  };
  if (rank2_args.empty()) {
    app(3, {});
  } else {
    app(2, {});
    argv.push_back(":");
    app(1, rank2_args);
  }
  return argv;
}

}  // namespace

// Mesh files: pairs with repetitions where rank 2 uses a GID the others cannot reach
// (its flows fail at connect, 0->1 and 1->0 run and get aggregates), and incast with
// repetitions, whose totals' windows are the union of their flows' windows and whose
// rates are all bytes over it.
TEST(ResultsFormat, MeshFilesWithFailuresAndRepetitions) {
  const std::string mpirun = find_in_path("mpirun");
  if (mpirun.empty() || !have_device() || run({kBin, "mesh"}, 30s).err.find("without MPI") != std::string::npos) {
    if (std::getenv("RDMASWEEP_REQUIRE_DEVICE")) FAIL() << "needs mpirun, an RDMA device and an MPI build";
    GTEST_SKIP() << "needs mpirun, an RDMA device and an MPI build (run inside tools/rxe-lab)";
  }
  const std::string dir = make_temp_dir("rdmasweep-format");
  const std::vector<std::string> small{"--op", "write", "-s", "4096", "-n", "50", "--warmup", "5", "--repetitions", "2",
                                       "--timeout", "2"};

  // GID index 0 is the port's IPv6 link-local GID; the others pick the IPv4 one.
  std::vector<std::string> pairs = small;
  pairs.insert(pairs.begin(), {"--pattern", "pairs", "--clock", "system"});
  Outcome o = run(mesh_argv(mpirun, pairs, dir + "/pairs.json", {"-x", "0"}), 300s);
  EXPECT_NE(o.code, 0) << o.out << o.err;
  json doc = load_json(dir + "/pairs.json");
  ASSERT_TRUE(doc.is_object()) << o.out << o.err;
  std::printf("mesh results with failures: %s/pairs.json\n", dir.c_str());
  check_context(doc["context"], "system", "mesh");
  check_gbench_fields(doc);
  check_configs(doc);
  size_t failed = 0, aggregates = 0, measured = 0;
  for (const json& b : doc["benchmarks"]) {
    if (b.value("error_occurred", false)) ++failed;
    else if (b["run_type"] == "aggregate") ++aggregates;
    else ++measured, check_measured_run(b);
  }
  EXPECT_EQ(measured, 2u * 2) << "0->1 and 1->0, twice: " << o.out << o.err;
  EXPECT_EQ(aggregates, 2u * 4) << o.out;
  EXPECT_EQ(failed, 4u * 2) << "the 4 flows to or from rank 2, twice: " << o.out;

  std::vector<std::string> incast = small;
  incast.insert(incast.begin(), {"--pattern", "incast", "-q", "1,2"});
  o = run(mesh_argv(mpirun, incast, dir + "/incast.json"), 300s);
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  doc = load_json(dir + "/incast.json");
  ASSERT_TRUE(doc.is_object()) << o.out << o.err;
  std::printf("mesh results with totals: %s/incast.json\n", dir.c_str());
  check_context(doc["context"], "auto", "mesh");
  check_gbench_fields(doc);
  check_configs(doc);

  // Per run (point + repetition): the flows, and the total.
  std::map<std::string, std::vector<json>> flows;
  std::vector<json> totals;
  aggregates = 0;
  for (const json& b : doc["benchmarks"]) {
    if (b["run_type"] == "aggregate") {
      ++aggregates;
      continue;
    }
    check_measured_run(b);
    const std::string name = b["name"];
    const std::string key = b["point"].get<std::string>() + "#" + std::to_string(b["repetition_index"].get<int>());
    if (name.size() >= 6 && name.compare(name.size() - 6, 6, "/total") == 0) totals.push_back(b);
    else flows[key].push_back(b);
  }
  EXPECT_EQ(aggregates, 2u * 3 * 4) << "2 points: 2 flows and the total, 4 aggregates each";
  ASSERT_EQ(totals.size(), 2u * 2);
  for (const json& t : totals) {
    SCOPED_TRACE(t.dump());
    const auto& fs = flows[t["point"].get<std::string>() + "#" + std::to_string(t["repetition_index"].get<int>())];
    ASSERT_EQ(fs.size(), 2u);
    double start = INFINITY, end = -INFINITY, sum_rate = 0, bytes = 0;
    for (const json& f : fs) {
      EXPECT_GE(f["window_start_seconds"].get<double>(), 0) << "a window starts after the phase's barrier";
      start = std::min(start, f["window_start_seconds"].get<double>());
      end = std::max(end, f["window_end_seconds"].get<double>());
      sum_rate += f["bytes_per_second"].get<double>();
      bytes += f["bytes"].get<double>();
    }
    EXPECT_EQ(t["bytes"].get<double>(), bytes);
    EXPECT_NEAR(t["seconds"].get<double>(), end - start, 1e-9);
    EXPECT_NEAR(t["sum_of_flow_bytes_per_second"].get<double>(), sum_rate, sum_rate * 1e-9);
    EXPECT_LE(t["bytes_per_second"].get<double>(), sum_rate * (1 + 1e-9));
  }
}

}  // namespace rdmasweep::test
