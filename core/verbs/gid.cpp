#include "core/verbs/gid.hpp"

#include <arpa/inet.h>
#include <net/if.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/verbs/errors.hpp"

namespace rdmasweep {

std::string gid_to_string(const ibv_gid& g) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, g.raw, buf, sizeof buf);
  return buf;
}

bool gid_from_string(const std::string& s, ibv_gid* out) { return inet_pton(AF_INET6, s.c_str(), out->raw) == 1; }

bool is_ipv4_mapped(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, prefix, sizeof prefix) == 0;
}

static const char* gid_type_name(uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_IB: return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
    default: return "unknown";
  }
}

// The port's valid entries, in index order. One ioctl for the whole table where the
// kernel has it (rxe's table has 1024 slots: a query each took 0.1 s at start-up
// under emulation); else one query per slot.
static std::vector<ibv_gid_entry> valid_entries(const verbs::Device& dev) {
  const size_t len = static_cast<size_t>(dev.port_attr().gid_tbl_len);
  std::vector<ibv_gid_entry> all(len * std::max<size_t>(1, dev.attr().phys_port_cnt));
  std::vector<ibv_gid_entry> out;
  if (ssize_t n = ibv_query_gid_table(dev.get(), all.data(), all.size(), 0); n >= 0) {
    for (ssize_t i = 0; i < n; ++i)
      if (all[static_cast<size_t>(i)].port_num == dev.port()) out.push_back(all[static_cast<size_t>(i)]);
    std::sort(out.begin(), out.end(), [](const ibv_gid_entry& a, const ibv_gid_entry& b) { return a.gid_index < b.gid_index; });
    return out;
  }
  for (size_t i = 0; i < len; ++i) {
    ibv_gid_entry e{};
    // ENODATA: an empty slot.
    if (ibv_query_gid_ex(dev.get(), dev.port(), static_cast<uint32_t>(i), &e, 0) == 0) out.push_back(e);
  }
  return out;
}

// The interface whose MAC address is `mac` (six bytes), or "": an iWARP device's GID
// is its interface's MAC, and its GID entries name no interface.
static std::string netdev_with_mac(const uint8_t* mac) {
  char want[18];
  std::snprintf(want, sizeof want, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/net", ec)) {
    std::ifstream f(e.path() / "address");
    std::string addr;
    if (f >> addr && addr == want) return e.path().filename().string();
  }
  return "";
}

std::vector<GidEntry> gid_table(const verbs::Device& dev) {
  std::vector<GidEntry> out;
  for (const ibv_gid_entry& e : valid_entries(dev)) {
    GidEntry g;
    g.index = static_cast<int>(e.gid_index);
    g.gid = e.gid;
    g.type = dev.is_iwarp() ? "iWARP" : gid_type_name(e.gid_type);
    if (e.ndev_ifindex != 0) {
      char name[IF_NAMESIZE] = {};
      if (if_indextoname(e.ndev_ifindex, name)) g.netdev = name;
    } else if (dev.is_iwarp()) {
      g.netdev = netdev_with_mac(e.gid.raw);
    }
    g.ipv4_mapped = is_ipv4_mapped(e.gid);
    out.push_back(g);
  }
  return out;
}

GidEntry select_gid(const verbs::Device& dev, int requested) {
  std::vector<GidEntry> table = gid_table(dev);
  if (requested >= 0) {
    for (const GidEntry& g : table)
      if (g.index == requested) return g;
    std::string valid;
    for (const GidEntry& g : table) valid += (valid.empty() ? "" : ", ") + std::to_string(g.index) + " (" + g.type + ")";
    throw verbs::Error("GID index " + std::to_string(requested) + " does not exist on " + dev.name() + " port " +
                       std::to_string(dev.port()) + "; valid indexes: " + (valid.empty() ? "none" : valid) +
                       " (see `rdmasweep devices`)");
  }
  if (!dev.is_ethernet()) {
    if (!table.empty()) return table.front();
    GidEntry g;  // IB routes by LID; a zero GID is never used on the wire
    return g;
  }
  const GidEntry* any_v2 = nullptr;
  for (const GidEntry& g : table) {
    if (g.type != "RoCE v2") continue;
    if (g.ipv4_mapped) return g;
    if (!any_v2) any_v2 = &g;
  }
  if (any_v2) return *any_v2;
  if (!table.empty()) return table.front();
  throw verbs::Error("port " + std::to_string(dev.port()) + " of " + dev.name() +
                     " has no GID: give its network interface an IP address and bring it up");
}

}  // namespace rdmasweep
