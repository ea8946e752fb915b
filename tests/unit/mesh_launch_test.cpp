// `rdmasweep mesh --hosts`: the host list, the command mpirun is given, and a host
// that cannot be reached said in one line before anything starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "bench/cli.hpp"
#include "bench/mesh/launch.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep::mesh_detail {
namespace {

using namespace std::chrono_literals;

TEST(MeshHosts, ListWithRanksPerHost) {
  std::vector<HostSlots> h = parse_hosts("a,b:2,node-3.example");
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].host, "a");
  EXPECT_EQ(h[0].ranks, 1);
  EXPECT_EQ(h[1].host, "b");
  EXPECT_EQ(h[1].ranks, 2);
  EXPECT_EQ(h[2].host, "node-3.example");
  EXPECT_EQ(parse_hosts("a:2").size(), 1u);  // two ranks on one host is a mesh
}

TEST(MeshHosts, BadListsAreRefusedByName) {
  for (const char* bad : {"", "a", "a,,b", "a,b:0", "a,b:x", "a,b:", "a,a", "-x,b", "a,b:5000"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_hosts(bad), cli::UsageError);
  }
  try {
    parse_hosts("a,a:2");
    FAIL();
  } catch (const cli::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a is named twice"), std::string::npos) << e.what();
  }
}

TEST(MeshHosts, TheRanksGetTheCommandLineWithoutHosts) {
  const char* argv[] = {"mesh", "--hosts", "a,b", "--pattern", "incast", "--hosts=c,d", "-n", "5"};
  std::vector<std::string> rest = without_hosts(8, const_cast<char**>(argv));
  EXPECT_EQ(rest, (std::vector<std::string>{"--pattern", "incast", "-n", "5"}));
  std::vector<std::string> cmd = mpirun_argv(parse_hosts("a,b:2"), "/opt/rdmasweep", rest);
  EXPECT_EQ(cmd, (std::vector<std::string>{"mpirun", "--host", "a:1,b:2", "-np", "3", "--map-by", "node",
                                           "/opt/rdmasweep", "mesh", "--pattern", "incast", "-n", "5"}));
}

TEST(MeshHosts, UnderALauncherAlready) {
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("PMIX_RANK");
  ::unsetenv("PMI_RANK");
  EXPECT_FALSE(under_mpi_launcher());
  ::setenv("PMIX_RANK", "0", 1);
  EXPECT_TRUE(under_mpi_launcher());
  ::unsetenv("PMIX_RANK");
}

bool have_ssh() { return std::system("command -v ssh >/dev/null 2>&1") == 0; }

// Names under .invalid never resolve (RFC 6761): ssh fails at once, here and on CI.
TEST(MeshHosts, AHostThatCannotBeReachedIsOneLineWithSshsReason) {
  if (!have_ssh()) GTEST_SKIP() << "no ssh client";
  std::vector<std::string> lines = unreachable_hosts(parse_hosts("nowhere-a.invalid,nowhere-b.invalid:2"), 5, 60);
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& l : lines) {
    EXPECT_EQ(l.find('\n'), std::string::npos) << l;
    EXPECT_NE(l.find("over ssh: ssh: Could not resolve hostname"), std::string::npos) << l;
  }
  EXPECT_NE(lines[0].find("cannot reach nowhere-a.invalid over ssh"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("cannot reach nowhere-b.invalid over ssh"), std::string::npos) << lines[1];
}

TEST(MeshHosts, TheCommandSaysSoAndStartsNothing) {
  if (!have_ssh()) GTEST_SKIP() << "no ssh client";
  test::Outcome o = test::run({RDMASWEEP_BIN, "mesh", "--hosts", "nowhere-c.invalid,nowhere-d.invalid", "-n", "5"}, 60s);
  if (o.err.find("built without MPI") != std::string::npos) GTEST_SKIP() << "rdmasweep built without MPI";
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 2) << o.err;
  EXPECT_NE(o.err.find("rdmasweep mesh: cannot reach nowhere-c.invalid over ssh"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("ORTE"), std::string::npos) << "mpirun itself ran: " << o.err;
  test::Outcome bad = test::run({RDMASWEEP_BIN, "mesh", "--hosts", "a,,b"}, 30s);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--hosts: '' is not a host name"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace rdmasweep::mesh_detail
