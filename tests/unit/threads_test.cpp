// What --threads decides without a device: where threads run (a made-up sysfs/procfs
// tree), how the threads' results combine into a point's, and that a failing thread
// stops the others and its own error is the one reported.
#include <gtest/gtest.h>

#include <numaif.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "core/config/config.hpp"
#include "core/engine/shared_cq.hpp"
#include "core/host/placement.hpp"
#include "core/point/lanes.hpp"
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

// A CQ without a device: ibv_poll_cq calls the context's poll_cq, which hands out
// `cq_queue` in order, as many as asked.
std::vector<ibv_wc> cq_queue;
int fake_poll_cq(ibv_cq*, int n, ibv_wc* wc) {
  const int k = std::min<int>(n, static_cast<int>(cq_queue.size()));
  std::copy(cq_queue.begin(), cq_queue.begin() + k, wc);
  cq_queue.erase(cq_queue.begin(), cq_queue.begin() + k);
  return k;
}

// A CQ without a device whose polls go to `poll`.
struct FakeCq {
  ibv_context ctx{};
  ibv_cq cq{};
  explicit FakeCq(int (*poll)(ibv_cq*, int, ibv_wc*)) {
    ctx.ops.poll_cq = poll;
    cq.context = &ctx;
  }
};

ibv_wc completion(uint32_t qpn, uint64_t id) {
  ibv_wc wc{};
  wc.qp_num = qpn;
  wc.wr_id = id;
  return wc;
}

// --cq-scope process: a point polls as many completions as its own --poll-batch asks,
// whatever the batch of the point that built the shared CQ (its resources are reused
// across poll batches), and each thread gets only its own QPs', in order.
TEST(SharedCqPolling, EachPollTakesTheBatchItAsksForAndOnlyItsOwnQps) {
  FakeCq fake(fake_poll_cq);
  SharedCq shared(&fake.cq, {7, 8}, {0, 1}, 2, 256);  // QP 7 on thread 0, QP 8 on thread 1
  cq_queue.clear();
  for (uint64_t i = 0; i < 100; ++i) cq_queue.push_back(completion(7, i));
  std::vector<ibv_wc> out(64);
  ASSERT_EQ(shared.poll(0, 64, out.data()), 64);  // a batch of 64 (the first point's was 16)
  for (uint64_t i = 0; i < 64; ++i) EXPECT_EQ(out[i].wr_id, i);
  ASSERT_EQ(shared.poll(0, 64, out.data()), 36);
  EXPECT_EQ(out[35].wr_id, 99u);

  cq_queue.clear();
  for (uint64_t i = 0; i < 40; ++i) {
    cq_queue.push_back(completion(7, 100 + i));
    cq_queue.push_back(completion(8, 200 + i));
  }
  ASSERT_EQ(shared.poll(0, 64, out.data()), 32);  // of 64 polled, thread 1's 32 handed over
  for (uint64_t i = 0; i < 32; ++i) EXPECT_EQ(out[i].wr_id, 100 + i);
  ASSERT_EQ(shared.poll(1, 64, out.data()), 40);  // its 32 handed over, then 8 of 16 polled
  for (uint64_t i = 0; i < 40; ++i) EXPECT_EQ(out[i].wr_id, 200 + i);
  ASSERT_EQ(shared.poll(0, 64, out.data()), 8);  // handed over by thread 1
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(out[i].wr_id, 132 + i);
  EXPECT_TRUE(cq_queue.empty());
}

