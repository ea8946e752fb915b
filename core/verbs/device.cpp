#include "core/verbs/device.hpp"

#include <cstring>
#include <memory>

#include "core/verbs/errors.hpp"

namespace rdmasweep::verbs {

namespace {
struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;

DeviceList get_list(int* n) {
  DeviceList l(ibv_get_device_list(n));
  if (!l) {
    int err = errno;
    if (err == ENOSYS)
      throw Error("no RDMA device: this kernel has no RDMA support loaded (ib_uverbs); load your NIC's driver, "
                  "or on a machine without RDMA run inside tools/rxe-lab",
                  err);
    throw Error("ibv_get_device_list failed: " + describe_errno(err) +
                    " (is the rdma-core/libibverbs package installed and a provider such as "
                    "ibverbs-providers present?)",
                err);
  }
  return l;
}
}  // namespace

std::vector<std::string> list_devices() {
  int n = 0;
  DeviceList l = get_list(&n);
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.emplace_back(ibv_get_device_name(l.get()[i]));
  return names;
}

int kernel_index(const std::string& name) {
  int n = 0;
  DeviceList l(ibv_get_device_list(&n));
  for (int i = 0; l && i < n; ++i)
    if (name == ibv_get_device_name(l.get()[i])) return ibv_get_device_index(l.get()[i]);
  return -1;
}

Device Device::open(const std::string& name, uint8_t port) {
  int n = 0;
  DeviceList l = get_list(&n);
  if (n == 0)
    throw Error("no RDMA device found: load a driver, or for Soft-RoCE run `modprobe rdma_rxe && "
                "rdma link add rxe0 type rxe netdev <ethernet interface>` (or use tools/rxe-lab)");
  ibv_device* chosen = nullptr;
  std::string all;
  for (int i = 0; i < n; ++i) {
    const char* dn = ibv_get_device_name(l.get()[i]);
    all += (all.empty() ? "" : ", ") + std::string(dn);
    if (name.empty() ? i == 0 : name == dn) chosen = l.get()[i];
  }
  if (chosen == nullptr) throw Error("no RDMA device named '" + name + "': this host has " + all);

  Device d;
  d.name_ = ibv_get_device_name(chosen);
  d.ctx_ = Handle<ibv_context, ibv_close_device>(check_ptr(ibv_open_device(chosen), "ibv_open_device(" + d.name_ + ")"),
                                                 "ibv_close_device");
  check_rc(ibv_query_device(d.get(), &d.attr_), "ibv_query_device(" + d.name_ + ")");
  d.reserve_siw_invalid_key();
  if (port < 1 || port > d.attr_.phys_port_cnt)
    throw Error("device " + d.name_ + " has no port " + std::to_string(port) + " (it has " +
                std::to_string(d.attr_.phys_port_cnt) + ")");
  d.port_ = port;
  check_rc(ibv_query_port(d.get(), port, &d.port_attr_),
           "ibv_query_port(" + d.name_ + ", port " + std::to_string(port) + ")");
  return d;
}

// Soft-iWARP's provider (rdma-core's libsiw) checks each queue's mmap offset against
// SIW_INVAL_UOBJ_KEY (0x90000), but the kernel hands out real offsets from 0 upwards,
// page after page, in each context: the queue that lands at 0x90000 (the 145th page;
// e.g. the 20th QP after a 8192-entry CQ) fails its create with errno untouched, every
// time. One CQ made first, over the first 257 pages, keeps every later queue past it.
void Device::reserve_siw_invalid_key() {
  constexpr uint32_t kSiwVendorId = 0x626d74;  // "bmt", Soft-iWARP's (drivers/infiniband/sw/siw)
  constexpr int kSpacerCqes = 32768;           // 32-byte CQEs: 1 MiB, past offset 0x90000
  if (!is_iwarp() || attr_.vendor_id != kSiwVendorId) return;
  siw_spacer_ = Handle<ibv_cq, ibv_destroy_cq>(
      check_ptr(ibv_create_cq(get(), kSpacerCqes, nullptr, nullptr, 0),
                "ibv_create_cq(" + name_ + ", " + std::to_string(kSpacerCqes) + " entries, Soft-iWARP's spacer)"),
      "ibv_destroy_cq");
}

uint32_t Device::max_inline() const {
  if (max_inline_ >= 0) return static_cast<uint32_t>(max_inline_);
  ibv_pd* pd = ibv_alloc_pd(get());
  ibv_cq* cq = pd ? ibv_create_cq(get(), 1, nullptr, nullptr, 0) : nullptr;
  auto fits = [&](uint32_t n) {
    ibv_qp_init_attr a{};
    a.send_cq = a.recv_cq = cq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = a.cap.max_recv_wr = 1;
    a.cap.max_send_sge = a.cap.max_recv_sge = 1;
    a.cap.max_inline_data = n;
    ibv_qp* qp = ibv_create_qp(pd, &a);
    if (qp) ibv_destroy_qp(qp);
    return qp != nullptr;
  };
  uint32_t lo = 0, hi = 65536;  // binary search for the largest size that creates
  if (cq && fits(hi)) lo = hi;
  while (cq && lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  if (cq) ibv_destroy_cq(cq);
  if (pd) ibv_dealloc_pd(pd);
  max_inline_ = lo;
  return lo;
}

const char* link_layer_name(uint8_t ll) {
  switch (ll) {
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    default: return "unknown";
  }
}

const char* port_state_name(ibv_port_state s) {
  switch (s) {  // ibv_port_state_str's names differ across rdma-core releases
    case IBV_PORT_NOP: return "NOP";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
  }
  return "unknown";
}

int mtu_bytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
  }
  return 0;
}

ibv_mtu mtu_enum(uint32_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return IBV_MTU_1024;
  }
}

double port_rate_gbps(const ibv_port_attr& pa) {
  int width = 0;
  switch (pa.active_width) {
    case 1: width = 1; break;
    case 2: width = 4; break;
    case 4: width = 8; break;
    case 8: width = 12; break;
    case 16: width = 2; break;
    default: width = 0;
  }
  double lane = 0;
  switch (pa.active_speed) {
    case 1: lane = 2.5; break;
    case 2: lane = 5.0; break;
    case 4: case 8: lane = 10.0; break;
    case 16: lane = 14.0; break;
    case 32: lane = 25.0; break;
    case 64: lane = 50.0; break;
    case 128: lane = 100.0; break;
    default: lane = 0;
  }
  return width * lane;
}

}  // namespace rdmasweep::verbs
