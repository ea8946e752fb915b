// What this host's RDMA devices are and can do, as plain structs: `rdmasweep devices`
// and `rdmasweep doctor` report from these, so bench/ never reads a verbs struct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdmasweep {

namespace verbs {
class Device;
}

struct GidInfo {
  int index = 0;
  std::string gid;     // IPv6 text form
  std::string type;    // "IB", "RoCE v1", "RoCE v2"
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

struct DeviceSummary {
  std::string name, firmware;
  int max_qp = 0, max_qp_wr = 0, max_cqe = 0, max_cq = 0, max_srq_wr = 0;
  uint64_t max_mr_size = 0;
  uint32_t max_inline = 0;
  std::vector<PortInfo> ports;
};

// Names of all RDMA devices on this host (empty when there are none).
std::vector<std::string> device_names();
// The opened port's state and link, without its GID table.
PortInfo port_info(const verbs::Device& dev);
// Every device with every port and GID table.
std::vector<DeviceSummary> device_inventory();

}  // namespace rdmasweep
