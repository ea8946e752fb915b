// The null device's setup path: null0, its port and GIDs, and its objects' creation,
// checks and teardown (the datapath is null_datapath.cpp). Its limits are the
// profile's; a key the profile leaves out takes kDefaults' value.
#include "null_device.hpp"

#include <endian.h>
#include <fcntl.h>
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "null_objects.hpp"
#include "profile.hpp"

namespace standin::null {

namespace {

[[noreturn]] void fatal(const std::string& what) {
  std::fprintf(stderr, "verbs stand-in: %s\n", what.c_str());
  std::fflush(stderr);
  _exit(2);
}

// null0's own value of each limit a profile may leave out (ConnectX-6 Dx's where its
// profile has one; max_inline is null0's own, no NIC's: no profile has a sourced one).
struct Default {
  const char* key;
  uint64_t value;
};
constexpr Default kDefaults[] = {
    {"max_mr_size", UINT64_MAX}, {"max_qp", 131072},        {"max_qp_wr", 32768},       {"max_sge", 30},
    {"max_sge_rd", 30},          {"max_cq", 16777216},      {"max_cqe", 4194303},       {"max_mr", 16777216},
    {"max_pd", 8388608},         {"max_qp_rd_atom", 16},    {"max_qp_init_rd_atom", 16}, {"max_res_rd_atom", 2097152},
    {"max_srq", 8388608},        {"max_srq_wr", 32767},     {"max_srq_sge", 31},        {"max_ah", 2147483647},
    {"max_inline", 1024},        {"active_mtu", 4096},      {"max_mtu", 4096},          {"gid_tbl_len", 255},
    {"max_msg_sz", 0x40000000},
};

uint64_t value(const char* key) {
  const Profile* p = active_profile();
  if (p != nullptr)
    if (auto v = p->number(key)) return *v;
  for (const Default& d : kDefaults)
    if (std::strcmp(d.key, key) == 0) return d.value;
  fatal(std::string("null device: no default for ") + key);
}
int as_int(const char* key) { return static_cast<int>(std::min<uint64_t>(value(key), INT32_MAX)); }
std::string text(const char* key, const char* otherwise) {
  const Profile* p = active_profile();
  return p != nullptr ? p->text(key).value_or(otherwise) : otherwise;
}
bool yes(const char* key) { return active_profile() == nullptr || active_profile()->yes(key, true); }

ibv_mtu mtu_enum(uint64_t bytes) {
  ibv_mtu m = IBV_MTU_256;
  for (uint64_t b = 512; b <= bytes && m < IBV_MTU_4096; b *= 2) m = static_cast<ibv_mtu>(m + 1);
  return m;
}


}  // namespace

const Limits& limits() {
  static const Limits made = [] {
    Limits l;
    ibv_device_attr& a = l.dev;
    std::snprintf(a.fw_ver, sizeof a.fw_ver, "%s", text("fw_ver", "null").c_str());
    a.node_guid = a.sys_image_guid = htobe64(0x02000000000000aaULL);
    a.max_mr_size = value("max_mr_size");
    a.page_size_cap = ~uint64_t{0xfff};
    const auto identity = [](const char* key) {  // the profile's, or 0: no vendor's
      const Profile* p = active_profile();
      return static_cast<uint32_t>(p != nullptr ? p->number(key).value_or(0) : 0);
    };
    a.vendor_id = identity("vendor_id");
    a.vendor_part_id = identity("vendor_part_id");
    a.hw_ver = identity("hw_ver");
    a.max_qp = as_int("max_qp");
    a.max_qp_wr = as_int("max_qp_wr");
    a.device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_PORT_ACTIVE_EVENT;
    a.max_sge = as_int("max_sge");
    a.max_sge_rd = as_int("max_sge_rd");
    a.max_cq = as_int("max_cq");
    a.max_cqe = as_int("max_cqe");
    a.max_mr = as_int("max_mr");
    a.max_pd = as_int("max_pd");
    a.max_qp_rd_atom = as_int("max_qp_rd_atom");
    a.max_res_rd_atom = as_int("max_res_rd_atom");
    a.max_qp_init_rd_atom = as_int("max_qp_init_rd_atom");
    const std::string atomic = text("atomic_cap", "hca");
    a.atomic_cap = atomic == "none" ? IBV_ATOMIC_NONE : atomic == "glob" ? IBV_ATOMIC_GLOB : IBV_ATOMIC_HCA;
    a.max_mcast_grp = 0;  // null0 joins no group (whatever the profile says): nothing arrives
    a.max_ah = as_int("max_ah");
    a.max_srq = as_int("max_srq");
    a.max_srq_wr = as_int("max_srq_wr");
    a.max_srq_sge = as_int("max_srq_sge");
    a.max_pkeys = 1;
    a.local_ca_ack_delay = 16;
    a.phys_port_cnt = 1;

    ibv_port_attr& p = l.port;
    const std::string link = text("link_layer", "ethernet");
    const bool ib = link == "infiniband", eth = link == "ethernet";
    p.state = IBV_PORT_ACTIVE;
    p.max_mtu = mtu_enum(value("max_mtu"));
    p.active_mtu = mtu_enum(value("active_mtu"));
    p.gid_tbl_len = as_int("gid_tbl_len");
    p.port_cap_flags = eth ? IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS : IBV_PORT_CM_SUP;
    p.max_msg_sz = static_cast<uint32_t>(std::min<uint64_t>(value("max_msg_sz"), UINT32_MAX));
    p.pkey_tbl_len = 1;
    p.lid = p.sm_lid = ib ? 1 : 0;
    p.max_vl_num = 1;
    p.active_width = 2;   // 4X
    p.active_speed = 32;  // 25 Gb/s a lane: 100 Gb/s
    p.phys_state = 5;     // LinkUp
    p.link_layer = ib ? IBV_LINK_LAYER_INFINIBAND : eth ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_UNSPECIFIED;
    if (p.gid_tbl_len < (eth ? 2 : 1))
      fatal("null device: gid_tbl_len " + std::to_string(p.gid_tbl_len) + " has no room for null0's GIDs (" +
            (eth ? "GID 0 RoCE v1, GID 1 RoCE v2)" : "GID 0)"));
    l.max_inline = static_cast<uint32_t>(value("max_inline"));
    l.rc = yes("rc");
    l.ud = yes("ud");
    return l;
  }();
  return made;
}

namespace {

// --- the device and its contexts ------------------------------------------------------

ibv_device* the_device() {
  static ibv_device* d = [] {
    const std::string transport = text("transport", "roce");
    if (transport == "iwarp")
      fatal("null device: an iWARP profile needs RDMA-CM, which null0 has not: give it a RoCE or InfiniBand profile");
    auto* dev = new ibv_device{};
    const bool none = transport == "unspecified";
    dev->node_type = none ? IBV_NODE_UNSPECIFIED : IBV_NODE_CA;
    dev->transport_type = none ? IBV_TRANSPORT_UNSPECIFIED : IBV_TRANSPORT_IB;
    std::snprintf(dev->name, sizeof dev->name, "null0");
    std::snprintf(dev->dev_name, sizeof dev->dev_name, "uverbs_null0");
    std::snprintf(dev->dev_path, sizeof dev->dev_path, "/sys/class/infiniband_verbs/uverbs_null0");
    std::snprintf(dev->ibdev_path, sizeof dev->ibdev_path, "/sys/class/infiniband/null0");
    return dev;
  }();
  return d;
}

// A context: a whole verbs_context (sz set, abi_compat extended) so that verbs.h's
// inline helpers find its ops; the async pipe's write end beside it.
struct Context {
  int async_write = -1;
  verbs_context v;
};
Context* context_of(ibv_context* ctx) {
  return reinterpret_cast<Context*>(reinterpret_cast<char*>(verbs_get_ctx(ctx)) - offsetof(Context, v));
}

std::atomic<uint32_t> next_key{0x1000};
std::atomic<uint32_t> next_handle{1};

int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input*, ibv_device_attr_ex* a, size_t size) {
  std::memset(a, 0, size);
  return query_device(ctx, &a->orig_attr);
}

}  // namespace

