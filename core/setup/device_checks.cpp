#include "core/setup/device_checks.hpp"

#include <fstream>
#include <string>

#include "core/config/refusals.hpp"
#include "core/engine/wr_id.hpp"
#include "core/host/inventory.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

using verbs::Error;

static void limit(bool ok, const std::string& what, uint64_t asked, const std::string& limit_name, uint64_t limit_value,
                  const std::string& fix) {
  if (!ok)
    throw Error(what + " " + std::to_string(asked) + " is over the device's " + limit_name + " (" +
                std::to_string(limit_value) + "): " + fix);
}

// --hugepages: the host has a pool of 2 MiB pages (how many are free only mmap can tell,
// when the buffers are made).
static void check_huge_pages(const std::string& meminfo = "/proc/meminfo") {
  std::ifstream in(meminfo);
  uint64_t total = 0, size_kb = 0;
  for (std::string key; in >> key;) {
    if (key == "HugePages_Total:") in >> total;
    else if (key == "Hugepagesize:") in >> size_kb;
    in.ignore(1 << 20, '\n');
  }
  if (size_kb != 0 && size_kb != 2048)
    throw Error("--hugepages: this host's huge pages are " + std::to_string(size_kb) + " kB, not 2 MiB (boot with "
                "default_hugepagesz=2M)");
  if (total == 0)
    throw Error("--hugepages: no huge pages are reserved on this host (HugePages_Total is 0 in /proc/meminfo): reserve "
                "some first, e.g. sysctl vm.nr_hugepages=64 (128 MiB)");
}

// What the device cannot do at all (capabilities()): ConfigError, exit 2 before any QP.
static void check_capabilities(const TestConfig& c, const verbs::Device& dev) {
  const Capabilities caps = capabilities(dev);
  const std::string who = dev.name() + " (" + caps.transport + ")";
  if (!is_ud(c) && !caps.rc)
    throw ConfigError("--transport rc: " + who + " has no reliable connected (RC) QPs (its transport is neither "
                      "InfiniBand/RoCE nor iWARP, as on EFA): use --transport ud, or a device with RC");
  if (is_atomic(c.work.op) && !caps.atomics)
    throw ConfigError(std::string("--op ") + to_string(c.work.op) + ": " + who +
                      " has no atomic operations (atomic_cap IBV_ATOMIC_NONE): run atomics on a device that has them");
  if (is_ud(c) && !caps.ud)
    throw ConfigError("--transport ud: " + who + " has no UD QPs (iWARP is connected only): use --transport rc");
  if (write_with_imm(c) && !caps.immediate)
    throw ConfigError("--events with --op write --mode lat: " + who + " has no WRITE WITH IMMEDIATE (the event-driven "
                      "WRITE pong needs it): drop --events, or use --op send");
  if (c.knobs.srq && !caps.srq)
    throw ConfigError("--srq: " + who + " has no shared receive queues (max_srq 0): drop --srq");
  const TestConfig plain;
  if (dev.is_iwarp() && (c.knobs.qp_timeout != plain.knobs.qp_timeout || c.knobs.retry_count != plain.knobs.retry_count))
    throw ConfigError("--qp-timeout/--retry-count: " + who + " retransmits through TCP: its QPs have no ACK timeout or "
                      "retry count to set; drop them");
  if (needs_send_credit(c, dev) && c.knobs.srq && c.knobs.rx_depth < c.work.qps)
    throw ConfigError("--srq --rx-depth " + std::to_string(c.knobs.rx_depth) + ": " + who + " has no "
                      "receiver-not-ready retry, so each of a thread's " + std::to_string(c.work.qps) +
                      " QPs keeps a share of the shared receive queue for its SENDs: raise --rx-depth to at least " +
                      std::to_string(c.work.qps) + ", or use fewer QPs");
}

