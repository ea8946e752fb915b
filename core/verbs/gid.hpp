// RoCE v2 GID discovery and selection: a wrong GID index is the most common cause
// of RoCE runs that never connect, so the choice is made here, once, and printed.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "core/verbs/device.hpp"

namespace rdmasweep {

struct GidEntry {
  int index = 0;
  ibv_gid gid{};
  std::string type;    // "IB", "RoCE v1", "RoCE v2", "iWARP" (the interface's MAC)
  std::string netdev;  // empty for IB
  bool ipv4_mapped = false;
};

std::vector<GidEntry> gid_table(const verbs::Device& dev);

// The GID index to use: `requested` when >= 0 (checked to exist), else the port's
// RoCE v2 GID holding an IPv4-mapped address (falling back to any RoCE v2, then
// index 0). On InfiniBand ports the default is index 0.
GidEntry select_gid(const verbs::Device& dev, int requested);

std::string gid_to_string(const ibv_gid& g);  // IPv6 text form
bool gid_from_string(const std::string& s, ibv_gid* out);
bool is_ipv4_mapped(const ibv_gid& g);

}  // namespace rdmasweep
