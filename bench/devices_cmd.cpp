// `rdmasweep devices`: every RDMA device and port, its limits and GID table, with
// the GID the tool would pick marked.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/verbs/gid.hpp"
#include "core/verbs/device.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

static const char* phys_state_name(uint8_t s) {
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

static nlohmann::json describe_port(const verbs::Device& d) {
  const ibv_port_attr& p = d.port_attr();
  nlohmann::json port = {{"port", d.port()},
                         {"state", verbs::port_state_name(p.state)},
                         {"phys_state", phys_state_name(p.phys_state)},
                         {"active_width", p.active_width},
                         {"active_speed", p.active_speed},
                         {"link_layer", verbs::link_layer_name(p.link_layer)},
                         {"active_mtu", verbs::mtu_bytes(p.active_mtu)},
                         {"rate_gbps", verbs::port_rate_gbps(p)},
                         {"lid", p.lid},
                         {"max_msg_sz", p.max_msg_sz}};
  int chosen = -1;
  try {
    chosen = select_gid(d, -1).index;
  } catch (const verbs::Error&) {
  }
  nlohmann::json gids = nlohmann::json::array();
  for (const GidEntry& g : gid_table(d))
    gids.push_back({{"index", g.index}, {"gid", gid_to_string(g.gid)}, {"type", g.type}, {"netdev", g.netdev},
                    {"default", g.index == chosen}});
  port["gids"] = gids;
  return port;
}

int devices_main(int argc, char** argv) {
  std::string help;
  cli::DevicesOptions o = cli::parse_devices(argc, argv, &help);
  if (o.help) {
    std::cout << help;
    return kOk;
  }
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& name : verbs::list_devices()) {
    verbs::Device d = verbs::Device::open(name, 1);
    const ibv_device_attr& a = d.attr();
    nlohmann::json dev = {{"name", name},          {"firmware", d.firmware()}, {"max_qp", a.max_qp},
                          {"max_qp_wr", a.max_qp_wr}, {"max_cqe", a.max_cqe},   {"max_cq", a.max_cq},
                          {"max_mr_size", a.max_mr_size}, {"max_srq_wr", a.max_srq_wr},
                          {"max_inline", d.max_inline()},
                          {"ports", nlohmann::json::array()}};
    for (uint8_t p = 1; p <= a.phys_port_cnt; ++p) dev["ports"].push_back(describe_port(verbs::Device::open(name, p)));
    all.push_back(dev);
  }
  if (o.json) {
    std::cout << all.dump(2) << "\n";
    return kOk;
  }
  if (all.empty()) {
    std::cout << "no RDMA devices (for Soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev ETH)\n";
    return kFailed;
  }
  for (const auto& d : all) {
    std::printf("%s  firmware %s  max_qp %s  max_qp_wr %s  max_cq %s  max_cqe %s  max_srq_wr %s  max_inline %s\n",
                d["name"].get<std::string>().c_str(), d["firmware"].get<std::string>().c_str(), d["max_qp"].dump().c_str(),
                d["max_qp_wr"].dump().c_str(), d["max_cq"].dump().c_str(), d["max_cqe"].dump().c_str(),
                d["max_srq_wr"].dump().c_str(), d["max_inline"].dump().c_str());
    for (const auto& p : d["ports"]) {
      std::printf("  port %s: %s (%s), %s, MTU %s, %s Gb/s (width code %s, speed code %s), max message %s bytes\n",
                  p["port"].dump().c_str(), p["state"].get<std::string>().c_str(),
                  p["phys_state"].get<std::string>().c_str(), p["link_layer"].get<std::string>().c_str(),
                  p["active_mtu"].dump().c_str(), p["rate_gbps"].dump().c_str(), p["active_width"].dump().c_str(),
                  p["active_speed"].dump().c_str(), p["max_msg_sz"].dump().c_str());
      for (const auto& g : p["gids"])
        std::printf("    %s GID %-3s %-8s %-40s %s\n", g["default"].get<bool>() ? "*" : " ", g["index"].dump().c_str(),
                    g["type"].get<std::string>().c_str(), g["gid"].get<std::string>().c_str(),
                    g["netdev"].get<std::string>().c_str());
    }
  }
  std::printf("(* = the GID rdmasweep picks by default; override with -x)\n");
  return kOk;
}

}  // namespace rdmasweep
