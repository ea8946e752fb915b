#include "core/point/lanes.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/config/refusals.hpp"
#include "core/engine/fence.hpp"
#include "core/point/cm_connect.hpp"
#include "core/point/measured_run.hpp"
#include "core/setup/device_checks.hpp"

namespace rdmasweep {

PointResources::PointResources(const verbs::Device& dev, const GidEntry& gid, const TestConfig& cfg, Role role,
                               uint64_t slot, int memory_node) {
  MemoryOnNode near(memory_node);
  const uint32_t n = cfg.knobs.threads;
  const bool shared = n > 1 && cfg.knobs.cq_scope == CqScope::Process;
  if (shared) {
    validate(cfg);
    check_device_limits(cfg, dev);  // the shared CQ's depth among them
    shared_cq_ = verbs::CompletionQueue(dev, static_cast<int>(cq_depth_for(cfg)));
  }
  for (uint32_t t = 0; t < n; ++t) {
    // Each lane checks and sizes its own CQ for its own QPs: as one thread's point.
    lanes_.push_back(std::make_unique<TestResources>(dev, gid, cfg, role, slot, shared ? &shared_cq_ : nullptr));
    lanes_.back()->lane = t;
  }
  if (shared) {
    std::vector<uint32_t> qpns, owner;
    for (uint32_t t = 0; t < n; ++t)
      for (const verbs::QueuePair& qp : lanes_[t]->qps) {
        qpns.push_back(qp.qpn());
        owner.push_back(t);
      }
    router_ = std::make_unique<SharedCq>(shared_cq_.get(), qpns, owner, n, mailbox_depth(cfg));
    for (auto& l : lanes_) l->cq_router = router_.get();
  }
}

PointResources::PointResources(const TestConfig& cfg, LaneStandIn& stand_in)
    : stand_in_(&stand_in), stand_in_cfg_(std::make_unique<TestConfig>(cfg)) {}

PointResources::~PointResources() = default;

void PointResources::retarget(const TestConfig& next) {
  for (auto& l : lanes_) l->retarget(next);
}

std::unique_ptr<PointResources> make_resources(const ResourceSpec& spec, const TestConfig& cfg) {
  auto res = std::make_unique<PointResources>(spec.dev, spec.gid, cfg, spec.role, spec.slot, spec.memory_node);
  res->limit_reads(spec.peer_max_rd_atom);
  return res;
}

void PointResources::limit_reads(uint32_t peer_max_rd_atom) {
  for (auto& l : lanes_) l->limit_reads(peer_max_rd_atom);
}

void PointResources::close_window() {
  for (auto& l : lanes_) l->close_window();
}

void PointResources::fence_writes(std::chrono::milliseconds timeout) {
  if (stand_in_ || !fences_writes(cfg(), lanes_[0]->dev)) return;
  const std::vector<TestResources*> own = lanes();
  rdmasweep::fence_writes(std::vector<LoopResources*>(own.begin(), own.end()), timeout);
}

std::vector<Endpoint> PointResources::local_endpoints() const {
  std::vector<Endpoint> out;
  for (const auto& l : lanes_) out.push_back(l->local_endpoint());
  for (uint32_t t = 0; stand_in_ && t < threads(); ++t) out.push_back(stand_in_->endpoint(t));
  return out;
}

void PointResources::connect(const std::vector<Endpoint>& peer) {
  for (size_t t = 0; t < lanes_.size(); ++t) lanes_[t]->connect(peer.at(t));
}

void PointResources::set_remote(const std::vector<Endpoint>& peer) {
  for (size_t t = 0; t < lanes_.size(); ++t) lanes_[t]->set_remote(peer.at(t));
}

void ThreadBarrier::wait(const std::function<void()>& check) {
  const uint32_t round = round_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
    arrived_.store(0, std::memory_order_relaxed);
    round_.fetch_add(1, std::memory_order_release);
    return;
  }
  for (uint32_t spins = 0; round_.load(std::memory_order_acquire) == round; ++spins) {
    std::this_thread::yield();
    if ((spins & 1023) == 1023 && check) check();
  }
}

