// `rdmasweep doctor [HOST]`: checks what breaks RDMA runs before the first number
// (no device, port down, no RoCE v2 GID, locked-memory limit, device limits, the
// server's reachability and version) and says how to fix each.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "bench/sweep_plan.hpp"
#include "core/control/channel.hpp"
#include "core/setup/device_checks.hpp"
#include "core/host/inventory.hpp"
#include "core/point/session.hpp"

namespace rdmasweep {

namespace {

class Checklist {
 public:
  void ok(const std::string& what) { std::printf("[ ok ] %s\n", what.c_str()); }
  void warn(const std::string& what) { std::printf("[warn] %s\n", what.c_str()); }
  void fail(const std::string& what, const std::string& fix) {
    std::printf("[FAIL] %s\n       fix: %s\n", what.c_str(), fix.c_str());
    ++failures_;
  }
  int failures() const { return failures_; }

 private:
  int failures_ = 0;
};

// An up, non-loopback network interface to suggest for Soft-RoCE.
std::string ethernet_candidate() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/net", ec)) {
    std::string name = e.path().filename();
    std::ifstream state(e.path() / "operstate"), type(e.path() / "type");
    std::string s, t;
    state >> s;
    type >> t;
    if (name != "lo" && t == "1" && (s == "up" || s == "unknown")) return name;
  }
  return "<ethernet interface>";
}

std::string human_bytes(uint64_t b) {
  char s[32];
  if (b >= (1ull << 30)) std::snprintf(s, sizeof s, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
  else if (b >= (1ull << 20)) std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(b) / (1ull << 20));
  else std::snprintf(s, sizeof s, "%.0f KiB", static_cast<double>(b) / 1024);
  return s;
}

// Whether the host has any RDMA device at all (nothing else can be checked without one).
bool check_devices(Checklist& c) {
  std::vector<std::string> names;
  std::string no_device;
  try {
    names = device_names();
    if (names.empty()) no_device = "no RDMA device";
  } catch (const std::exception& e) {
    no_device = e.what();
  }
  if (!no_device.empty()) {
    c.fail(no_device, "load your NIC's RDMA driver (mlx5_ib, ...) or Soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 "
                      "type rxe netdev " + ethernet_candidate());
    return false;
  }
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  c.ok("RDMA devices: " + all);
  return true;
}

// iWARP has no RoCE GID to check: RDMA-CM connects its QPs by the interface's address.
void check_iwarp_address(const std::string& dev, const std::string& netdev, Checklist& c) {
  if (netdev.empty()) {
    c.fail(dev + " is iWARP, but no interface has the MAC address of its GID",
           "check `rdma link` for the interface it is on (rdma link add " + dev + " type siw netdev ETH for Soft-iWARP)");
    return;
  }
  const std::string addr = interface_ipv4(netdev);
  if (addr.empty())
    c.fail(dev + " is iWARP on " + netdev + ", which has no IPv4 address: RDMA-CM connects its QPs by address",
           "ip addr add ADDR/PREFIX dev " + netdev);
  else
    c.ok(dev + " is iWARP on " + netdev + " (" + addr + "): its QPs connect through RDMA-CM (the client does so by itself)");
}

// The chosen port's state and the GID a run would use; empty when either cannot be had.
std::optional<LocalFabric> check_port_and_gid(const cli::DoctorOptions& o, Checklist& c) {
  try {
    verbs::Device dev = verbs::Device::open(o.fabric.device, o.fabric.port);
    PortInfo pi = port_info(dev);
    std::string port = dev.name() + " port " + std::to_string(dev.port());
    if (!pi.active) {
      c.fail(port + " is " + pi.state,
             "bring the link up (cable, switch port, `ip link set <netdev> up`); for Soft-RoCE the netdev under it must be up");
    } else {
      c.ok(port + " is ACTIVE, " + pi.link_layer + ", MTU " + std::to_string(pi.active_mtu));
    }
    GidEntry gid = select_gid(dev, o.fabric.gid_index);
    std::string g = "GID index " + std::to_string(gid.index) + " (" + gid.type + " " + gid_to_string(gid.gid) +
                    (gid.netdev.empty() ? "" : " on " + gid.netdev) + ")";
    const Capabilities caps = capabilities(dev);
    c.ok(dev.name() + " is " + caps.transport + ": " + capabilities_text(caps));
    if (dev.is_iwarp()) {
      check_iwarp_address(dev.name(), gid.netdev, c);
    } else if (dev.is_ethernet() && !(gid.type == "RoCE v2" && gid.ipv4_mapped))
      c.fail(g + " is not a RoCE v2 GID with an IPv4 address",
             "give the RDMA netdev an IPv4 address (ip addr add ...), or pick an entry with -x (see `rdmasweep devices`)");
    else
      c.ok(g + " will be used");
    PortCounters counters = PortCounters::open(dev.name(), dev.port());
    return LocalFabric{std::move(dev), gid, std::move(counters)};
  } catch (const std::exception& e) {
    c.fail(e.what(), "see `rdmasweep devices` for what this host has");
  }
  return std::nullopt;
}

