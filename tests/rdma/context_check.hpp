// The keys every results file's context shares, whichever command wrote it, and what
// each means, checked against this host (hostname, kernel, the device's sysfs entry):
// called on the client's, the mesh's, the multicast sender's and the hunt's files,
// each run on the lab's device. core/results/context.cpp builds them; the list here is
// the test's own, so a key dropped or renamed there fails here.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace rdmasweep::test {

inline std::string sysfs_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

inline bool same_gid(const std::string& a, const std::string& b) {
  unsigned char x[16], y[16];
  return inet_pton(AF_INET6, a.c_str(), x) == 1 && inet_pton(AF_INET6, b.c_str(), y) == 1 && std::equal(x, x + 16, y);
}

inline void expect_common_context(const nlohmann::json& c, const std::string& command) {
  SCOPED_TRACE(command + "'s context: " + c.dump());
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c.value("schema_version", 0), 1);
  EXPECT_EQ(c.value("tool", ""), "rdmasweep");
  EXPECT_EQ(c.value("command", ""), command);
  EXPECT_EQ(c.value("tool_version", ""), RDMASWEEP_VERSION);
  EXPECT_EQ(c.value("library_build_type", ""), RDMASWEEP_BUILD_TYPE);
  EXPECT_EQ(c.value("executable", ""), "rdmasweep");
  EXPECT_FALSE(c.value("git_revision", "").empty());
  EXPECT_FALSE(c.value("date", "").empty());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(c.value("host_name", ""), host);
  utsname u{};
  uname(&u);
  EXPECT_NE(c.value("kernel", "").find(u.release), std::string::npos);
  // This side's device, port and GID, as sysfs has them.
  const std::string dev = c.value("device", ""), port = std::to_string(c.value("port", 0));
  const std::string sys = "/sys/class/infiniband/" + dev + "/ports/" + port;
  ASSERT_FALSE(dev.empty());
  EXPECT_FALSE(sysfs_line(sys + "/state").empty()) << sys;
  const std::string idx = std::to_string(c.value("gid_index", -1));
  EXPECT_TRUE(same_gid(c.value("gid", ""), sysfs_line(sys + "/gids/" + idx))) << sys << "/gids/" << idx;
  // sysfs types an iWARP GID "IB/RoCE v1" (the kernel's default); the results say iWARP.
  if (c.value("transport", "") == "iWARP") {
    EXPECT_EQ(c.value("gid_type", ""), "iWARP");
  } else {
    EXPECT_EQ(c.value("gid_type", ""), sysfs_line(sys + "/gid_attrs/types/" + idx));
  }
  EXPECT_TRUE(std::set<std::string>({"RoCE", "InfiniBand", "iWARP"}).count(c.value("transport", "")));
  EXPECT_TRUE(std::set<std::string>({"Ethernet", "InfiniBand"}).count(c.value("link_layer", "")));
  EXPECT_TRUE(std::set<int>({256, 512, 1024, 2048, 4096}).count(c.value("mtu", 0)));
  EXPECT_TRUE(c["firmware"].is_string());
  EXPECT_TRUE(c["rate_gbps"].is_number());
  EXPECT_TRUE(std::set<std::string>({"tsc", "system"}).count(c.value("clock", "")));
  EXPECT_TRUE(c["clock_reason"].is_string());
  EXPECT_TRUE(c["labels"].is_object());
  EXPECT_TRUE(c["interval"]["seconds"].is_number());
  EXPECT_TRUE(std::set<std::string>({"all", "duration"}).count(c["interval"].value("points", "")));
  EXPECT_FALSE(c.value("latency_note", "").empty());
  EXPECT_EQ(c.value("bytes_note", ""), "bytes are payload bytes (messages x size), not wire bytes");
  EXPECT_TRUE(c["incomplete"].is_boolean());
}

// A sweep's files (client, mesh, multicast) also record the sweep.
inline void expect_sweep_context(const nlohmann::json& c) {
  EXPECT_TRUE(c["sweep"].is_object());
  EXPECT_TRUE(c["sweep_file"].is_string());
  EXPECT_GT(c.value("points", 0), 0);
  EXPECT_FALSE(c.value("clock_choice", "").empty());
  EXPECT_TRUE(std::set<std::string>({"cap", "error"}).count(c.value("cq_policy", "")));
}

}  // namespace rdmasweep::test
