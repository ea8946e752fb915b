// What this host's RDMA devices are and can do, as plain structs: `rdmasweep devices`
// and `rdmasweep doctor` report from these, so bench/ never reads a verbs struct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace rdmasweep {

namespace verbs {
class Device;
}

struct GidInfo {
  int index = 0;
  std::string gid;     // IPv6 text form
  std::string type;    // "IB", "RoCE v1", "RoCE v2", "iWARP"
  std::string netdev;  // empty for IB
  bool is_default = false;  // the entry select_gid() picks when no -x is given
};

struct PortInfo {
  uint8_t port = 1;
  bool active = false;
  std::string state, phys_state, link_layer;
  uint8_t active_width = 0, active_speed = 0;  // the raw codes
  int active_mtu = 0;                          // bytes
  double rate_gbps = 0;
  uint16_t lid = 0;
  uint32_t max_msg_sz = 0;
  std::vector<GidInfo> gids;  // filled by device_inventory() only
};

// What a device can do, from its attributes and transport (never from its name):
// `rdmasweep devices` prints it, doctor and the device checks refuse by it, every
// result's context records it.
struct Capabilities {
  const char* transport = "InfiniBand";  // "InfiniBand", "RoCE", "iWARP" or "other" (e.g. EFA)
  bool rc = true;                        // reliable connected QPs (InfiniBand/RoCE and iWARP have them)
  bool atomics = false;                  // atomic_cap is not IBV_ATOMIC_NONE
  bool ud = false;                       // unreliable datagram QPs (not on iWARP)
  bool srq = false;                      // shared receive queues (max_srq > 0)
  bool multicast = false;                // UD multicast groups (max_mcast_grp > 0)
  bool immediate = false;                // WRITE WITH IMMEDIATE (not on iWARP)
  uint32_t max_inline = 0;               // Device::max_inline()
  uint32_t max_rd_atom = 0;              // reads in flight per QP, both directions
  uint64_t max_msg = 0;                  // the port's max_msg_sz
};
Capabilities capabilities(const verbs::Device& dev);
// {"transport": ..., "atomics": ..., ...} for results contexts and `devices --json`.
nlohmann::json capabilities_json(const Capabilities& c);
// "atomics no, UD no, SRQ yes, ..., max message 4294967295 B" for people.
std::string capabilities_text(const Capabilities& c);

struct DeviceSummary {
  std::string name, firmware;
  Capabilities caps;
  int max_qp = 0, max_qp_wr = 0, max_cqe = 0, max_cq = 0, max_srq_wr = 0;
  uint64_t max_mr_size = 0;
  uint32_t max_inline = 0;
  std::vector<PortInfo> ports;
};

// The first IPv4 address of network interface `netdev` ("" when it has none).
std::string interface_ipv4(const std::string& netdev);

// Names of all RDMA devices on this host (empty when there are none).
std::vector<std::string> device_names();
// The opened port's state and link, without its GID table.
PortInfo port_info(const verbs::Device& dev);
// Every device with every port and GID table.
std::vector<DeviceSummary> device_inventory();

}  // namespace rdmasweep
