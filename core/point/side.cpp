#include "core/config/knobs.hpp"
#include "core/point/side.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>

namespace rdmasweep {

static std::string hostname() {
  char b[256] = {};
  gethostname(b, sizeof b - 1);
  return b;
}

static std::string kernel() {
  utsname u{};
  uname(&u);
  return std::string(u.sysname) + " " + u.release;
}

void log_qps(const PointResources& res, const char* side,
             const std::function<void(const std::string&)>& log) {
  if (!log) return;
  log(std::string(side) + " " + point_name(res.cfg()) + ": " + std::to_string(total_qps(res.cfg())) + " QPs connected");
  size_t i = 0;
  for (uint32_t t = 0; t < res.threads(); ++t)
    for (const verbs::QueuePair& qp : res.lane(t).qps)
      log("  QP " + std::to_string(i++) + (res.threads() > 1 ? " (thread " + std::to_string(t) + ") " : " ") + qp.describe());
}

LocalFabric LocalFabric::open(const FabricConfig& f) {
  verbs::Device dev = verbs::Device::open(f.device, f.port);
  GidEntry gid = select_gid(dev, f.gid_index);
  PortCounters counters = PortCounters::open(dev.name(), dev.port());
  return LocalFabric{std::move(dev), gid, std::move(counters)};
}

control::Hello LocalFabric::hello() const {
  control::Hello h;
  h.tool_version = RDMASWEEP_VERSION;
  h.host = hostname();
  h.device = dev.name();
  h.firmware = dev.firmware();
  h.link_layer = verbs::link_layer_name(dev.port_attr().link_layer);
  h.kernel = kernel();
  h.active_mtu = static_cast<uint32_t>(verbs::mtu_bytes(dev.port_attr().active_mtu));
  h.rate_gbps = verbs::port_rate_gbps(dev.port_attr());
  h.max_qp = static_cast<uint32_t>(dev.attr().max_qp);
  h.max_cqe = static_cast<uint32_t>(dev.attr().max_cqe);
  // One value serves a QP both ways (max_rd_atomic and max_dest_rd_atomic): what this
  // end can take as responder and as requester alike.
  h.max_qp_rd_atom = static_cast<uint32_t>(std::min(dev.attr().max_qp_rd_atom, dev.attr().max_qp_init_rd_atom));
  h.gid = gid_to_string(gid.gid);
  h.gid_index = gid.index;
  h.gid_type = gid.type;
  h.capabilities = capabilities_json(capabilities(dev));
  return h;
}

int memory_node(const SessionOptions& opt) { return opt.placement ? opt.placement->numa_node : -1; }

control::Hello hello_with_cpus(const LocalFabric& fabric, const SessionOptions& opt) {
  control::Hello h = fabric.hello();
  if (opt.placement) h.cpus = cpu_list_text(opt.placement->cpus) + ": " + opt.placement->source;
  h.join = opt.join;
  return h;
}

EndOptions end_options(const SessionOptions& opt, const LocalFabric& fabric) {
  EndOptions e;
  e.interrupted = opt.interrupted;
  e.wind_up = opt.wind_up;
  e.timeout = opt.timeout;
  e.placement = opt.placement;
  e.interval = opt.interval;
  e.iwarp = fabric.dev.is_iwarp();
  e.progress_file = opt.progress_file;
  e.on_traffic = opt.on_traffic;
  return e;
}

CounterValues sample(const LocalFabric& f) { return f.counters.available() ? f.counters.read() : CounterValues{}; }
CounterValues sample_after(const LocalFabric& f, std::chrono::steady_clock::time_point last_traffic) {
  return f.counters.available() ? f.counters.read_after_traffic(last_traffic) : CounterValues{};
}

}  // namespace rdmasweep
