// What a badly set-up host looks like to doctor and the client: a port that is not
// ACTIVE, a port with no RoCE v2 GID carrying an IPv4 address, a locked-memory limit
// too low for the planned buffers, no huge pages for --hugepages (and a pool that is used). Each test makes that host for real (a second
// Soft-RoCE device on a dummy netdev, a non-root user under a 64 KiB memlock limit),
// so they change the machine: they run as root inside tools/rxe-lab, or where
// RDMASWEEP_ALLOW_HOST_CHANGES=1 says so, one at a time (RUN_SERIAL).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/process.hpp"

namespace rdmasweep::test {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

static size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

class HostSetup : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_DEVICE();
    if (geteuid() != 0 || !(std::getenv("RXE_LAB") || std::getenv("RDMASWEEP_ALLOW_HOST_CHANGES")))
      GTEST_SKIP() << "adds network and RDMA devices: runs as root inside tools/rxe-lab, or with "
                      "RDMASWEEP_ALLOW_HOST_CHANGES=1";
  }
  void TearDown() override {
    for (const std::string& d : rdma_devs_) sh("rdma link delete " + d);
    for (const std::string& n : netdevs_) sh("ip link delete " + n);
  }
  static bool sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

  // A Soft-RoCE device `name` on a new dummy netdev; `setup` runs on the netdev first.
  void add_rxe(const std::string& name, const std::string& setup) {
    std::string nd = name + "0";
    ASSERT_TRUE(sh("ip link add " + nd + " type dummy")) << "cannot add dummy netdev " << nd;
    netdevs_.push_back(nd);
    if (!setup.empty()) {
      ASSERT_TRUE(sh(setup)) << setup;
    }
    ASSERT_TRUE(sh("rdma link add " + name + " type rxe netdev " + nd)) << "cannot add Soft-RoCE device " << name;
    rdma_devs_.push_back(name);
    // The port's state settles asynchronously after the link is added.
    std::string state = "/sys/class/infiniband/" + name + "/ports/1/state";
    for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
      if (fs::exists(state)) break;
      std::this_thread::sleep_for(50ms);
    }
    ASSERT_TRUE(fs::exists(state)) << name << " did not appear";
  }

  std::vector<std::string> netdevs_, rdma_devs_;
};

TEST_F(HostSetup, PortNotActive) {
  add_rxe("rswdown", "");  // the dummy netdev stays down, and so does the port
  Outcome d = run({kBin, "doctor", "-d", "rswdown"}, 60s);
  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("[FAIL] rswdown port 1 is DOWN"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("fix: bring the link up"), std::string::npos) << d.out;

  // The client stops before it makes anything or talks to a server.
  Outcome c = run({kBin, "client", "127.0.0.1", "--port", "1", "-d", "rswdown", "--no-progress", "--out", "/tmp/rsw-down.json"},
                  60s);
  EXPECT_EQ(c.code, 1) << c.err;
  EXPECT_NE(c.err.find("port 1 of rswdown is DOWN, not ACTIVE"), std::string::npos) << c.err;
  EXPECT_EQ(lines(c.err), 1u) << c.err;
}

TEST_F(HostSetup, NoRoceV2GidWithAnIpv4Address) {
  // Up, so the port is ACTIVE, but with no IPv4 address: at most IPv6 link-local GIDs.
  add_rxe("rswnoip", "ip link set rswnoip0 up");
  for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
    if (read_file("/sys/class/infiniband/rswnoip/ports/1/state").find("ACTIVE") != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  Outcome d = run({kBin, "doctor", "-d", "rswnoip"}, 60s);
  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("[ ok ] rswnoip port 1 is ACTIVE"), std::string::npos) << d.out;
  // Either an IPv6-only RoCE v2 GID, or none at all; each names the fix.
  bool named = d.out.find("is not a RoCE v2 GID with an IPv4 address") != std::string::npos ||
               d.out.find("has no GID: give its network interface an IP address") != std::string::npos;
  EXPECT_TRUE(named) << d.out;
  EXPECT_NE(d.out.find("fix: give the RDMA netdev an IPv4 address"), std::string::npos) << d.out;
}