uint32_t new_handle() { return next_handle++; }

bool on() {
  static const bool is = [] {
    const char* d = std::getenv("RDMASWEEP_STANDIN_DEVICE");
    if (d == nullptr || *d == '\0') return false;
    if (std::strcmp(d, "null") != 0)
      fatal(std::string("RDMASWEEP_STANDIN_DEVICE=") + d + ": the stand-in's only device is 'null' (or unset)");
    (void)limits();  // a bad profile stops the process here, not mid-run
    return true;
  }();
  return is;
}

ibv_device** get_device_list(int* n) {
  auto** l = static_cast<ibv_device**>(std::calloc(2, sizeof(ibv_device*)));
  if (l == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  l[0] = the_device();
  if (n != nullptr) *n = 1;
  return l;
}

void free_device_list(ibv_device** list) { std::free(list); }

__be64 device_guid(ibv_device*) { return limits().dev.node_guid; }

ibv_context* open_device(ibv_device* d) {
  if (d != the_device()) return made<ibv_context>(nullptr, ENODEV);
  auto* c = new Context{};
  int async[2];
  if (pipe2(async, O_CLOEXEC) != 0) {
    delete c;
    return nullptr;
  }
  c->async_write = async[1];
  verbs_context& v = c->v;
  v.sz = sizeof(verbs_context);
  v.query_port = query_port;
  v.query_device_ex = query_device_ex;
  v.create_qp_ex = create_qp_ex;
  ibv_context& ctx = v.context;
  ctx.device = d;
  ctx.cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  ctx.async_fd = async[0];
  ctx.num_comp_vectors = 1;
  ctx.abi_compat = __VERBS_ABI_IS_EXTENDED;
  pthread_mutex_init(&ctx.mutex, nullptr);
  install_context_ops(&ctx);
  return &ctx;
}

int close_device(ibv_context* ctx) {
  Context* c = context_of(ctx);
  close(ctx->cmd_fd);
  close(ctx->async_fd);
  close(c->async_write);
  pthread_mutex_destroy(&ctx->mutex);
  delete c;
  return 0;
}

int query_device(ibv_context*, ibv_device_attr* a) {
  *a = limits().dev;
  return 0;
}

int query_port(ibv_context*, uint8_t port, ibv_port_attr* a, size_t size) {
  if (port != 1) return EINVAL;
  std::memset(a, 0, size);
  std::memcpy(a, &limits().port, std::min(size, sizeof(ibv_port_attr)));
  return 0;
}

// GID 0 RoCE v1 and GID 1 RoCE v2, both ::ffff:127.0.0.1 on `lo` (a port that is not
// Ethernet: GID 0 only, fe80::1); the rest of the table is empty.
bool gid_at(uint32_t index, ibv_gid_entry* e) {
  const bool ib = limits().port.link_layer != IBV_LINK_LAYER_ETHERNET;
  if (index > (ib ? 0u : 1u)) return false;
  *e = ibv_gid_entry{};
  if (ib) {
    e->gid.raw[0] = 0xfe;
    e->gid.raw[1] = 0x80;
    e->gid.raw[15] = 1;
    e->gid_type = IBV_GID_TYPE_IB;
  } else {
    e->gid.raw[10] = e->gid.raw[11] = 0xff;
    e->gid.raw[12] = 127;
    e->gid.raw[15] = 1;
    e->gid_type = index == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
    e->ndev_ifindex = if_nametoindex("lo");
  }
  e->gid_index = index;
  e->port_num = 1;
  return true;
}

int query_gid(ibv_context*, uint8_t port, int index, ibv_gid* gid) {
  if (port != 1 || index < 0 || index >= limits().port.gid_tbl_len) return -1;
  ibv_gid_entry e{};
  *gid = gid_at(static_cast<uint32_t>(index), &e) ? e.gid : ibv_gid{};  // an empty slot reads as zeros
  return 0;
}

int query_gid_ex(ibv_context*, uint32_t port, uint32_t index, ibv_gid_entry* e, uint32_t flags, size_t size) {
  if (flags != 0 || port != 1 || index >= static_cast<uint32_t>(limits().port.gid_tbl_len)) return EINVAL;
  ibv_gid_entry g{};
  if (!gid_at(index, &g)) return ENODATA;
  std::memset(e, 0, size);
  std::memcpy(e, &g, std::min(size, sizeof g));
  return 0;
}

ssize_t query_gid_table(ibv_context*, ibv_gid_entry* e, size_t max, uint32_t flags, size_t size) {
  const size_t valid = limits().port.link_layer == IBV_LINK_LAYER_ETHERNET ? 2 : 1;
  if (flags != 0 || size < sizeof(ibv_gid_entry) || max < valid) return -EINVAL;
  for (size_t n = 0; n < valid; ++n) {
    ibv_gid_entry g{};
    gid_at(static_cast<uint32_t>(n), &g);
    std::memset(reinterpret_cast<char*>(e) + n * size, 0, size);
    std::memcpy(reinterpret_cast<char*>(e) + n * size, &g, sizeof g);
  }
  return static_cast<ssize_t>(valid);
}

int query_gid_type(ibv_context*, uint8_t port, unsigned index, int* type) {
  ibv_gid_entry e{};
  if (port != 1 || index >= static_cast<unsigned>(limits().port.gid_tbl_len)) return -1;
  *type = gid_at(index, &e) && e.gid_type == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
  return 0;
}

int query_pkey(ibv_context*, uint8_t port, int index, __be16* pkey) {
  if (port != 1 || index != 0) return -1;
  *pkey = htobe16(0xffff);
  return 0;
}

ibv_pd* alloc_pd(ibv_context* ctx) { return new ibv_pd{ctx, new_handle()}; }
int dealloc_pd(ibv_pd* pd) {
  delete pd;
  return 0;
}

// A region for remote atomics gets a key that names its shared pages (null_atomics.cpp).
ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access) {
  const bool remote_writes = access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
  if (length > limits().dev.max_mr_size || (remote_writes && !(access & IBV_ACCESS_LOCAL_WRITE)))
    return made<ibv_mr>(nullptr, EINVAL);
  uint32_t key = access & IBV_ACCESS_REMOTE_ATOMIC ? publish_atomic_region(addr, length, iova) : 0;
  if (key == 0) key = next_key++;
  return new ibv_mr{pd->context, pd, addr, length, next_handle++, key, key};
}
int dereg_mr(ibv_mr* mr) {
  if (mr->rkey & 0x80000000u) unpublish_atomic_region(mr->rkey);
  delete mr;
  return 0;
}

