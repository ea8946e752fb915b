// --validate on a real device: every byte of every message checked where it lands,
// with exact counts, and a byte changed on its way (RDMASWEEP_TEST_CORRUPT_MESSAGE,
// read by the sender) fails its point naming QP, message and offset.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.hpp"
#include "tests/support/server_suite.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

class Validate : public ServerSuite {
 protected:
  // Runs a sweep with --validate and checks each point: passed, named /validate,
  // each QP (qps per thread) moved exactly `iters` messages.
  void expect_exact(std::vector<std::string> args, size_t points, uint64_t qps, uint64_t iters, uint64_t threads = 1) {
    const std::string out = dir_ + "/v.json";
    args.insert(args.end(), {"--validate", "-q", std::to_string(qps), "-n", std::to_string(iters), "--warmup", "10",
                             "--out", out});
    Outcome o = client(args);
    ASSERT_EQ(o.code, 0) << both(o);
    json r = load_json(out);
    ASSERT_EQ(r["benchmarks"].size(), points) << r.dump();
    for (const json& b : r["benchmarks"]) {
      SCOPED_TRACE(b.dump());
      ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
      const std::string name = b["name"];
      EXPECT_NE(name.find("/validate"), std::string::npos);
      std::smatch m;
      ASSERT_TRUE(std::regex_search(name, m, std::regex("size:([0-9]+)")));
      EXPECT_EQ(b["messages"].get<double>(), static_cast<double>(threads * qps * iters));
      EXPECT_EQ(b["bytes"].get<double>(), static_cast<double>(threads * qps * iters) * std::stod(m[1]));
      EXPECT_EQ(b["qp_messages_min"].get<double>(), static_cast<double>(iters));
      EXPECT_EQ(b["qp_messages_max"].get<double>(), static_cast<double>(iters));
    }
  }
};

// SEND bandwidth and latency (with and without a shared receive queue), two sizes on
// the same QPs; WRITE latency; READ bandwidth and latency; SEND on two threads.
TEST_F(Validate, SendWriteReadPassWithExactCounts) {
  expect_exact({"--op", "send", "--mode", "bw,lat", "--srq", "0,1", "-s", "64,4096"}, 8, 2, 200);
  expect_exact({"--op", "write", "--mode", "lat", "-s", "64,4096"}, 2, 2, 100);
  expect_exact({"--op", "read", "--mode", "bw,lat", "-s", "64,4096"}, 4, 2, 100);
  expect_exact({"--op", "send", "--mode", "bw", "-s", "1000", "--threads", "2"}, 1, 2, 100, 2);
}

// One byte of message 5 on QP 0 changed after the sender wrote its pattern: the
// receiving side finds it, the point fails in one line naming QP, message and offset,
// and the client exits non-zero.
TEST_F(Validate, ChangedByteFailsThePointNamingIt) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--op", "send", "--mode", "bw"}, "--validate: SEND received on QP 0 message 5 byte 32 of 64: expected 0x"},
      {{"--op", "send", "--mode", "lat"}, "--validate: SEND received on QP 0 message 5 byte 32 of 64: expected 0x"},
      {{"--op", "write", "--mode", "lat"}, "--validate: WRITE landed on QP 0 message 5 byte 31 of 63: expected 0x"},
  };
  setenv("RDMASWEEP_TEST_CORRUPT_MESSAGE", "5", 1);  // the client's; the server was started before
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--validate", "-q", "1", "-s", "64", "-n", "20", "--warmup", "2", "--timeout", "5",
                             "--out", dir_ + "/bad.json"});
    Outcome o = client(args, 120s);
    SCOPED_TRACE(both(o));
    EXPECT_NE(o.code, 0);
    json r = load_json(dir_ + "/bad.json");
    ASSERT_TRUE(r.is_object());
    const json& b = r["benchmarks"][0];
    EXPECT_TRUE(b.value("error_occurred", false)) << b.dump();
    const std::string msg = b.value("error_message", "");
    EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  unsetenv("RDMASWEEP_TEST_CORRUPT_MESSAGE");
}

// WRITE bandwidth has no completion per message on the target: refused in one line
// before any QP, saying what to use.
TEST_F(Validate, WriteBandwidthIsRefusedInOneLine) {
  Outcome o = client({"--op", "write", "--mode", "bw", "--validate", "-n", "10", "--out", dir_ + "/w.json"}, 60s);
  EXPECT_EQ(o.code, 2) << both(o);
  EXPECT_NE(o.err.find("--mode lat"), std::string::npos) << both(o);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << both(o);
}

}  // namespace rdmasweep::test
