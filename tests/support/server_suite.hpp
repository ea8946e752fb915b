// A test suite whose tests share one `rdmasweep server` (on 127.0.0.1, a port the
// kernel picks), each test with a temporary directory of its own.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.hpp"

namespace rdmasweep::test {

class ServerSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (have_device()) port_ = start_server(&server_, RDMASWEEP_BIN, std::chrono::seconds(120));
  }
  static void TearDownTestSuite() {
    if (server_) {
      server_->signal(SIGTERM);
      server_->wait(std::chrono::seconds(10));
    }
    server_.reset();
  }
  void SetUp() override {
    REQUIRE_DEVICE();
    ASSERT_FALSE(port_.empty()) << "server did not start: " << (server_ ? server_->err() : "");
    dir_ = make_temp_dir("rdmasweep-test");
  }
  // `rdmasweep client` against the suite's server, with `args` after the common ones.
  std::vector<std::string> client_argv(const std::vector<std::string>& args) const {
    std::vector<std::string> a{RDMASWEEP_BIN, "client", "127.0.0.1", "--port", port_, "--no-progress"};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }
  // Runs that client.
  Outcome client(std::vector<std::string> args,
                 std::chrono::milliseconds timeout = std::chrono::seconds(300)) const {
    return run(client_argv(args), timeout);
  }

  static inline std::unique_ptr<Process> server_;
  static inline std::string port_;
  std::string dir_;
};

}  // namespace rdmasweep::test
