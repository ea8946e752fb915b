// The workloads beyond RC SEND/WRITE/READ in one direction, on a real device: atomics,
// per-message data validation, a memory region per QP and bidirectional runs, each
// with exact counts against a real `rdmasweep server`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

class Workloads : public ServerSuite {
 protected:
  Outcome client(std::vector<std::string> args, std::chrono::milliseconds timeout = 300s) {
    return run(client_argv(args), timeout);
  }
  static std::string both(const Outcome& o) { return "stdout:\n" + o.out + "\nstderr:\n" + o.err; }
};

static const json& point(const json& r, const std::string& prefix) {
  for (const json& b : r["benchmarks"])
    if (b["name"].get<std::string>().rfind(prefix, 0) == 0) return b;
  static const json none;
  ADD_FAILURE() << "no point named " << prefix << "... in " << r.dump();
  return none;
}

// FAA adds 1 per operation to the server's word, so the server's sum is exactly every
// operation the client posted (warm-up included); CAS swaps 0 for 1 once per region
// (one per QP in latency tests, one per thread in bandwidth tests).
TEST_F(Workloads, AtomicsCountEveryOperationInTheServersMemory) {
  const uint64_t iters = 150, warmup = 10;
  std::string out = dir_ + "/r.json";
  Outcome o = client({"--op", "cas,faa", "--mode", "bw,lat", "-q", "1,4", "-s", "64,4096", "-n",
                      std::to_string(iters), "--warmup", std::to_string(warmup), "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  ASSERT_EQ(r["benchmarks"].size(), 8u) << "one 8-byte point per op, mode and QP count, whatever --size says";
  for (const char* op : {"cas", "faa"})
    for (const char* mode : {"bw", "lat"})
      for (uint64_t qps : {1, 4}) {
        const json& b = point(r, std::string(op) + "/" + mode + "/qps:" + std::to_string(qps) + "/size:8/");
        SCOPED_TRACE(b.dump());
        EXPECT_FALSE(b.value("error_occurred", false));
        EXPECT_EQ(b["messages"].get<double>(), static_cast<double>(qps * iters));
        EXPECT_EQ(b["bytes"].get<double>(), static_cast<double>(qps * iters * 8));
        EXPECT_GE(b["outs"].get<double>(), 1);  // atomics in flight, bounded by max_qp_rd_atom
        const double want = std::string(op) == "faa" ? static_cast<double>(qps * (iters + warmup))
                            : std::string(mode) == "lat" ? static_cast<double>(qps)
                                                         : 1.0;
        EXPECT_EQ(b["server_atomic_sum"].get<double>(), want);
        EXPECT_EQ(b.contains("lat_p50_us"), std::string(mode) == "lat");
        // An atomic's latency is its round trip, as READ's (not halved like SEND's and WRITE's).
        if (std::string(mode) == "lat") EXPECT_EQ(b.value("label", ""), "round trip");
      }
}

TEST_F(Workloads, AtomicsInFlightFollowOuts) {
  std::string out = dir_ + "/r.json";
  Outcome o = client({"--op", "faa", "--outs", "2", "-t", "64", "-n", "100", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  const json& b = point(load_json(out), "faa/bw/qps:1/size:8/");
  EXPECT_EQ(b["outs"].get<double>(), 2);
  EXPECT_EQ(b["server_atomic_sum"].get<double>(), 100 + 100);  // the default warm-up is 100
}

}  // namespace rdmasweep::test
