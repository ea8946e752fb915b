// On a host without RDMA (CI's, a laptop) every command says so in one line and says
// how to get a device, with a non-zero exit. On a host with a device there is
// nothing to check here: tests/rdma/host_setup_test.cpp covers a host whose RDMA
// driver is loaded but has no device.
#include <gtest/gtest.h>

#include "tests/support/process.hpp"

namespace rdmasweep::test {

using namespace std::chrono_literals;

class NoDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (have_device()) GTEST_SKIP() << "this host has an RDMA device";
  }
};

TEST_F(NoDevice, DoctorSaysHowToGetOne) {
  Outcome d = run({kBin, "doctor"}, 30s);
  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("[FAIL] no RDMA device"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("fix: load your NIC's RDMA driver"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "), std::string::npos) << d.out;
}

TEST_F(NoDevice, EveryCommandStopsWithOneLine) {
  for (const char* cmd : {"devices", "server", "client"}) {
    SCOPED_TRACE(cmd);
    std::vector<std::string> argv{kBin, cmd};
    if (std::string(cmd) == "client") argv.insert(argv.end(), {"127.0.0.1", "--out", "/tmp/rdmasweep-nodev.json"});
    if (std::string(cmd) == "server") argv.insert(argv.end(), {"--port", "0", "--once"});
    Outcome o = run(argv, 30s);
    EXPECT_EQ(o.code, 1) << o.err;
    EXPECT_NE(o.err.find("no RDMA device"), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
}

}  // namespace rdmasweep::test
