// A client that goes silent mid-point (SIGSTOP: its control connection stays open, its
// QPs go quiet) must not hold the server: the server gives it up after the client's own
// --timeout, tears the point down on every thread, says why in one log line, and serves
// the next client within --timeout + 5 s. One shape per way a server side waits:
// receivers on two threads with SRQ, UD receivers on two threads, a latency responder,
// a passive WRITE target.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <thread>

#include "tests/support/process.hpp"

namespace rdmasweep::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kClientTimeout = 3;  // the silent client's --timeout, seconds

class Silence : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_DEVICE();
    dir_ = make_temp_dir("rdmasweep-silence");
    // --verbose: the server logs each point's QPs once connected, i.e. mid-point.
    port_ = start_server(&server_, kBin, 120s, {"--verbose"});
    ASSERT_FALSE(port_.empty()) << server_->err();
  }
  std::vector<std::string> client_argv(std::vector<std::string> args, const std::string& out) const {
    std::vector<std::string> a{kBin,         "client", "127.0.0.1", "--port", port_, "--no-progress",
                               "--timeout", std::to_string(kClientTimeout), "--out", out};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }
  // Starts a long point, stops its client once the server has its QPs connected, and
  // returns how long after the stop the next client was let in and served.
  double serve_after_stop(const std::vector<std::string>& shape) {
    Process silent(client_argv(shape, dir_ + "/silent.json"));
    EXPECT_NE(server_->wait_for_stderr("QPs connected", 120s), "") << server_->err() << silent.err();
    silent.signal(SIGSTOP);
    const auto stopped = Clock::now();
    for (int attempt = 0; Clock::now() - stopped < 60s; ++attempt) {
      const auto began = Clock::now();
      Outcome next = run(client_argv({"--op", "write", "-s", "64", "-n", "20"}, dir_ + "/next.json"), 60s);
      if (next.code == 0) return std::chrono::duration<double>(began - stopped).count();
      EXPECT_NE(next.err.find("the server is busy"), std::string::npos) << "attempt " << attempt << ": " << next.err;
      std::this_thread::sleep_for(200ms);  // polling for the server to be free, not waiting out a delay
    }
    ADD_FAILURE() << "the server was still held 60 s after its client stopped:\n" << server_->err();
    return 1e9;
  }
  void expect_freed_in_time(const std::vector<std::string>& shape) {
    const double after = serve_after_stop(shape);
    EXPECT_LT(after, kClientTimeout + 5) << "the next client waited " << after << " s\n" << server_->err();
    const std::string why = server_->wait_for_stderr("not even its heartbeat", 10s);
    EXPECT_NE(why.find("dropped"), std::string::npos) << server_->err();
  }

  std::unique_ptr<Process> server_;
  std::string port_, dir_;
};

TEST_F(Silence, SendBandwidthOnTwoThreadsWithSrq) {
  expect_freed_in_time({"--op", "send", "--mode", "bw", "--threads", "2", "-q", "2", "--srq", "-s", "64", "-D", "60"});
}

TEST_F(Silence, UdOnTwoThreads) {
  expect_freed_in_time({"--transport", "ud", "--op", "send", "--mode", "bw", "--threads", "2", "-q", "2", "-s", "64", "-D", "60"});
}

TEST_F(Silence, LatencyResponder) {
  expect_freed_in_time({"--op", "write", "--mode", "lat", "-s", "64", "-D", "60"});
}

TEST_F(Silence, PassiveWriteTarget) {
  expect_freed_in_time({"--op", "write", "--mode", "bw", "-s", "64", "-D", "60"});
}

}  // namespace
}  // namespace rdmasweep::test