// Two threads poll one CQ at once, QP 7's completions on thread 0 and QP 8's on thread
// 1, interleaved; the fake CQ yields inside every poll, as a real one can be slow. A
// completion one thread hands over must not be overtaken by a later one of the same
// QP that its own thread polls: each thread sees its QP's completions in CQ order.
std::mutex racing_mu;
std::vector<ibv_wc> racing_queue;
size_t racing_next = 0;
int racing_poll_cq(ibv_cq*, int n, ibv_wc* wc) {
  std::this_thread::yield();  // widens the window between a thread's mailbox check and its poll
  std::lock_guard<std::mutex> g(racing_mu);
  const int k = std::min<int>(n, static_cast<int>(racing_queue.size() - racing_next));
  std::copy(racing_queue.begin() + static_cast<std::ptrdiff_t>(racing_next),
            racing_queue.begin() + static_cast<std::ptrdiff_t>(racing_next) + k, wc);
  racing_next += static_cast<size_t>(k);
  return k;
}

TEST(SharedCqPolling, EachQpsCompletionsReachItsThreadInCqOrder) {
  FakeCq fake(racing_poll_cq);
  constexpr uint64_t kEach = 20000;
  SharedCq shared(&fake.cq, {7, 8}, {0, 1}, 2, 2 * kEach);
  racing_queue.clear();
  racing_next = 0;
  for (uint64_t i = 0; i < kEach; ++i) {
    racing_queue.push_back(completion(7, i));
    racing_queue.push_back(completion(8, i));
  }
  std::atomic<uint64_t> out_of_order{0};
  auto drain = [&](uint32_t lane) {
    std::vector<ibv_wc> out(2);
    uint64_t seen = 0;
    while (seen < kEach) {
      const int got = shared.poll(lane, 2, out.data());
      for (int i = 0; i < got; ++i, ++seen)
        if (out[static_cast<size_t>(i)].wr_id != seen) ++out_of_order;
    }
  };
  std::thread other(drain, 1);
  drain(0);
  other.join();
  EXPECT_EQ(out_of_order.load(), 0u) << "a QP's completions reached its thread out of CQ order";
}

// --cq-scope process: each thread's mailbox holds what of the shared CQ can be its
// (its own QPs' outstanding work), not the whole CQ: memory grows with the threads,
// not with their square.
TestConfig shared_point(uint32_t threads, uint32_t qps) {
  TestConfig c;
  c.work.op = Op::Send;
  c.work.qps = qps;
  c.knobs.threads = threads;
  c.knobs.cq_scope = CqScope::Process;
  return c;
}

TEST(SharedCqMailboxes, EachHoldsItsThreadsShareNotTheWholeCq) {
  FakeCq fake(fake_poll_cq);
  const uint32_t own = 4 * (128 / 32 + 512);  // 4 SEND QPs: ceil(tx 128 / signal 32) sends and 512 receives each
  for (uint32_t threads : {2u, 4u, 16u}) {
    const TestConfig c = shared_point(threads, 4);
    std::vector<uint32_t> qpns, lanes;
    for (uint32_t q = 0; q < 4 * threads; ++q) {
      qpns.push_back(100 + q);
      lanes.push_back(q / 4);
    }
    SharedCq shared(&fake.cq, qpns, lanes, threads, mailbox_depth(c));
    for (uint32_t t = 0; t < threads; ++t)  // +1: room for its first failed completion
      EXPECT_EQ(shared.mailbox_capacity(t), own + 1) << threads << " threads, thread " << t;
    EXPECT_EQ(shared.mailbox_bytes(), uint64_t{threads} * (own + 1) * sizeof(ibv_wc)) << threads << " threads";
  }
}

