// RDMASWEEP_STANDIN_NULL_REPORT=1: what a process's loop on null0 cost, by CPU time.
// A helper thread samples, every millisecond, the send WRs posted on null0 so far and
// the CPU time of the process's other threads (/proc/self/task/*/schedstat, in ns;
// a thread that ended counts with its last sample's);
// at exit it prints each busy stretch (WRs posted, with no 500 ms pause in them; 10000
// WRs at least) to stderr: WRs, wall and CPU seconds, ns a WR both ways. The wall clock on a shared
// host counts other processes' turns; the CPU time counts only the process's own, so
// it reads the same whatever else runs. Nothing of it is on the datapath: the helper
// reads each QP's own count. Each end is within one sample (1 ms) of the loop's.
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "null_objects.hpp"

namespace standin::null {

namespace {

struct Sample {
  uint64_t posted = 0;
  int64_t wall_ns = 0, cpu_ns = 0;
};

// Fewer WRs than this are a handshake or a probe, no loop: not reported.
constexpr uint64_t kLeast = 10000;

struct Stretch {
  Sample from, to;
};

class Reporter {
 public:
  ~Reporter() { finish(); }

  void start() {
    std::lock_guard<std::mutex> l(mu_);
    if (running_) return;
    running_ = true;
    helper_ = std::thread([this] { run(); });
  }
  void add(Qp* q) {
    std::lock_guard<std::mutex> l(mu_);
    qps_.push_back(q);
  }
  // A QP's WRs stay counted after it is reset or destroyed.
  void keep(Qp* q, bool gone) {
    std::lock_guard<std::mutex> l(mu_);
    done_ += __atomic_load_n(&q->posted, __ATOMIC_RELAXED);
    q->posted = 0;
    if (gone)
      for (size_t i = 0; i < qps_.size(); ++i)
        if (qps_[i] == q) {
          qps_[i] = qps_.back();
          qps_.pop_back();
          break;
        }
  }

  void finish() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!running_) return;
      running_ = false;
    }
    helper_.join();
    close_stretch();
    for (const Stretch& s : stretches_)
      if (s.to.posted - s.from.posted >= kLeast) print(s);
  }

 private:
  void run() {
    helper_tid_ = static_cast<pid_t>(syscall(SYS_gettid));
    Sample prev = sample();
    int idle = 0;
    for (bool last = false; !last;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      {
        std::lock_guard<std::mutex> l(mu_);
        last = !running_;  // at exit: one more sample, for a loop that ended since the last
      }
      const Sample now = sample();
      if (now.posted != prev.posted) {
        if (!open_) {
          open_ = true;
          current_.from = prev;  // the last sample before the stretch's first WR
        }
        current_.to = now;
        idle = 0;
      } else if (open_ && ++idle >= 500) {
        close_stretch();
      }
      prev = now;
    }
  }

  void close_stretch() {
    if (open_) stretches_.push_back(current_);
    open_ = false;
  }

  Sample sample() {
    Sample s;
    {
      std::lock_guard<std::mutex> l(mu_);
      s.posted = done_;
      for (const Qp* q : qps_) s.posted += __atomic_load_n(&q->posted, __ATOMIC_RELAXED);
    }
    s.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
    s.cpu_ns = process_cpu_ns();
    return s;
  }

  // The CPU time of every thread but the helper, in ns (schedstat's first field); a
  // thread that has ended keeps what it had at the last sample.
  int64_t process_cpu_ns() {
    DIR* d = opendir("/proc/self/task");
    if (d == nullptr) return 0;
    for (Seen& t : seen_) t.alive = false;
    while (const dirent* e = readdir(d)) {
      const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
      if (tid <= 0 || tid == helper_tid_) continue;
      char path[300], buf[128];
      std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
      const int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      const ssize_t n = read(fd, buf, sizeof buf - 1);
      close(fd);
      if (n <= 0) continue;
      buf[n] = '\0';
      Seen* t = nullptr;
      for (Seen& x : seen_)
        if (x.tid == tid) t = &x;
      if (t == nullptr) t = &seen_.emplace_back(Seen{tid, 0, true});
      t->ns = std::strtoll(buf, nullptr, 10);
      t->alive = true;
    }
    closedir(d);
    int64_t sum = ended_ns_;
    for (size_t i = 0; i < seen_.size();) {
      if (seen_[i].alive) {
        sum += seen_[i++].ns;
      } else {
        ended_ns_ += seen_[i].ns;
        sum += seen_[i].ns;
        seen_[i] = seen_.back();
        seen_.pop_back();
      }
    }
    return sum;
  }

  static void print(const Stretch& s) {
    const double wrs = static_cast<double>(s.to.posted - s.from.posted);
    const double wall = static_cast<double>(s.to.wall_ns - s.from.wall_ns) / 1e9;
    const double cpu = static_cast<double>(s.to.cpu_ns - s.from.cpu_ns) / 1e9;
    std::fprintf(stderr,
                 "verbs stand-in: null0 report (pid %d): %.0f send WRs in %.3f s wall, %.3f s CPU (%.0f%% of the "
                 "wall time): %.2f ns a WR by CPU time, %.2f ns by wall time; %.2f M WRs/s by CPU time\n",
                 static_cast<int>(getpid()), wrs, wall, cpu, wall > 0 ? 100 * cpu / wall : 0, cpu * 1e9 / wrs,
                 wall * 1e9 / wrs, wrs / cpu / 1e6);
  }

  std::mutex mu_;
  bool running_ = false;
  std::thread helper_;
  std::vector<Qp*> qps_;
  uint64_t done_ = 0;
  pid_t helper_tid_ = 0;
  struct Seen {
    pid_t tid;
    int64_t ns;
    bool alive;
  };
  std::vector<Seen> seen_;  // the threads the helper has seen, with their CPU time
  int64_t ended_ns_ = 0;    // of those that have ended
  bool open_ = false;
  Stretch current_;
  std::vector<Stretch> stretches_;
};

bool wanted() {
  static const bool yes = [] {
    const char* v = std::getenv("RDMASWEEP_STANDIN_NULL_REPORT");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return yes;
}

Reporter& reporter() {
  static Reporter r;
  return r;
}

}  // namespace

void report_qp_created(Qp* q) {
  if (!wanted()) return;
  reporter().start();
  reporter().add(q);
}

void report_qp_reset(Qp* q, bool destroyed) {
  if (wanted()) reporter().keep(q, destroyed);
}

}  // namespace standin::null