// `pinned`: the most one point's buffers pin (SweepPlan::max_side_bytes, core's sizing).
void check_memlock(uint64_t pinned, Checklist& c) {
  rlimit rl{};
  getrlimit(RLIMIT_MEMLOCK, &rl);
  if (geteuid() == 0 || rl.rlim_cur == RLIM_INFINITY)
    c.ok("locked-memory limit: " + std::string(geteuid() == 0 ? "root, no limit" : "unlimited"));
  else if (rl.rlim_cur < pinned + (1u << 20))
    c.fail("locked-memory limit " + human_bytes(rl.rlim_cur) + " is below the " + human_bytes(pinned) +
               " the planned buffers pin",
           "ulimit -l unlimited (or memlock in /etc/security/limits.conf, or LimitMEMLOCK= for a service)");
  else
    c.ok("locked-memory limit " + human_bytes(rl.rlim_cur) + " holds the planned " + human_bytes(pinned));
}

void check_limits(const std::vector<TestConfig>& points, const LocalFabric& fabric, Checklist& c) {
  int bad = 0;
  for (const TestConfig& p : points) {
    try {
      check_device_limits(p, fabric.dev);
    } catch (const std::exception& e) {
      if (bad++ == 0) c.fail(point_name(p) + ": " + e.what(), "change the sweep (see the message)");
    }
  }
  if (bad == 0) c.ok("device limits hold for the " + std::to_string(points.size()) + " planned point(s)");
}

// The server's reachability, and (with a local fabric) its version, link layer and limits.
void check_server(const cli::DoctorOptions& o, const std::vector<TestConfig>& points,
                  const std::optional<LocalFabric>& fabric, Checklist& c) {
  try {
    control::Channel ch = control::Channel::connect(o.host, o.port, std::chrono::seconds(o.timeout_s));
    c.ok("control port " + o.host + ":" + std::to_string(o.port) + " is reachable");
    if (!fabric) return;
    control::Hello me = fabric->hello();
    me.cm = fabric->dev.is_iwarp();  // as the client would: an iWARP server serves no other
    ch.send(control::MsgType::Hello, control::to_json(me));
    control::Hello peer = control::hello_from_json(ch.expect(control::MsgType::Hello, std::chrono::seconds(o.timeout_s)));
    ch.send(control::MsgType::Bye);
    if (peer.tool_version != RDMASWEEP_VERSION)
      c.warn("server runs rdmasweep " + peer.tool_version + ", this is " + RDMASWEEP_VERSION);
    c.ok("server " + peer.host + ": rdmasweep " + peer.tool_version + ", " + peer.device + " (" + peer.link_layer +
         ", MTU " + std::to_string(peer.active_mtu) + ")");
    if (peer.link_layer != port_info(fabric->dev).link_layer)
      c.fail("the server's link layer is " + peer.link_layer, "both sides must be on the same fabric type");
    for (const TestConfig& p : points) {
      if (total_qps(p) > peer.max_qp || cq_depth_for(p) > peer.max_cqe) {
        c.fail(point_name(p) + " needs more QPs or CQ entries than the server's device has (max_qp " +
                   std::to_string(peer.max_qp) + ", max_cqe " + std::to_string(peer.max_cqe) + ")",
               "lower --qps, --threads, --tx-depth or --rx-depth");
        break;
      }
    }
  } catch (const control::ProtocolError& e) {
    c.fail(std::string("the server answered, but: ") + e.what(), "run the same rdmasweep version on both hosts");
  } catch (const std::exception& e) {
    c.fail(e.what(), "start `rdmasweep server` there, and open TCP port " + std::to_string(o.port) + " in its firewall");
  }
}

}  // namespace

int doctor_main(int argc, char** argv) {
  cli::DoctorOptions o;
  if (cli::help_printed(cli::parse_doctor, argc, argv, &o)) return kOk;
  std::vector<TestConfig> points = expand(o.spec);
  const SweepPlan plan = plan_sweep(points, o.spec.repetitions, o.plan_from.empty() ? PlanRates{} : rates_from_file(o.plan_from));
  if (o.sweep_given) std::printf("%s\n", plan_text(plan).c_str());  // what the checks below are about
  Checklist c;
  if (!check_devices(c)) return kFailed;
  std::optional<LocalFabric> fabric = check_port_and_gid(o, c);
  check_memlock(plan.max_side_bytes, c);
  if (fabric && port_info(fabric->dev).active) check_limits(points, *fabric, c);  // a down port was reported
  if (!o.host.empty()) check_server(o, points, fabric, c);
  std::printf("%s\n", c.failures() ? "Something above would break a run." : "Nothing found that would break a run.");
  return c.failures() ? kFailed : kOk;
}

}  // namespace rdmasweep