// The RDMA driver is loaded but there is no device: the lab's rxe0 is deleted for
// the length of the test (in the lab only: a real host's devices are not ours).
TEST_F(HostSetup, DriverLoadedButNoDevice) {
  if (!std::getenv("RXE_LAB")) GTEST_SKIP() << "deletes the rxe lab's rxe0";
  std::string netdev = read_file("/sys/class/infiniband/rxe0/parent");
  netdev.erase(netdev.find_last_not_of(" \n") + 1);
  ASSERT_FALSE(netdev.empty()) << "rxe0 has no parent netdev";
  ASSERT_TRUE(sh("rdma link delete rxe0"));
  Outcome d = run({kBin, "doctor"}, 60s);
  Outcome c = run({kBin, "client", "127.0.0.1", "--out", "/tmp/rsw-nodev.json"}, 60s);
  // Put rxe0 back as the lab made it, and wait for its IPv4 GID, before judging.
  ASSERT_TRUE(sh("rdma link add rxe0 type rxe netdev " + netdev)) << "could not restore rxe0";
  std::string gids = "/sys/class/infiniband/rxe0/ports/1/gids/";
  bool ready = false;
  for (auto end = std::chrono::steady_clock::now() + 30s; !ready && std::chrono::steady_clock::now() < end;) {
    ready = read_file("/sys/class/infiniband/rxe0/ports/1/state").find("ACTIVE") != std::string::npos &&
            read_file(gids + (std::getenv("RXE_LAB_GID") ? std::getenv("RXE_LAB_GID") : "1")).find("ffff:") != std::string::npos;
    if (!ready) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(ready) << "rxe0 did not come back ACTIVE with its IPv4 GID";

  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("[FAIL] no RDMA device"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("fix: load your NIC's RDMA driver (mlx5_ib, ...) or Soft-RoCE: modprobe rdma_rxe && rdma link add "
                       "rxe0 type rxe netdev "),
            std::string::npos)
      << d.out;
  EXPECT_EQ(c.code, 1) << c.err;
  EXPECT_NE(c.err.find("no RDMA device"), std::string::npos) << c.err;
  EXPECT_EQ(lines(c.err), 1u) << c.err;
}

// A user without CAP_IPC_LOCK under a 64 KiB locked-memory limit (a common default).
class LockedMemory : public HostSetup {
 protected:
  void SetUp() override {
    HostSetup::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!sh("command -v setpriv && command -v prlimit")) GTEST_SKIP() << "needs setpriv and prlimit (util-linux)";
    // A copy the unprivileged user can run, wherever the build tree is.
    char tmpl[] = "/tmp/rdmasweep-memlock-XXXXXX";
    dir_ = mkdtemp(tmpl);
    chmod(dir_.c_str(), 01777);  // the user writes results here
    bin_ = dir_ + "/rdmasweep";
    fs::copy_file(kBin, bin_);
    chmod(bin_.c_str(), 0755);
  }
  void TearDown() override {
    HostSetup::TearDown();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // `args` run as user nobody with a locked-memory limit of `memlock` bytes.
  std::vector<std::string> as_nobody(std::vector<std::string> args, uint64_t memlock = 65536) {
    std::string lim = "--memlock=" + std::to_string(memlock) + ":" + std::to_string(memlock);
    std::vector<std::string> argv{"/usr/bin/prlimit", lim, "/usr/bin/setpriv", "--reuid=65534",
                                  "--regid=65534", "--clear-groups", "--inh-caps=-all", bin_};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  std::string dir_, bin_;
};

TEST_F(LockedMemory, DoctorNamesTheLimitAndTheFix) {
  // 2 x 1 MiB of buffers for a 1 MiB bandwidth test.
  Outcome d = run(as_nobody({"doctor", "-s", "1m"}), 60s);
  EXPECT_EQ(d.code, 1) << d.out << d.err;
  EXPECT_NE(d.out.find("[FAIL] locked-memory limit 64 KiB is below the 2.0 MiB the planned buffers pin"), std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("fix: ulimit -l unlimited"), std::string::npos) << d.out;

  // The same plan under a 16 MiB limit: room for the buffers and the queues.
  Outcome ok = run(as_nobody({"doctor", "-s", "1m"}, 16u << 20), 60s);
  EXPECT_NE(ok.out.find("[ ok ] locked-memory limit 16.0 MiB holds the planned 2.0 MiB"), std::string::npos)
      << ok.out << ok.err;
}

TEST_F(LockedMemory, ClientSaysTheLimitIsTooLow) {
  Process server({kBin, "server", "--port", "0", "--bind", "127.0.0.1", "--timeout", "2"});
  std::string line = server.wait_for_stderr("listening on", 60s);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(":([0-9]+),"))) << server.err();
  Outcome c = run(as_nobody({"client", "127.0.0.1", "--port", m[1], "--no-progress", "--op", "write", "-s", "1m", "-n", "5",
                             "--out", dir_ + "/r.json"}),
                  120s);
  // The failed point is in the table on stdout and in the results file.
  EXPECT_EQ(c.code, 1) << c.out << c.err;
  EXPECT_NE(c.out.find("ibv_reg_mr"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("locked-memory limit is probably too low"), std::string::npos) << c.out;
  EXPECT_NE(read_file(dir_ + "/r.json").find("locked-memory limit is probably too low"), std::string::npos);
}

// The client sends SETUP before it creates its side (both sides create at once): when
// its side then fails (here its buffers, over its locked-memory limit, which the root
// server does not have), it abandons the point, the server frees its side, and the
// sweep goes on with the next point on the same connection.
TEST_F(LockedMemory, PointTheClientCannotCreateIsAbandonedAndTheSweepGoesOn) {
  Process server({kBin, "server", "--port", "0", "--bind", "127.0.0.1"});
  std::string line = server.wait_for_stderr("listening on", 60s);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(":([0-9]+),"))) << server.err();
  // Latency gives each QP its own 2 x 4 KiB: 32 QPs pin 256 KiB, one QP 8 KiB.
  Outcome c = run(as_nobody({"client", "127.0.0.1", "--port", m[1], "--no-progress", "--op", "write", "--mode", "lat",
                             "-q", "32,1", "-s", "4k", "-n", "20", "--out", dir_ + "/r.json"}),
                  120s);
  EXPECT_EQ(c.code, 1) << c.out << c.err;
  nlohmann::json r = load_json(dir_ + "/r.json");
  ASSERT_EQ(r["benchmarks"].size(), 2u) << r.dump();
  for (const nlohmann::json& b : r["benchmarks"]) {
    const std::string name = b["name"];
    SCOPED_TRACE(name);
    if (name.find("qps:32/") != std::string::npos) {
      EXPECT_NE(b.value("error_message", "").find("ibv_reg_mr"), std::string::npos) << b.dump();
    } else {
      EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
      EXPECT_EQ(b.value("messages", 0.0), 20.0) << b.dump();
    }
  }
  // The server was told and went on serving the same connection.
  EXPECT_NE(server.wait_for_stderr("could not set up", 10s).find("write/lat/qps:32/"), std::string::npos) << server.err();
  const std::string log = server.err();
  EXPECT_EQ(log.find(") connected"), log.rfind(") connected")) << "the client had to connect again: " << log;
}