// The bound holds at its limit: everything thread 1's QP can have outstanding, all
// polled by thread 0 and handed over before thread 1 takes any, fits. A QP in error
// flushes its unsignaled SENDs too, past that bound: thread 1 gets the first failure
// (where its loop stops) and the rest are dropped, not an overflow of their own.
TEST(SharedCqMailboxes, ItsThreadsWholeOutstandingWorkFitsAndItsFirstFailure) {
  FakeCq fake(fake_poll_cq);
  const uint64_t own = 128 / 32 + 512;
  SharedCq shared(&fake.cq, {7, 8}, {0, 1}, 2, mailbox_depth(shared_point(2, 1)));
  cq_queue.clear();
  for (uint64_t i = 0; i < own; ++i) cq_queue.push_back(completion(8, i));
  for (uint64_t i = 0; i < 128; ++i) {
    cq_queue.push_back(completion(8, own + i));
    cq_queue.back().status = IBV_WC_WR_FLUSH_ERR;
  }
  std::vector<ibv_wc> out(16);
  while (!cq_queue.empty()) ASSERT_EQ(shared.poll(0, 16, out.data()), 0);  // every one thread 1's
  uint64_t seen = 0, failed = 0;
  for (int got; (got = shared.poll(1, 16, out.data())) > 0;)
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = out[static_cast<size_t>(i)];
      EXPECT_EQ(wc.wr_id, seen + failed) << "out of CQ order";
      (wc.status == IBV_WC_SUCCESS ? seen : failed) += 1;
    }
  EXPECT_EQ(seen, own);
  EXPECT_EQ(failed, 1u);
}

// Two threads at 1000 messages/s each, sampled every 0.1 s; thread 1 read no clock
// from 0.2 s to past 0.3 s (it slept through that boundary). The point's series adds
// the threads' counts at the same boundaries, never sample k of one to sample k of
// the other: every interval of the point is at 2000/s.
TEST(ThreadLanes, TimelinesAreMergedByTimeNotBySampleIndex) {
  std::vector<PointResult> lanes = {lane(460, 1.0, 1.46, 0.4), lane(460, 1.0, 1.46, 0.4)};
  lanes[0].timeline = Timeline{0.1, {0.1, 0.2, 0.3, 0.4, 0.46}, {100, 200, 300, 400, 460}};
  lanes[1].timeline = Timeline{0.1, {0.1, 0.3, 0.4, 0.46}, {100, 300, 400, 460}};
  PointResult r = combine_lanes(lanes);
  EXPECT_EQ(r.timeline.t, (std::vector<double>{0.1, 0.3, 0.4, 0.46}));  // 0.2: thread 1's count unknown
  EXPECT_EQ(r.timeline.messages, (std::vector<uint64_t>{200, 600, 800, 920}));
  for (double rate : interval_rates(r.timeline)) EXPECT_NEAR(rate, 2000, 1e-6);

  // A thread whose window ended early counts its total at every later boundary, and
  // a thread that started later is placed on the point's clock.
  lanes = {lane(250, 1.0, 1.25, 0.2), lane(350, 1.05, 1.45, 0.3)};
  lanes[0].timeline = Timeline{0.1, {0.1, 0.2, 0.25}, {100, 200, 250}};
  lanes[1].timeline = Timeline{0.1, {0.1, 0.2, 0.3, 0.4}, {100, 200, 300, 350}};
  r = combine_lanes(lanes);
  ASSERT_EQ(r.timeline.t.size(), 4u);
  EXPECT_NEAR(r.timeline.t[0], 0.15, 1e-6);  // each boundary once every thread passed it
  EXPECT_NEAR(r.timeline.t[1], 0.25, 1e-6);
  EXPECT_NEAR(r.timeline.t[2], 0.35, 1e-6);  // thread 0's 250, final since 0.25
  EXPECT_NEAR(r.timeline.t[3], 0.45, 1e-6);  // the point's window's end
  EXPECT_EQ(r.timeline.messages, (std::vector<uint64_t>{200, 400, 550, 600}));
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

// A thread that cannot start (std::thread throws std::system_error, as at
// RLIMIT_NPROC) must not unwind past the started ones (std::terminate, the whole
// server gone): they are stopped and joined, and the point fails with one error
// naming the thread and the limit.
std::string nproc_limit() {
  rlimit rl{};
  getrlimit(RLIMIT_NPROC, &rl);
  return rl.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(rl.rlim_cur);
}

TEST(ThreadLanes, AThreadThatCannotStartStopsAndJoinsTheStartedOnes) {
  std::atomic<int> bodies{0}, ended{0};
  uint32_t starts = 0;
  const ThreadStarter start = [&](std::function<void()> fn) {
    if (++starts == 6) throw std::system_error(EAGAIN, std::generic_category(), "pthread_create");
    return std::thread([fn, &ended] {
      fn();
      ++ended;
    });
  };
  RunControl ctl;
  try {  // lane 0 is the caller: lanes 1 to 5 start, lane 6 (the 7th thread) cannot
    run_threads(16, nullptr, ctl, [&](uint32_t, const RunControl&) { ++bodies; }, start);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot start thread 7 of 16 for the point: " + std::generic_category().message(EAGAIN)),
              std::string::npos) << what;
    EXPECT_NE(what.find("RLIMIT_NPROC, `ulimit -u`, is " + nproc_limit()), std::string::npos) << what;
    EXPECT_NE(what.find("lower --threads"), std::string::npos) << what;
  }
  EXPECT_EQ(ended.load(), 5) << "the started threads were not all joined";
  EXPECT_EQ(bodies.load(), 0) << "a lane ran without all the others";
}