ibv_comp_channel* create_comp_channel(ibv_context* ctx) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  auto* c = new Channel{};
  c->ch = ibv_comp_channel{ctx, fds[0], 0};
  c->write_fd = fds[1];
  return &c->ch;
}

int destroy_comp_channel(ibv_comp_channel* ch) {
  if (ch->refcnt != 0) return EBUSY;
  auto* c = reinterpret_cast<Channel*>(ch);
  close(c->ch.fd);
  close(c->write_fd);
  delete c;
  return 0;
}

ibv_cq* create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch, int vector) {
  if (cqe < 1 || cqe > limits().dev.max_cqe || vector < 0 || vector >= ctx->num_comp_vectors)
    return made<ibv_cq>(nullptr, EINVAL);
  uint32_t size = 1;
  while (size < static_cast<uint32_t>(cqe)) size *= 2;
  auto* cq = new (std::nothrow) Cq{};
  Cqe* ring = static_cast<Cqe*>(std::calloc(size, sizeof(Cqe)));
  if (cq == nullptr || ring == nullptr) {
    delete cq;
    std::free(ring);
    return made<ibv_cq>(nullptr, ENOMEM);
  }
  cq->ring = ring;
  cq->mask = size - 1;
  cq->capacity = static_cast<uint32_t>(cqe);
  ibv_cq_ex& x = cq->cq;
  x.context = ctx;
  x.channel = ch;
  x.cq_context = cq_context;
  x.handle = new_handle();
  x.cqe = cqe;
  pthread_mutex_init(&x.mutex, nullptr);
  pthread_cond_init(&x.cond, nullptr);
  install_cq_ex(cq);
  if (ch != nullptr) ++ch->refcnt;
  return ibv_cq_ex_to_cq(&cq->cq);
}

int destroy_cq(ibv_cq* ibcq) {
  Cq* cq = reinterpret_cast<Cq*>(ibcq);
  if (cq->users != 0) return EBUSY;
  if (ibcq->channel != nullptr) --ibcq->channel->refcnt;
  pthread_mutex_destroy(&ibcq->mutex);
  pthread_cond_destroy(&ibcq->cond);
  std::free(cq->ring);
  delete cq;
  return 0;
}

int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context) {
  ibv_cq* p = nullptr;
  if (read(ch->fd, &p, sizeof p) != sizeof p) return -1;
  *cq = p;
  *cq_context = p->cq_context;
  return 0;
}

void ack_cq_events(ibv_cq* cq, unsigned n) { cq->comp_events_completed += n; }


// No event ever comes (a NIC's port stays up, its QPs never fail): this waits, as
// ibv_get_async_event waits on a NIC, until the context is closed.
int get_async_event(ibv_context* ctx, ibv_async_event*) {
  char c;
  while (read(ctx->async_fd, &c, 1) < 0 && errno == EINTR) {
  }
  return -1;
}

}  // namespace standin::null