namespace {

// The calling thread pinned for a while, its own affinity given back after.
class PinCaller {
 public:
  explicit PinCaller(int cpu) {
    saved_ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
    pin_this_thread(cpu);
  }
  ~PinCaller() {
    if (saved_ok_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  PinCaller(const PinCaller&) = delete;
  PinCaller& operator=(const PinCaller&) = delete;

 private:
  cpu_set_t saved_{};
  bool saved_ok_ = false;
};

const char* const kOtherFailed = "stopped: another thread of this point failed";

// Rethrows the failure that started it, not the "another thread failed" that followed.
void rethrow_first(const std::vector<std::exception_ptr>& errors) {
  std::exception_ptr first_error;
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const RunAborted& a) {
      if (std::string(a.what()) == kOtherFailed) {
        if (!first_error) first_error = e;
        continue;
      }
      std::rethrow_exception(e);
    } catch (...) {
      std::rethrow_exception(e);
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

std::string nproc_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NPROC, &rl) != 0) return "unknown";
  return rl.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(rl.rlim_cur);
}

}  // namespace

void start_threads(std::vector<std::thread>& started, uint32_t first, uint32_t n, const std::string& what,
                   const std::string& fix, const std::function<void(uint32_t)>& body,
                   const std::function<void(const std::string&)>& stop, const ThreadStarter& start) {
  started.reserve(started.size() + (n - first));  // so that only a thread's start can throw
  for (uint32_t i = first; i < n; ++i) {
    try {
      std::function<void()> fn = [body, i] { body(i); };  // a copy: `body` may be a temporary
      started.push_back(start ? start(std::move(fn)) : std::thread(std::move(fn)));
    } catch (const std::exception& e) {
      const auto* sys = dynamic_cast<const std::system_error*>(&e);
      const std::string why = "cannot start thread " + std::to_string(i + 1) + " of " + std::to_string(n) + " for " +
                              what + ": " + (sys ? sys->code().message() : e.what()) +
                              " (the process limit RLIMIT_NPROC, `ulimit -u`, is " + nproc_limit() + "): " + fix;
      stop(why);
      for (std::thread& t : started) t.join();
      started.clear();
      throw ThreadStartError(why, i);
    }
  }
}

