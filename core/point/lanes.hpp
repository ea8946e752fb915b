// A point on several threads (--threads): each thread owns its QPs, buffers and, by
// default, its CQ (one TestResources per thread, a "lane"); with --cq-scope process
// all lanes' QPs complete on one shared CQ. run_threads starts one loop per lane at
// once, pinned as the Placement says; with one thread nothing changes: the loop runs
// on the calling thread as it always did.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/setup/test_resources.hpp"
#include "core/engine/loop.hpp"
#include "core/engine/shared_cq.hpp"
#include "core/host/placement.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

class CmLinks;

// In place of a point's verbs objects and its lanes' loops, so that the point protocol
// (core/point/point_protocol.hpp) runs on no device: its abort-path tests
// (tests/unit/abort_paths_test.cpp). Nothing else makes one.
class LaneStandIn {
 public:
  virtual ~LaneStandIn() = default;
  virtual Endpoint endpoint(uint32_t lane) const = 0;
  // What measure_point does on lane `lane`.
  virtual PointResult measure(uint32_t lane, const RunControl& ctl, std::vector<uint64_t>& sent) = 0;
  // What run_bw_receiver (SEND bandwidth) or run_lat_responder does on lane `lane`.
  virtual LoopStats follow(uint32_t lane, std::vector<uint64_t>& expected, const RunControl& ctl,
                           const bool* finished) = 0;
};

class PointResources {
 public:
  // `memory_node`: the NUMA node its buffers and queues are allocated on (-1: wherever
  // the kernel puts them).
  PointResources(const verbs::Device& dev, const GidEntry& gid, const TestConfig& cfg, Role role, uint64_t slot = 0,
                 int memory_node = -1);
  // No device: `cfg`'s lanes stood in for by `stand_in`, which outlives this. lane(),
  // can_serve() and slot_bytes() have nothing to give; connect() and the window nothing to do.
  PointResources(const TestConfig& cfg, LaneStandIn& stand_in);
  PointResources(const PointResources&) = delete;
  PointResources& operator=(const PointResources&) = delete;
  ~PointResources();

  uint32_t threads() const { return stand_in_ ? cfg().knobs.threads : static_cast<uint32_t>(lanes_.size()); }
  TestResources& lane(uint32_t t) { return *lanes_[t]; }
  const TestResources& lane(uint32_t t) const { return *lanes_[t]; }
  std::vector<TestResources*> lanes() const {
    std::vector<TestResources*> out;
    for (const auto& l : lanes_) out.push_back(l.get());
    return out;
  }
  const TestConfig& cfg() const { return stand_in_ ? *stand_in_cfg_ : lanes_[0]->cfg; }
  LaneStandIn* stand_in() const { return stand_in_; }
  uint64_t slot_bytes() const { return lanes_[0]->msg_stride; }  // per message: what the peer sizes by

  bool can_serve(const TestConfig& next) const { return lanes_[0]->can_serve(next); }
  void retarget(const TestConfig& next);
  void limit_reads(uint32_t peer_max_rd_atom);
  void close_window();
  std::vector<Endpoint> local_endpoints() const;
  void connect(const std::vector<Endpoint>& peer);
  void set_remote(const std::vector<Endpoint>& peer);
  // iWARP WRITE tests (a no-op otherwise): returns once every WRITE posted has landed at
  // the peer (fence_writes on each lane). iWARP completes a WRITE when TCP has taken its
  // data, not when the peer has placed it, so the peer, told DONE over the control
  // channel, could close its window (its rkey) under WRITEs still on the way: they
  // would fail and end the connection.
  void fence_writes(std::chrono::milliseconds timeout);

 private:
  // Declared so the lanes' QPs go first, the shared CQ last.
  verbs::CompletionQueue shared_cq_;
  std::unique_ptr<SharedCq> router_;
  std::vector<std::unique_ptr<TestResources>> lanes_;
  LaneStandIn* stand_in_ = nullptr;
  std::unique_ptr<TestConfig> stand_in_cfg_;

 public:
  // --cm: the RDMA-CM ids that connected the lanes' QPs (null otherwise).
  std::unique_ptr<CmLinks> cm;
};

// QP reuse, one rule for the client, the server and the mesh: the previous point's
// resources, `kept` (null: none), serve `next` when its QPs, queues and buffers fit it.
inline bool reusable(const PointResources* kept, const TestConfig& next) {
  return kept != nullptr && kept->can_serve(next);
}