void check_device_limits(const TestConfig& c, const verbs::Device& dev) {
  const ibv_device_attr& a = dev.attr();
  const ibv_port_attr& p = dev.port_attr();
  if (p.state != IBV_PORT_ACTIVE)
    throw Error("port " + std::to_string(dev.port()) + " of " + dev.name() + " is " + verbs::port_state_name(p.state) +
                ", not ACTIVE: check the cable/link, or for Soft-RoCE that its netdev is up");
  limit(total_qps(c) <= static_cast<uint64_t>(a.max_qp), "QP count (qps x threads)", total_qps(c), "max_qp", a.max_qp,
        "lower --qps or --threads");
  limit(c.work.qps <= WrId::kMaxQps, "QP count", c.work.qps, "wr_id QP field", WrId::kMaxQps, "lower --qps");
  limit(cq_depth_for(c) <= static_cast<uint64_t>(a.max_cqe), "CQ depth", cq_depth_for(c), "max_cqe", a.max_cqe,
        "lower --qps, --tx-depth or --rx-depth, or raise --signal-every");
  limit(c.knobs.tx_depth <= static_cast<uint64_t>(a.max_qp_wr), "send-queue depth", c.knobs.tx_depth, "max_qp_wr",
        a.max_qp_wr, "lower --tx-depth");
  if (c.knobs.srq)
    limit(c.knobs.rx_depth <= static_cast<uint64_t>(a.max_srq_wr), "shared receive queue depth", c.knobs.rx_depth,
          "max_srq_wr", a.max_srq_wr, "lower --rx-depth");
  else if (c.work.op == Op::Send || write_with_imm(c))
    limit(c.knobs.rx_depth <= static_cast<uint64_t>(a.max_qp_wr), "receive depth", c.knobs.rx_depth, "max_qp_wr",
          a.max_qp_wr, "lower --rx-depth");
  if (!fetches(c.work.op) && c.knobs.inline_size > 0 && c.knobs.inline_size != kInlineAuto)
    limit(c.knobs.inline_size <= dev.max_inline(), "inline size", c.knobs.inline_size, "max inline data",
          dev.max_inline(), "lower --inline-size (or leave it at auto)");
  check_capabilities(c, dev);
  if (fetches(c.work.op) && c.knobs.outs > 0) {
    limit(c.knobs.outs <= static_cast<uint64_t>(a.max_qp_rd_atom), "outstanding reads", c.knobs.outs, "max_qp_rd_atom",
          a.max_qp_rd_atom, "lower --outs (or 0 for the devices' limit)");
    limit(c.knobs.outs <= static_cast<uint64_t>(a.max_qp_init_rd_atom), "outstanding reads", c.knobs.outs,
          "max_qp_init_rd_atom", a.max_qp_init_rd_atom, "lower --outs (or 0 for the devices' limit)");
  }
  if (c.knobs.hugepages) check_huge_pages();
  if (c.knobs.mtu != 0)
    limit(c.knobs.mtu <= static_cast<uint64_t>(verbs::mtu_bytes(p.active_mtu)), "path MTU", c.knobs.mtu,
          "port active MTU", static_cast<uint64_t>(verbs::mtu_bytes(p.active_mtu)), "lower --mtu (or 0 for the ports' own)");
  if (is_ud(c) && c.work.size > ud_size_limit(c, dev))
    throw Error("--size " + std::to_string(c.work.size) + " is over the UD limit of " +
                std::to_string(ud_size_limit(c, dev)) + " bytes (the path MTU" + (c.knobs.mtu != 0 ? ", --mtu" : "") +
                "): a UD message is one packet; lower --size, or use --transport rc");
  if (p.max_msg_sz != 0)
    limit(c.work.size <= p.max_msg_sz, "message size", c.work.size, "port max_msg_sz", p.max_msg_sz, "lower --size");
}

uint64_t ud_size_limit(const TestConfig& c, const verbs::Device& dev) {
  return c.knobs.mtu != 0 ? c.knobs.mtu : static_cast<uint64_t>(verbs::mtu_bytes(dev.port_attr().active_mtu));
}

bool needs_send_credit(const TestConfig& c, const verbs::Device& dev) {
  return dev.is_iwarp() && c.work.op == Op::Send && c.work.mode == Mode::Bw && !is_ud(c);
}

bool fences_writes(const TestConfig& c, const verbs::Device& dev) { return dev.is_iwarp() && c.work.op == Op::Write; }

}  // namespace rdmasweep
