// A child process for the end-to-end tests: the real rdmasweep binary, output in
// temporary files, every wait bounded.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace rdmasweep::test {

#ifdef RDMASWEEP_BIN
// The rdmasweep binary under test: each test target defines RDMASWEEP_BIN.
inline const std::string kBin = RDMASWEEP_BIN;
#endif

class Process {
 public:
  explicit Process(const std::vector<std::string>& argv);
  ~Process();  // kills the child if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Waits for the child; kills it and returns -1 after `timeout`. Otherwise the exit
  // code, or 128 + signal.
  int wait(std::chrono::milliseconds timeout);
  void signal(int sig);
  // SIGSTOP, and returns once the kernel reports the child stopped (waitpid WUNTRACED):
  // a stop only lands when every thread reaches a point that takes signals, and a
  // SIGCONT sent before that cancels it. False if the child ended or `timeout` passed.
  bool stop(std::chrono::milliseconds timeout);
  void resume() { signal(SIGCONT); }
  bool running();
  std::string out() const;
  std::string err() const;
  // Polls stderr until a line contains `needle`; returns that line or "" on timeout.
  std::string wait_for_stderr(const std::string& needle, std::chrono::milliseconds timeout);
  // Polls the child's --progress-file `path` until a line matches `pattern` (a regex);
  // returns that line, or "" once the child has ended or `timeout` passed. For a test
  // that acts at a moment the run itself reports (a point's traffic), not a guessed one.
  std::string wait_for_progress(const std::string& path, const std::string& pattern,
                                std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string out_path_, err_path_;
};

struct Outcome {
  int code;
  std::string out, err;
};
Outcome run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);
// Both streams of `o`, for a failed assertion's message.
inline std::string both(const Outcome& o) { return "stdout:\n" + o.out + "\nstderr:\n" + o.err; }

std::string read_file(const std::string& path);

// The full path of executable `name` on PATH, or "" when there is none.
std::string find_in_path(const std::string& name);

// A results file as JSON; null when it is missing or not valid JSON.
nlohmann::json load_json(const std::string& path);

// A new directory under /tmp whose name starts with `prefix`.
std::string make_temp_dir(const std::string& prefix);

// Starts `bin server` on 127.0.0.1 on a port the kernel picks (plus `extra` options)
// into *server and returns that port, or "" when it did not say it was listening
// within `wait` (its stderr says why).
std::string start_server(std::unique_ptr<Process>* server, const std::string& bin,
                         std::chrono::milliseconds wait, const std::vector<std::string>& extra = {});

// True when this host has an RDMA device the tests can use.
bool have_device();
// True when some device's port 1 has counters (rxe and mlx5 do): results then carry them.
bool ports_have_counters();

// In a test or SetUp: skips without a device, or fails where RDMASWEEP_REQUIRE_DEVICE
// is set (tools/test sets it: no silent skips in CI).
#define REQUIRE_DEVICE()                                                                           \
  do {                                                                                             \
    if (!::rdmasweep::test::have_device()) {                                                       \
      if (std::getenv("RDMASWEEP_REQUIRE_DEVICE")) FAIL() << "no RDMA device, but one is required"; \
      GTEST_SKIP() << "no RDMA device: run these inside tools/rxe-lab";                           \
    }                                                                                              \
  } while (0)

// Connects to 127.0.0.1:port, sends `bytes`, then waits up to `wait` for the peer to
// close the connection. True when it did (the server dropped us).
bool send_raw_and_wait_close(const std::string& port, const std::string& bytes, std::chrono::milliseconds wait);

// A stand-in rdmasweep server on 127.0.0.1: answers every connection's first frame
// with `reply` (raw bytes), then waits for the peer to hang up. For peers that are
// not what they should be (another protocol version, a different device).
class FakeServer {
 public:
  explicit FakeServer(std::string reply);
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;
  std::string port() const { return std::to_string(port_); }

 private:
  void serve();
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rdmasweep::test