// What a point's new resources are made for besides its config, as the client, the
// server and the mesh each know it.
struct ResourceSpec {
  const verbs::Device& dev;
  const GidEntry& gid;
  Role role;
  uint64_t slot = 0;       // the peer's stride (the server), or 0: the point's own
  int memory_node = -1;    // where buffers and queues live (-1: wherever the kernel puts them)
  uint32_t peer_max_rd_atom = 0;  // READs/atomics in flight the peer's device takes (0: not said)
};
// A point's new resources: both ends of a QP agree on reads and atomics in flight,
// so they are limited at once to what the peer takes.
std::unique_ptr<PointResources> make_resources(const ResourceSpec& spec, const TestConfig& cfg);

// Starts a thread running its function: std::thread's constructor when empty, which
// throws std::system_error when the system gives no more threads (EAGAIN at
// RLIMIT_NPROC). Tests pass one that fails on purpose.
using ThreadStarter = std::function<std::thread(std::function<void()>)>;

// A thread that could not start; its message names it, the process limit and the fix.
class ThreadStartError : public std::runtime_error {
 public:
  ThreadStartError(const std::string& why, uint32_t first_missing) : std::runtime_error(why), index(first_missing) {}
  uint32_t index;  // the first of the threads asked for that did not start
};

// Starts body(i) for every i in [first, n) on a thread of its own, into `started`.
// When thread i cannot start, unwinding past the started ones would end the process
// (std::terminate, and a server with every session on it): stop(why) is called, which
// must make every started body return soon (they may be waiting for the ones that
// never came), they are joined, and ThreadStartError(why) says "cannot start thread
// i+1 of n for `what`", the reason, RLIMIT_NPROC and `fix`.
void start_threads(std::vector<std::thread>& started, uint32_t first, uint32_t n, const std::string& what,
                   const std::string& fix, const std::function<void(uint32_t)>& body,
                   const std::function<void(const std::string&)>& stop, const ThreadStarter& start = {});

// Runs body(t, ctl_t) for every lane t at once: lane 0 on the calling thread, the
// others on threads of their own. Every lane's idle check calls the caller's on_idle
// (the control channel it reads), one lane at a time, whichever is idle first, so a
// lane that finished early leaves no other deaf to the peer. All start together after
// a barrier, pinned when `place` says so; when one fails the others stop at their
// next idle check, and the first failure is rethrown. A thread that cannot start
// fails the point (ThreadStartError), the started ones stopped at the barrier.
void run_threads(uint32_t n, const Placement* place, const RunControl& ctl,
                 const std::function<void(uint32_t, const RunControl&)>& body, const ThreadStarter& start = {});

// Waits until all `n` threads arrive (a spinning barrier, reusable). While it waits
// it calls `check` now and then, which throws to give up (another thread failed).
class ThreadBarrier {
 public:
  explicit ThreadBarrier(uint32_t n) : n_(n) {}
  void wait(const std::function<void()>& check);

 private:
  const uint32_t n_;
  std::atomic<uint32_t> arrived_{0};
  std::atomic<uint32_t> round_{0};
};

// The initiator's measured run on every lane at once (measure_point per lane, with a
// barrier between the warm-up and the measured loop), combined: totals over the
// common window (first thread's start to last thread's end), per-QP figures in lane
// order, histograms merged, CPU summed, each thread's own messages, window and CPU.
PointResult measure_threads(PointResources& res, const RunControl& ctl, double interval, const Placement* place,
                            std::vector<uint64_t>& sent);

// The following side of one point on every lane at once: a SEND bandwidth receiver
// per lane until each QP got what was sent (iters + warm-up; with --duration, only
// once known), or a SEND/WRITE latency responder per lane until the end. `final`
// is asked at every lane's idle check: null until the initiator's final per-QP
// counts (all lanes' QPs, lane order) are known, then those counts, which also end
// the responders. Returns the messages per QP (lane order) and the lanes' CPU summed.
LoopStats follow_threads(PointResources& res, const RunControl& ctl, const Placement* place,
                         const std::function<const std::vector<uint64_t>*()>& final_counts);

// Combines the lanes' results as measure_threads does (exposed for tests).
PointResult combine_lanes(std::vector<PointResult>& lanes);

}  // namespace rdmasweep