// --hugepages: with none reserved the client says so in one line before any QP; with a
// pool, a point's buffers come from it on both sides (HugePages_Free drops while the
// point runs) and the point is named /huge.
class HugePages : public HostSetup {
 protected:
  void SetUp() override {
    HostSetup::SetUp();
    if (IsSkipped()) return;
    saved_ = read_file("/proc/sys/vm/nr_hugepages");
    saved_.erase(saved_.find_last_not_of(" \n") + 1);
  }
  void TearDown() override {
    if (!saved_.empty()) set_pool(saved_);
    HostSetup::TearDown();
  }
  static bool set_pool(const std::string& n) { return sh("sysctl -w vm.nr_hugepages=" + n); }
  static uint64_t meminfo(const std::string& key) {
    std::istringstream in(read_file("/proc/meminfo"));
    for (std::string k; in >> k;) {
      if (k == key + ":") {
        uint64_t v = 0;
        in >> v;
        return v;
      }
      in.ignore(1 << 20, '\n');
    }
    return 0;
  }
  std::string saved_;
};

TEST_F(HugePages, NoneReservedIsOneLineAndAPoolIsUsedOnBothSides) {
  ASSERT_TRUE(set_pool("0"));
  Outcome none = run({kBin, "client", "127.0.0.1", "--port", "9", "--hugepages", "--op", "write"}, 60s);
  EXPECT_EQ(none.code, 1) << none.err;
  EXPECT_NE(none.err.find("--hugepages: no huge pages are reserved on this host"), std::string::npos) << none.err;
  EXPECT_EQ(lines(none.err), 1u) << none.err;

  ASSERT_TRUE(set_pool("16"));
  const uint64_t total = meminfo("HugePages_Total");
  if (total < 4) GTEST_SKIP() << "the kernel reserved only " << total << " huge pages";
  std::unique_ptr<Process> server;
  std::string port = start_server(&server, kBin, 60s);
  ASSERT_FALSE(port.empty()) << (server ? server->err() : "");
  std::string dir = make_temp_dir("rdmasweep-huge");
  Process c({kBin, "client", "127.0.0.1", "--port", port, "--no-progress", "--hugepages", "--op", "write", "-s", "1m",
             "-D", "3", "--out", dir + "/h.json"});
  // 2 MiB of buffers a side: at least one page each, both taken while the point runs.
  uint64_t least = total;
  for (auto end = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < end && c.running();) {
    least = std::min(least, meminfo("HugePages_Free"));
    if (total - least >= 2) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(c.wait(120s), 0) << c.err();
  EXPECT_GE(total - least, 2u) << "the buffers did not come from the huge page pool";
  nlohmann::json r = load_json(dir + "/h.json");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["benchmarks"][0]["name"], "write/bw/qps:1/size:1048576/cq:4/huge");
  // The server frees its side once the client has said BYE.
  for (auto end = std::chrono::steady_clock::now() + 10s;
       meminfo("HugePages_Free") != total && std::chrono::steady_clock::now() < end;)
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(meminfo("HugePages_Free"), total) << "pages still held after the point";
  fs::remove_all(dir);
}

}  // namespace rdmasweep::test
