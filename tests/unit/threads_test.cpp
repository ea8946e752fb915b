// What --threads decides without a device: where threads run (a made-up sysfs/procfs
// tree), how the threads' results combine into a point's, and that a failing thread
// stops the others and its own error is the one reported.
#include <gtest/gtest.h>

#include <numaif.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <stdexcept>

#include "core/config.hpp"
#include "core/lanes.hpp"
#include "core/placement.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep {
namespace {

void put(const std::string& root, const std::string& path, const std::string& text) {
  for (size_t at = 1; (at = path.find('/', at)) != std::string::npos; ++at) mkdir((root + path.substr(0, at)).c_str(), 0755);
  std::ofstream(root + path) << text << "\n";
}

TEST(Placement, CpuListsParseAndPrintBack) {
  EXPECT_EQ(parse_cpu_list("2-4,12, 7"), (std::vector<int>{2, 3, 4, 12, 7}));
  EXPECT_EQ(cpu_list_text({7, 2, 3, 4, 12}), "2-4,7,12");
  EXPECT_THROW(parse_cpu_list("4-2"), ConfigError);
  EXPECT_THROW(parse_cpu_list("x"), ConfigError);
  EXPECT_THROW(parse_cpu_list(""), ConfigError);
}

TEST(Placement, DefaultIsTheDevicesNodeLessItsInterruptCores) {
  std::string root = test::make_temp_dir("placement");
  put(root, "/allowed", "0-7");
  put(root, "/sys/class/infiniband/mlx5_0/device/numa_node", "1");
  put(root, "/sys/devices/system/node/node1/cpulist", "4-7");
  put(root, "/sys/class/infiniband/mlx5_0/device/msi_irqs/40", "msi");
  put(root, "/proc/irq/40/effective_affinity_list", "5");
  Placement p = choose_placement("mlx5_0", "", root);
  EXPECT_EQ(p.numa_node, 1);
  EXPECT_EQ(p.cpus, (std::vector<int>{4, 6, 7}));
  EXPECT_EQ(p.irq_cpus, (std::vector<int>{5}));
  EXPECT_FALSE(p.pins(1));  // one thread keeps the affinity it was started with
  EXPECT_TRUE(p.pins(2));
  EXPECT_EQ(p.cpu_of(3), 4);  // more threads than cores: round robin
  // A device with no NUMA node (Soft-RoCE): the cores this process may use.
  Placement soft = choose_placement("rxe0", "", root);
  EXPECT_EQ(soft.numa_node, -1);
  EXPECT_EQ(soft.cpus.size(), 8u);
}

TEST(Placement, ExplicitCpusMustBeOnesThisProcessMayUse) {
  std::string root = test::make_temp_dir("placement");
  put(root, "/allowed", "0-1");
  Placement p = choose_placement("rxe0", "1", root);
  EXPECT_TRUE(p.pins(1));
  EXPECT_EQ(p.cpu_of(0), 1);
  try {
    choose_placement("rxe0", "0,99", root);
    FAIL() << "CPU 99 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--cpus: CPU 99"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0-1"), std::string::npos) << e.what();
  }
}

PointResult lane(uint64_t messages, double start_s, double end_s, double cpu) {
  using namespace std::chrono;
  PointResult r;
  r.messages = messages;
  r.bytes = messages * 64;
  r.per_qp = {messages / 2, messages - messages / 2};
  const steady_clock::time_point t0{};
  r.began = t0 + duration_cast<steady_clock::duration>(duration<double>(start_s));
  r.ended = t0 + duration_cast<steady_clock::duration>(duration<double>(end_s));
  r.seconds = end_s - start_s;
  r.cpu_seconds = cpu;
  return r;
}

TEST(ThreadLanes, ThePointsWindowRunsFromTheFirstStartToTheLastEnd) {
  std::vector<PointResult> lanes = {lane(1000, 1.0, 2.0, 0.9), lane(600, 1.1, 3.0, 1.8)};
  PointResult r = combine_lanes(lanes);
  EXPECT_EQ(r.messages, 1600u);
  EXPECT_EQ(r.bytes, 1600u * 64);
  EXPECT_NEAR(r.seconds, 2.0, 1e-9);          // not the mean or the sum of the threads' windows
  EXPECT_NEAR(r.cpu_seconds, 2.7, 1e-9);      // every thread's CPU
  EXPECT_EQ(r.per_qp, (std::vector<uint64_t>{500, 500, 300, 300}));  // thread order
  EXPECT_EQ(r.thread_messages, (std::vector<uint64_t>{1000, 600}));
  std::vector<double> rates = thread_rates(r);
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_NEAR(rates[0], 1000.0, 1e-6);         // each over its own window
  EXPECT_NEAR(rates[1], 600 / 1.9, 1e-6);
  double jain = 0;
  for (const auto& [k, v] : figures(r))
    if (k == "thread_jain_index") jain = v;
  const double a = 1000.0, b = 600 / 1.9;
  EXPECT_NEAR(jain, (a + b) * (a + b) / (2 * (a * a + b * b)), 1e-9);
}

TEST(ThreadLanes, AFailingThreadStopsTheOthersAndItsErrorIsReported) {
  RunControl ctl;
  std::atomic<int> stopped{0};
  try {
    run_threads(3, nullptr, ctl, [&](uint32_t t, const RunControl& c) {
      if (t == 2) throw std::runtime_error("thread 2 broke");
      for (;;) {  // a loop that only looks outside at its idle checks
        try {
          c.on_idle();
        } catch (const RunAborted&) {
          ++stopped;
          throw;
        }
      }
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "thread 2 broke");
  }
  EXPECT_EQ(stopped.load(), 2);
}

TEST(ThreadLanes, AllThreadsPassTheBarrierTogether) {
  RunControl ctl;
  ThreadBarrier gate(4);
  std::atomic<int> before{0};
  std::atomic<bool> early{false};
  run_threads(4, nullptr, ctl, [&](uint32_t, const RunControl& c) {
    ++before;
    gate.wait(c.on_idle);
    if (before.load() != 4) early = true;
  });
  EXPECT_FALSE(early.load());
}

// Lane 0 (which used to be the only one reading the control channel) finishes at once;
// lane 1 waits for what only the caller's on_idle can tell it (the peer's DONE, say).
// It must hear it at its own idle checks, not wait forever.
TEST(ThreadLanes, EveryLaneLooksOutsideWhenTheFirstHasFinished) {
  std::atomic<bool> told{false};
  RunControl ctl;
  ctl.on_idle = [&] { told = true; };
  std::atomic<bool> heard{false};
  run_threads(2, nullptr, ctl, [&](uint32_t t, const RunControl& c) {
    if (t == 0) return;
    for (int i = 0; i < 100000 && !told.load(); ++i) c.on_idle();
    heard = told.load();
  });
  EXPECT_TRUE(heard.load()) << "lane 1 never reached the caller's on_idle once lane 0 was done";
}

}  // namespace
}  // namespace rdmasweep

namespace rdmasweep {
namespace {

int current_policy() {
  int mode = -1;
  unsigned long mask[16] = {};
  if (get_mempolicy(&mode, mask, sizeof mask * 8, nullptr, 0) != 0) return -1;
  return mode;
}

TEST(Placement, MemoryPrefersTheDevicesNodeWhileResourcesAreSetUp) {
  const int before = current_policy();
  {
    MemoryOnNode none(-1);  // no node known: nothing changes
    EXPECT_FALSE(none.active());
    EXPECT_EQ(current_policy(), before);
  }
  {
    MemoryOnNode near(0);
    if (before < 0) GTEST_SKIP() << "this kernel has no NUMA policy (get_mempolicy fails)";
    ASSERT_TRUE(near.active());
    EXPECT_EQ(current_policy(), MPOL_PREFERRED);
  }
  EXPECT_EQ(current_policy(), before);  // the thread's own policy is back
}

}  // namespace
}  // namespace rdmasweep