void run_threads(uint32_t n, const Placement* place, const RunControl& ctl,
                 const std::function<void(uint32_t, const RunControl&)>& body, const ThreadStarter& start) {
  const bool pin = place != nullptr && place->pins(n);
  if (n == 1) {
    std::unique_ptr<PinCaller> pinned;
    if (pin) pinned = std::make_unique<PinCaller>(place->cpu_of(0));
    body(0, ctl);
    return;
  }
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(n);
  // Every lane looks outside at its idle checks (the caller's on_idle: the control
  // channel), one at a time: a lane that finished early, or one stuck waiting, must
  // not leave the others deaf to the peer's DONE, its error or its silence.
  std::mutex outside;
  RunControl each = ctl, others = ctl;
  each.on_idle = [&] {
    if (failed.load(std::memory_order_relaxed)) throw RunAborted(kOtherFailed);
    std::unique_lock<std::mutex> turn(outside, std::try_to_lock);
    if (!turn || !ctl.on_idle) return;
    // Looked at again under the lock, and set before letting go of it: a lane that took
    // the peer's reason for failing the point must be the last to read the channel, or
    // the next would find it closed behind that reason and report the close instead.
    if (failed.load(std::memory_order_relaxed)) throw RunAborted(kOtherFailed);
    try {
      ctl.on_idle();
    } catch (...) {
      failed.store(true, std::memory_order_relaxed);
      throw;
    }
  };
  others.on_idle = [&] {
    if (failed.load(std::memory_order_relaxed)) throw RunAborted(kOtherFailed);
  };
  ThreadBarrier together(n);
  auto run = [&](uint32_t t) {
    try {
      if (pin && t > 0) pin_this_thread(place->cpu_of(t));
      together.wait(others.on_idle);  // a thread that failed to start never arrives
      body(t, each);
    } catch (...) {
      errors[t] = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> workers;
  {
    std::unique_ptr<PinCaller> pinned;
    try {
      if (pin) pinned = std::make_unique<PinCaller>(place->cpu_of(0));
    } catch (...) {
      errors[0] = std::current_exception();
      failed.store(true);
    }
    // Those started wait at the barrier, which gives up once `failed` is set.
    start_threads(workers, 1, n, "the point", "lower --threads or raise the limit", run,
                  [&failed](const std::string&) { failed.store(true); }, start);
    if (!errors[0]) run(0);
    for (std::thread& w : workers) w.join();
  }
  rethrow_first(errors);
}

namespace {

// One lane's timeline on the point's clock (seconds since the first lane's window
// opened): its boundary samples, then its window's end (its total, final from then on).
struct LaneSeries {
  const Timeline* tl;
  double shift;      // its window's start on the point's clock
  size_t bounds;     // samples before the end one
  size_t next = 0;   // first boundary sample not yet merged
  double end() const { return shift + tl->t.back(); }
  // The lane's own boundary index of sample i: sample i is taken at or after it.
  uint64_t slot(size_t i) const { return static_cast<uint64_t>((tl->t[i] + 1e-9) / tl->interval); }
};

// The merged sample at boundary k: the time every lane sampled it (the latest of
// their samples past it), and all lanes' counts then; false when some lane has no
// count known for it (it skipped the boundary, and its window had not ended).
bool merge_boundary(std::vector<LaneSeries>& ls, uint64_t k, double& at, uint64_t& sum) {
  at = -1;
  sum = 0;
  for (LaneSeries& l : ls) {
    while (l.next < l.bounds && l.slot(l.next) < k) ++l.next;
    if (l.next < l.bounds && l.slot(l.next) == k) {
      at = std::max(at, l.shift + l.tl->t[l.next]);
      sum += l.tl->messages[l.next];
    }
  }
  if (at < 0) return false;  // every lane slept through it
  for (LaneSeries& l : ls) {
    if (l.next < l.bounds && l.slot(l.next) == k) continue;
    if (l.end() > at) return false;
    sum += l.tl->messages.back();
  }
  return true;
}

}  // namespace

// The lanes' timelines merged by time, not by sample index. Each lane samples at its
// first clock read past each boundary of its own window (the lanes start together
// after one barrier); a merged sample at boundary k exists only where every lane's
// count is known there: its sample past k, or its total once its window has ended.
// It is taken at the latest of those samples' times. A boundary some lane slept
// through (it read no clock, so polled nothing, until past the next one) is left
// out, as one lane's own timeline leaves it out: one longer interval at its mean
// rate, never a count guessed between samples. Then the common window's end.
static Timeline combine_timelines(const std::vector<PointResult>& lanes, std::chrono::steady_clock::time_point began,
                                  double window, uint64_t total) {
  Timeline out;
  out.interval = lanes[0].timeline.interval;
  if (out.interval <= 0) return out;
  std::vector<LaneSeries> ls;
  uint64_t last = 0;
  for (const PointResult& l : lanes) {
    if (l.timeline.t.empty()) continue;  // measured nothing: adds nothing at any time
    const double shift = std::chrono::duration<double>(l.began - began).count();
    ls.push_back(LaneSeries{&l.timeline, shift, l.timeline.t.size() - 1});
    if (ls.back().bounds > 0) last = std::max(last, ls.back().slot(ls.back().bounds - 1));
  }
  for (uint64_t k = 1; k <= last; ++k) {
    double at = 0;
    uint64_t sum = 0;
    if (!merge_boundary(ls, k, at, sum)) continue;
    out.t.push_back(at);
    out.messages.push_back(sum);
  }
  if (out.t.empty() || window > out.t.back()) {
    out.t.push_back(window);
    out.messages.push_back(total);
  }
  return out;
}

// --rate: each thread kept its share of the rate on its own schedule; the point offered
// their sum, and its late posts and latencies are all of theirs.
static void combine_pacing(PointResult& out, const std::vector<PointResult>& lanes) {
  out.offered_per_second = 0;
  out.late_posts = out.late_posts_queue_full = 0;
  out.late_max_ns = out.late_sum_ns = 0;
  out.posted_hist.emplace();
  for (const PointResult& l : lanes) {
    out.offered_per_second += l.offered_per_second;
    out.late_posts += l.late_posts;
    out.late_posts_queue_full += l.late_posts_queue_full;
    out.late_sum_ns += l.late_sum_ns;
    out.late_max_ns = std::max(out.late_max_ns, l.late_max_ns);
    if (l.posted_hist) out.posted_hist->merge(*l.posted_hist);
  }
}

PointResult combine_lanes(std::vector<PointResult>& lanes) {
  PointResult out = lanes[0];
  if (out.paced) combine_pacing(out, lanes);
  out.per_qp.clear();
  out.qp_lat_min_ns.clear();
  out.qp_lat_max_ns.clear();
  out.qp_lat_mean_ns.clear();
  out.hist = Histogram{};
  out.messages = out.bytes = 0;
  out.cpu_seconds = 0;
  out.began = lanes[0].began;
  out.ended = lanes[0].ended;
  for (PointResult& l : lanes) {
    out.per_qp.insert(out.per_qp.end(), l.per_qp.begin(), l.per_qp.end());
    out.qp_lat_min_ns.insert(out.qp_lat_min_ns.end(), l.qp_lat_min_ns.begin(), l.qp_lat_min_ns.end());
    out.qp_lat_max_ns.insert(out.qp_lat_max_ns.end(), l.qp_lat_max_ns.begin(), l.qp_lat_max_ns.end());
    out.qp_lat_mean_ns.insert(out.qp_lat_mean_ns.end(), l.qp_lat_mean_ns.begin(), l.qp_lat_mean_ns.end());
    out.hist.merge(l.hist);
    if (l.latency) out.thread_hist.push_back(std::move(l.hist));
    out.messages += l.messages;
    out.bytes += l.bytes;
    out.cpu_seconds += l.cpu_seconds;
    out.began = std::min(out.began, l.began);
    out.ended = std::max(out.ended, l.ended);
    out.thread_messages.push_back(l.messages);
    out.thread_seconds.push_back(l.seconds);
    out.thread_cpu_seconds.push_back(l.cpu_seconds);
  }
  out.seconds = std::chrono::duration<double>(out.ended - out.began).count();
  out.timeline = combine_timelines(lanes, out.began, out.seconds, out.messages);
  return out;
}

PointResult measure_threads(PointResources& res, const RunControl& ctl, double interval, const Placement* place,
                            std::vector<uint64_t>& sent) {
  const uint32_t n = res.threads();
  std::vector<PointResult> parts(n);
  std::vector<std::vector<uint64_t>> sents(n);
  ThreadBarrier warmed(n);  // every thread's measured loop starts after every warm-up
  run_threads(n, place, ctl, [&](uint32_t t, const RunControl& c) {
    std::function<void()> after_warmup;
    if (n > 1) after_warmup = [&] { warmed.wait(c.on_idle); };
    if (res.stand_in()) parts[t] = res.stand_in()->measure(t, c, sents[t]);
    else parts[t] = measure_point(res.lane(t), c, interval, sents[t], after_warmup);
  });
  sent.clear();
  for (const auto& s : sents) sent.insert(sent.end(), s.begin(), s.end());
  if (n == 1) return std::move(parts[0]);
  return combine_lanes(parts);
}

LoopStats follow_threads(PointResources& res, const RunControl& ctl, const Placement* place,
                         const std::function<const std::vector<uint64_t>*()>& final_counts) {
  const Workload& w = res.cfg().work;
  const uint32_t n = res.threads(), nqp = w.qps;
  const bool receives = w.op == Op::Send && w.mode == Mode::Bw;
  std::vector<LoopStats> parts(n);
  run_threads(n, place, ctl, [&](uint32_t t, const RunControl& c) {
    bool finished = false;
    std::vector<uint64_t> expected(nqp, w.duration > 0 ? UINT64_MAX : w.iters + w.warmup);
    RunControl lc = c;
    lc.on_idle = [&, t] {
      if (c.on_idle) c.on_idle();
      const std::vector<uint64_t>* all = final_counts();
      if (all == nullptr) return;
      finished = true;
      if (all->size() == size_t{nqp} * n)
        expected.assign(all->begin() + static_cast<std::ptrdiff_t>(t) * nqp,
                        all->begin() + static_cast<std::ptrdiff_t>(t + 1) * nqp);
      else  // a sender that failed early: end on what arrived (its error is reported elsewhere)
        expected.assign(nqp, 0);
    };
    if (res.stand_in()) {
      parts[t] = res.stand_in()->follow(t, expected, lc, &finished);
      return;
    }
    TestResources& lane = res.lane(t);
    parts[t] = receives ? run_bw_receiver(lane, expected, lc, w.warmup, &finished)
                        : run_lat_responder(lane, &finished, lc, w.warmup);
  });
  LoopStats st;
  for (LoopStats& p : parts) {
    st.per_qp.insert(st.per_qp.end(), p.per_qp.begin(), p.per_qp.end());
    st.cpu_seconds += p.cpu_seconds;
  }
  return st;
}

}  // namespace rdmasweep
