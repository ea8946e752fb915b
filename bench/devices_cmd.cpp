// `rdmasweep devices`: every RDMA device and port, its limits and GID table, with
// the GID the tool would pick marked, and the port counters each port has (those a
// sweep records per point).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/host/counters.hpp"
#include "core/host/inventory.hpp"

namespace rdmasweep {

static nlohmann::json describe_port(const std::string& device, const PortInfo& p) {
  nlohmann::json port = {{"port", p.port},
                         {"state", p.state},
                         {"phys_state", p.phys_state},
                         {"active_width", p.active_width},
                         {"active_speed", p.active_speed},
                         {"link_layer", p.link_layer},
                         {"active_mtu", p.active_mtu},
                         {"rate_gbps", p.rate_gbps},
                         {"lid", p.lid},
                         {"max_msg_sz", p.max_msg_sz}};
  nlohmann::json gids = nlohmann::json::array();
  for (const GidInfo& g : p.gids)
    gids.push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev},
                    {"default", g.is_default}});
  port["gids"] = gids;
  // Current values by raw driver name; null when the port has none.
  PortCounters counters = PortCounters::open(device, p.port);
  port["counters"] = counters.available() ? nlohmann::json(counters.read()) : nlohmann::json(nullptr);
  return port;
}

// "counters (15): ack_deferred 0, ..." wrapped under the port, or that it has none.
static void print_counters(const nlohmann::json& c) {
  if (c.is_null()) {
    std::printf("    counters: none (results of this port carry no counter deltas)\n");
    return;
  }
  std::string line = "    counters (" + std::to_string(c.size()) + "):";
  for (const auto& [name, v] : c.items()) {
    std::string item = " " + name + " " + v.dump() + ",";
    if (line.size() + item.size() > 100) {
      std::printf("%s\n", line.c_str());
      line = "     ";
    }
    line += item;
  }
  line.pop_back();
  std::printf("%s\n", line.c_str());
}

int devices_main(int argc, char** argv) {
  cli::DevicesOptions o;
  if (cli::help_printed(cli::parse_devices, argc, argv, &o)) return kOk;
  nlohmann::json all = nlohmann::json::array();
  const std::vector<DeviceSummary> summaries = device_inventory();
  for (const DeviceSummary& d : summaries) {
    nlohmann::json dev = {{"name", d.name},          {"firmware", d.firmware}, {"transport", d.caps.transport},
                          {"capabilities", capabilities_json(d.caps)},           {"max_qp", d.max_qp},
                          {"max_qp_wr", d.max_qp_wr}, {"max_cqe", d.max_cqe},   {"max_cq", d.max_cq},
                          {"max_mr_size", d.max_mr_size}, {"max_srq_wr", d.max_srq_wr},
                          {"max_inline", d.max_inline},
                          {"ports", nlohmann::json::array()}};
    for (const PortInfo& p : d.ports) dev["ports"].push_back(describe_port(d.name, p));
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
  size_t i = 0;
  for (const auto& d : all) {
    std::printf("%s  firmware %s  max_qp %s  max_qp_wr %s  max_cq %s  max_cqe %s  max_srq_wr %s  max_inline %s\n",
                d["name"].get<std::string>().c_str(), d["firmware"].get<std::string>().c_str(), d["max_qp"].dump().c_str(),
                d["max_qp_wr"].dump().c_str(), d["max_cq"].dump().c_str(), d["max_cqe"].dump().c_str(),
                d["max_srq_wr"].dump().c_str(), d["max_inline"].dump().c_str());
    std::printf("  %s: %s\n", d["transport"].get<std::string>().c_str(), capabilities_text(summaries[i++].caps).c_str());
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
      print_counters(p["counters"]);
    }
  }
  std::printf("(* = the GID rdmasweep picks by default; override with -x)\n");
  return kOk;
}

}  // namespace rdmasweep
