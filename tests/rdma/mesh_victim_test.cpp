// `rdmasweep mesh --pattern victim` under a real mpirun: 3 ranks on one RDMA device
// (Soft-RoCE in the lab VM), one pair alone and beside the other ranks' background.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/mpi_run.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

// --pattern victim: rank 1 -> 0 alone, then again while rank 2 sends the --beside
// background onto rank 0 (an incast onto the victim's host). The victim's second entry
// is NAME/beside, names its background and counts every message; the background's flow
// is an entry of its own; two ranks are refused in one line.
TEST(Mesh, VictimRunsAloneThenBesideTheOtherRanksBackground) {
  REQUIRE_MESH();
  json doc;
  Outcome o;
  run_ok(3, {"--pattern", "victim", "--op", "write", "--mode", "lat", "-s", "64", "-n", "300", "--warmup", "10",
             "--beside", "op=write,mode=bw,qps=2,size=16k"},
         &doc, &o);
  if (HasFatalFailure()) return;
  std::vector<std::string> names;
  for (const json& b : doc["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
    names.push_back(b["name"].get<std::string>());
  }
  const std::string alone = "mesh/victim/write/lat/qps:1/size:64/cq:4/src:1/dst:0";
  ASSERT_EQ(names.size(), 3u) << both(o);
  EXPECT_EQ(names[0], alone);
  EXPECT_EQ(names[1], alone + "/beside");
  EXPECT_EQ(names[2].rfind("mesh/victim/write/bw/qps:2/size:16384/", 0), 0u) << names[2];
  EXPECT_NE(names[2].find("/src:2/dst:0/background"), std::string::npos) << names[2];
  const json& beside = doc["benchmarks"][1];
  EXPECT_EQ(beside["background"].get<std::string>() + "/src:2/dst:0/background", names[2].substr(12));
  EXPECT_EQ(beside["point"].get<std::string>(), "write/lat/qps:1/size:64/cq:4/beside");  // its own row
  EXPECT_EQ(beside["messages"].get<double>(), 300);
  EXPECT_EQ(doc["benchmarks"][0]["messages"].get<double>(), 300);
  EXPECT_GT(doc["benchmarks"][2]["bytes_per_second"].get<double>(), 0);
  EXPECT_LE(beside["window_end_seconds"].get<double>(), doc["benchmarks"][2]["window_end_seconds"].get<double>());

  std::vector<std::string> two = mpirun(2);
  two.insert(two.end(), {"--pattern", "victim", "--op", "write", "--beside", "op=write", "--out", temp_dir() + "/x.json"});
  Outcome refused = run(two, 120s);
  EXPECT_EQ(refused.code, 2) << both(refused);
  EXPECT_NE(refused.err.find("--pattern victim needs 3 ranks or more"), std::string::npos) << both(refused);
}

}  // namespace rdmasweep::test
