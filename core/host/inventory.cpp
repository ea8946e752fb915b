#include "core/host/inventory.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/verbs/device.hpp"
#include "core/verbs/errors.hpp"
#include "core/verbs/gid.hpp"

namespace rdmasweep {

namespace {

const char* phys_state_name(uint8_t s) {
  switch (s) {
    case 1: return "Sleep";
    case 2: return "Polling";
    case 3: return "Disabled";
    case 4: return "PortConfigurationTraining";
    case 5: return "LinkUp";
    case 6: return "LinkErrorRecovery";
    case 7: return "PhyTest";
    default: return "unknown";
  }
}

PortInfo port_with_gids(const verbs::Device& d) {
  PortInfo port = port_info(d);
  int chosen = -1;
  try {
    chosen = select_gid(d, -1).index;
  } catch (const verbs::Error&) {
  }
  for (const GidEntry& g : gid_table(d))
    port.gids.push_back({g.index, gid_to_string(g.gid), g.type, g.netdev, g.index == chosen});
  return port;
}

}  // namespace

Capabilities capabilities(const verbs::Device& dev) {
  const ibv_device_attr& a = dev.attr();
  Capabilities c;
  const ibv_transport_type t = dev.get()->device->transport_type;
  c.rc = t == IBV_TRANSPORT_IB || t == IBV_TRANSPORT_IWARP;  // EFA's is neither: SRD and UD only
  c.transport = dev.is_iwarp() ? "iWARP" : !c.rc ? "other" : dev.is_ethernet() ? "RoCE" : "InfiniBand";
  c.atomics = a.atomic_cap != IBV_ATOMIC_NONE;
  c.ud = !dev.is_iwarp();
  c.srq = a.max_srq > 0;
  c.multicast = !dev.is_iwarp() && a.max_mcast_grp > 0;
  c.immediate = !dev.is_iwarp();
  c.max_inline = dev.max_inline();
  c.max_rd_atom = static_cast<uint32_t>(std::min(a.max_qp_rd_atom, a.max_qp_init_rd_atom));
  c.max_msg = dev.port_attr().max_msg_sz;
  return c;
}

nlohmann::json capabilities_json(const Capabilities& c) {
  return {{"transport", c.transport}, {"rc", c.rc}, {"atomics", c.atomics},     {"ud", c.ud},
          {"srq", c.srq},             {"multicast", c.multicast}, {"immediate", c.immediate},
          {"max_inline", c.max_inline}, {"max_rd_atom", c.max_rd_atom}, {"max_msg", c.max_msg}};
}

std::string capabilities_text(const Capabilities& k) {
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  return std::string("RC ") + yes(k.rc) + ", atomics " + yes(k.atomics) + ", UD " + yes(k.ud) + ", SRQ " + yes(k.srq) + ", multicast " +
         yes(k.multicast) + ", immediate data " + yes(k.immediate) + ", max inline " + std::to_string(k.max_inline) +
         " B, reads in flight " + std::to_string(k.max_rd_atom) + ", max message " + std::to_string(k.max_msg) + " B";
}

std::string interface_ipv4(const std::string& netdev) {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string out;
  for (ifaddrs* a = all; a != nullptr && out.empty(); a = a->ifa_next)
    if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET && netdev == a->ifa_name) {
      char text[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
      out = text;
    }
  freeifaddrs(all);
  return out;
}

std::vector<std::string> device_names() { return verbs::list_devices(); }

PortInfo port_info(const verbs::Device& d) {
  const ibv_port_attr& p = d.port_attr();
  PortInfo port;
  port.port = d.port();
  port.active = p.state == IBV_PORT_ACTIVE;
  port.state = verbs::port_state_name(p.state);
  port.phys_state = phys_state_name(p.phys_state);
  port.active_width = p.active_width;
  port.active_speed = p.active_speed;
  port.link_layer = verbs::link_layer_name(p.link_layer);
  port.active_mtu = verbs::mtu_bytes(p.active_mtu);
  port.rate_gbps = verbs::port_rate_gbps(p);
  port.lid = p.lid;
  port.max_msg_sz = p.max_msg_sz;
  return port;
}

std::vector<DeviceSummary> device_inventory() {
  std::vector<DeviceSummary> out;
  for (const std::string& name : verbs::list_devices()) {
    verbs::Device d = verbs::Device::open(name, 1);
    const ibv_device_attr& a = d.attr();
    DeviceSummary s{name,         d.firmware(), capabilities(d), a.max_qp,      a.max_qp_wr, a.max_cqe,
                    a.max_cq,     a.max_srq_wr, a.max_mr_size,     d.max_inline(), {}};
    for (uint8_t p = 1; p <= a.phys_port_cnt; ++p) s.ports.push_back(port_with_gids(verbs::Device::open(name, p)));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace rdmasweep
