// The workloads beyond RC SEND/WRITE/READ in one direction, on a real device: atomics,
// per-message data validation, a memory region per QP and bidirectional runs, each
// with exact counts against a real `rdmasweep server`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/host/inventory.hpp"
#include "core/verbs/device.hpp"
#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

class Workloads : public ServerSuite {
 protected:
  void SetUp() override {
    ServerSuite::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    atomics_ = capabilities(verbs::Device::open("", 1)).atomics;
  }
  // Every op the device runs: FAA only where it has atomics (iWARP has none).
  std::string ops() const { return atomics_ ? "send,write,read,faa" : "send,write,read"; }
  bool atomics_ = false;
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
        if (std::string(mode) == "lat") {
          EXPECT_EQ(b.value("label", ""), "round trip");
        }
      }
}

TEST_F(Workloads, AtomicsInFlightFollowOuts) {
  std::string out = dir_ + "/r.json";
  Outcome o = client({"--op", "faa", "--outs", "2", "-t", "64", "-n", "100", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  const json r = load_json(out);
  const json& b = point(r, "faa/bw/qps:1/size:8/");
  EXPECT_EQ(b["outs"].get<double>(), 2);
  EXPECT_EQ(b["server_atomic_sum"].get<double>(), 100 + 100);  // the default warm-up is 100
}

// --bidir: the server runs the client's loop at the same time on every QP. Each
// direction counts exactly; the client checks that every SEND the server sent arrived
// (and the server the client's), and FAA's words on both sides.
TEST_F(Workloads, BidirectionalRunsBothDirectionsWithExactCounts) {
  const uint64_t iters = 200, warmup = 10;
  std::string out = dir_ + "/r.json";
  Outcome o = client({"--op", ops(), "--bidir", "0,1", "-q", "1,4", "-s", "64,4096", "-n",
                      std::to_string(iters), "--warmup", std::to_string(warmup), "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  const size_t points = (3 * 2 + (atomics_ ? 1 : 0)) * 2 * 2;  // (3 ops x 2 sizes + faa) x 2 QP counts x bidir 0, 1
  ASSERT_EQ(r["benchmarks"].size(), points);
  size_t both_ways = 0;
  for (const json& b : r["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    const std::string name = b["name"];
    const uint64_t qps = name.find("/qps:4/") != std::string::npos ? 4 : 1;
    EXPECT_EQ(b["messages"].get<double>(), static_cast<double>(qps * iters));
    const bool bidir = name.size() > 6 && name.substr(name.size() - 6) == "/bidir";
    EXPECT_EQ(b.contains("reverse_messages"), bidir);
    if (!bidir) continue;
    ++both_ways;
    EXPECT_EQ(b["reverse_messages"].get<double>(), static_cast<double>(qps * iters));
    EXPECT_GT(b["reverse_items_per_second"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(b["total_items_per_second"].get<double>(),
                     b["items_per_second"].get<double>() + b["reverse_items_per_second"].get<double>());
    EXPECT_DOUBLE_EQ(b["total_bytes_per_second"].get<double>(),
                     b["bytes_per_second"].get<double>() + b["reverse_bytes_per_second"].get<double>());
    if (name.rfind("faa/", 0) == 0) {
      EXPECT_EQ(b["server_atomic_sum"].get<double>(), static_cast<double>(qps * (iters + warmup)));
    }
  }
  EXPECT_EQ(both_ways, points / 2);
}

// --rate with --bidir: each direction runs its own paced schedule at the rate; both
// directions' messages are counted exactly, and the client's figures are its direction's
// schedule (a constant one: exactly the rate). On iWARP each paced SEND also waits for
// the receiver's credit, both ways at once.
TEST_F(Workloads, PacedBothWaysCountsEachDirectionAtTheRate) {
  std::string out = dir_ + "/paced-bidir.json";
  Outcome o = client({"--op", "send,write,read", "--bidir", "1", "--rate", "2kpps", "-q", "2", "-s", "64", "-n", "300",
                      "--warmup", "5", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  ASSERT_EQ(r["benchmarks"].size(), 3u);
  for (const json& b : r["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    EXPECT_NE(b["name"].get<std::string>().find("/bidir/rate:2kpps"), std::string::npos);
    EXPECT_EQ(b["messages"].get<double>(), 600);
    EXPECT_EQ(b["reverse_messages"].get<double>(), 600);
    EXPECT_NEAR(b["offered_items_per_second"].get<double>(), 2000, 2000 * 1e-6);
    EXPECT_GT(b["reverse_items_per_second"].get<double>(), 0);
  }
}

// --beside: each point alone, then again on its own QPs while a background workload
// runs on a second connection the server serves alongside; the second row's ratios are
// its figures over the point's alone (one run: exactly that run's), its counts exact.
TEST_F(Workloads, BesideMeasuresEachPointAloneThenInsideTheBackgroundsTraffic) {
  std::string out = dir_ + "/beside.json";
  Outcome o = client({"--op", "write", "--mode", "lat", "-s", "64", "-n", "200", "--warmup", "10", "--beside",
                      "op=write,mode=bw,qps=4,size=16k", "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  ASSERT_EQ(r["benchmarks"].size(), 2u) << r.dump();
  const json& alone = r["benchmarks"][0];
  const json& beside = r["benchmarks"][1];
  const std::string bg = r["context"]["beside"]["point"].get<std::string>();
  EXPECT_EQ(bg.rfind("write/bw/qps:4/size:16384", 0), 0u) << bg;
  EXPECT_EQ(beside["name"].get<std::string>(), alone["name"].get<std::string>() + "/beside");
  EXPECT_EQ(beside["background"].get<std::string>(), bg);
  EXPECT_EQ(beside["config"], alone["config"]);
  EXPECT_EQ(beside["messages"].get<double>(), 200);
  for (const char* k : {"lat_p50_us", "lat_p99_us", "items_per_second"})
    EXPECT_NEAR(beside[std::string(k) + "_vs_alone"].get<double>(), beside[k].get<double>() / alone[k].get<double>(),
                1e-9 * beside[k].get<double>() / alone[k].get<double>()) << k;
  EXPECT_GT(beside["background_bytes_per_second"].get<double>(), 0);
  EXPECT_FALSE(alone.contains("background"));
  EXPECT_NE(o.out.find("  beside " + bg + ": "), std::string::npos) << o.out;

  Outcome bad = client({"--op", "write", "--beside", "qps=1,2"});
  EXPECT_EQ(bad.code, 2) << both(bad);
  EXPECT_NE(bad.err.find("'2' is not KEY=VALUE"), std::string::npos) << bad.err;
}

TEST_F(Workloads, BidirectionalLatencyAndTimedSendAreRefusedInOneLine) {
  Outcome lat = client({"--bidir", "--mode", "lat", "--out", dir_ + "/a.json"}, 60s);
  EXPECT_EQ(lat.code, 2) << both(lat);
  EXPECT_NE(lat.err.find("bidir: a latency test already goes both ways; use --mode bw"), std::string::npos) << lat.err;
  Outcome timed = client({"--bidir", "--op", "send", "--duration", "1", "--out", dir_ + "/b.json"}, 60s);
  EXPECT_EQ(timed.code, 2) << both(timed);
  EXPECT_NE(timed.err.find("use --iters, not --duration"), std::string::npos) << timed.err;
  for (const Outcome* o : {&lat, &timed}) {
    std::string err = o->err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    EXPECT_EQ(err.find('\n'), std::string::npos) << "one line: " << o->err;
  }
}

// --mr-per-qp: every QP region registered on its own on both sides, each WR with its
// QP's keys. Every op still counts exactly (SEND: each QP's receives checked by the
// server; FAA: one word per QP region, together every operation).
TEST_F(Workloads, MemoryRegionPerQpServesEveryOp) {
  const uint64_t iters = 100, warmup = 10;
  std::string out = dir_ + "/r.json";
  Outcome o = client({"--op", ops(), "--mr-per-qp", "0,1", "-q", "4", "-s", "4096", "-n",
                      std::to_string(iters), "--warmup", std::to_string(warmup), "--out", out});
  ASSERT_EQ(o.code, 0) << both(o);
  json r = load_json(out);
  const size_t ops_run = atomics_ ? 4 : 3;
  ASSERT_EQ(r["benchmarks"].size(), 2 * ops_run);
  size_t per_qp = 0;
  for (const json& b : r["benchmarks"]) {
    SCOPED_TRACE(b.dump());
    const std::string name = b["name"];
    EXPECT_EQ(b["messages"].get<double>(), 4.0 * iters);
    EXPECT_EQ(b["qp_messages_min"].get<double>(), static_cast<double>(iters));
    per_qp += name.find("/mr_per_qp") != std::string::npos;
    if (name.rfind("faa/", 0) == 0) {
      EXPECT_EQ(b["server_atomic_sum"].get<double>(), 4.0 * (iters + warmup));
    }
  }
  EXPECT_EQ(per_qp, ops_run);
  // Latency on per-QP regions too (its layout already has a region per QP).
  Outcome lat = client({"--op", "write", "--mode", "lat", "--mr-per-qp", "-q", "2", "-s", "64", "-n", "50",
                        "--out", dir_ + "/l.json"});
  ASSERT_EQ(lat.code, 0) << both(lat);
  EXPECT_EQ(load_json(dir_ + "/l.json")["benchmarks"][0]["messages"].get<double>(), 100.0);
}

}  // namespace rdmasweep::test