// The same at the real limit, in a child. The limit counts the user's processes and
// threads, and root is exempt: as root the child takes a user of its own, whose only
// process it is, so two threads start and the third cannot; as anyone else it
// cannot start even one.
const uid_t kLoneUid = 54321;

[[noreturn]] void start_four_threads_at_the_process_limit() {
  const bool root = getuid() == 0;
  if (root && (setgid(kLoneUid) != 0 || setuid(kLoneUid) != 0)) _exit(3);
  const rlim_t limit = root ? 3 : 1;
  const rlimit lim{limit, limit};
  if (setrlimit(RLIMIT_NPROC, &lim) != 0) _exit(4);
  try {
    run_threads(4, nullptr, RunControl{}, [](uint32_t, const RunControl&) {});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    _exit(0);
  }
  _exit(5);
}

TEST(ThreadLanes, AtTheRealProcessLimitThePointFailsAndTheProcessGoesOn) {
  const bool root = getuid() == 0;
  EXPECT_EXIT(start_four_threads_at_the_process_limit(), ::testing::ExitedWithCode(0),
              std::string("cannot start thread ") + (root ? "4" : "2") +
                  " of 4 for the point: .*RLIMIT_NPROC, `ulimit -u`, is " + (root ? "3" : "1") + "\\)");
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

// The peer says why it failed the point, then hangs up. The lane that took the reason
// is still unwinding when another looks at the channel and finds it closed: the point
// must report the reason, not the close (a server out of threads was reported as
// "closed the control connection" when the client ran 16 lanes).
TEST(ThreadLanes, ThePeersReasonIsReportedNotTheCloseAnotherLaneFindsAfterIt) {
  std::atomic<int> reads{0};
  RunControl ctl;
  ctl.on_idle = [&] {
    if (reads++ == 0) throw std::runtime_error("the peer reported: it cannot start its threads");
    throw std::runtime_error("peer closed the control connection");
  };
  std::atomic<bool> unwinding{false}, other_out{false};
  struct HoldWhileUnwinding {  // lane 1, between leaving on_idle and its failure being noted
    std::atomic<bool>& unwinding;
    std::atomic<bool>& other_out;
    ~HoldWhileUnwinding() {
      if (std::uncaught_exceptions() == 0) return;
      unwinding = true;
      for (int i = 0; i < 2000 && !other_out.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  try {
    run_threads(2, nullptr, ctl, [&](uint32_t t, const RunControl& c) {
      if (t == 1) {
        HoldWhileUnwinding hold{unwinding, other_out};
        c.on_idle();  // reads the peer's reason, which throws
        return;
      }
      while (!unwinding.load()) std::this_thread::yield();
      try {
        for (;;) c.on_idle();
      } catch (...) {
        other_out = true;
        throw;
      }
    });
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "the peer reported: it cannot start its threads");
  }
  EXPECT_EQ(reads.load(), 1) << "a lane read the channel after the lane that took the peer's reason";
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
