// The verbs stand-in: an LD_PRELOAD library, for tests only (never linked into
// rdmasweep), that makes the RDMA device beneath (rxe0, siw0) present another NIC's
// capabilities and limits from a profile (tests/support/verbs-profiles/). With
// RDMASWEEP_STANDIN_PROFILE unset it passes everything through.
//
// What it does, so a program meets the profiled NIC's limits where the real one
// would meet them:
//  - ibv_query_device(_ex)/ibv_query_port report min(profile, device) for each limit,
//    and the profile's capabilities (atomics, link layer, transport);
//  - creating a QP, CQ, SRQ or MR past a limit fails as the real device fails it
//    (EINVAL; RC or UD on a device without them: EOPNOTSUPP), and so does moving a
//    QP to RTR/RTS with more reads in flight or a larger path MTU than it has;
//  - READs and atomics in flight past what the *peer's* QP accepts (its
//    max_dest_rd_atomic, published at its RTR in RDMASWEEP_STANDIN_DIR, default
//    /tmp/rdmasweep-standin, so both ends of one host see each other) complete with
//    IBV_WC_REM_INV_REQ_ERR and the QP goes to the error state, as a responder's NAK
//    does on a NIC; a READ counts from its post until its completion is polled;
//  - counters = no hides the port's hw_counters and counters in sysfs.
// The datapath is hooked through the context's ops (ibv_post_send and ibv_poll_cq are
// inline calls through them); the ibv_wr_* API is not hooked.
// With RDMASWEEP_STANDIN_DEVICE=null there is no device beneath: the null device
// (null_device.hpp) serves every call, with the profile's limits.
#include <dirent.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>

#include "null_device.hpp"
#include "profile.hpp"

namespace {

[[noreturn]] void fatal(const std::string& what) {
  std::fprintf(stderr, "verbs stand-in: %s\n", what.c_str());
  std::fflush(stderr);
  _exit(2);
}

template <class F>
F next(const char* name, const char* version) {
  void* p = dlvsym(RTLD_NEXT, name, version);
  if (p == nullptr) p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) fatal(std::string("no ") + name + " in the libraries beneath (is libibverbs loaded?)");
  return reinterpret_cast<F>(p);
}

struct Config {
  bool active = false;
  standin::Profile profile;
  std::string registry;
};

const Config& config() {
  static const Config made = [] {
    Config c;
    const char* name = std::getenv("RDMASWEEP_STANDIN_PROFILE");
    if (name == nullptr || *name == '\0') return c;
    const char* dir = std::getenv("RDMASWEEP_STANDIN_PROFILES");
    try {
      c.profile = standin::Profile::load(standin::Profile::resolve(name, dir ? dir : STANDIN_PROFILE_DIR));
    } catch (const std::exception& e) {
      fatal(e.what());
    }
    const char* reg = std::getenv("RDMASWEEP_STANDIN_DIR");
    c.registry = reg && *reg ? reg : "/tmp/rdmasweep-standin";
    mkdir(c.registry.c_str(), 01777);
    c.active = true;
    return c;
  }();
  return made;
}
const standin::Profile& prof() { return config().profile; }
bool active() { return config().active; }

// A limit: the lower of the profile's and the device's own.
template <class T>
void lower(T& field, const char* key) {
  if (auto v = prof().number(key); v && *v < static_cast<uint64_t>(field)) field = static_cast<T>(*v);
}
uint64_t limit_of(const char* key, uint64_t device) { return std::min(device, prof().number(key).value_or(device)); }

int atomic_rank(const std::string& s) { return s == "none" ? IBV_ATOMIC_NONE : s == "hca" ? IBV_ATOMIC_HCA : IBV_ATOMIC_GLOB; }

ibv_mtu mtu_enum(uint64_t bytes) {
  ibv_mtu m = IBV_MTU_256;
  for (uint64_t b = 512; b <= bytes && m < IBV_MTU_4096; b *= 2) m = static_cast<ibv_mtu>(m + 1);
  return m;
}

void apply(ibv_device_attr& a) {
  lower(a.max_mr_size, "max_mr_size");
  lower(a.max_qp, "max_qp");
  lower(a.max_qp_wr, "max_qp_wr");
  lower(a.max_sge, "max_sge");
  lower(a.max_sge_rd, "max_sge_rd");
  lower(a.max_cq, "max_cq");
  lower(a.max_cqe, "max_cqe");
  lower(a.max_mr, "max_mr");
  lower(a.max_pd, "max_pd");
  lower(a.max_qp_rd_atom, "max_qp_rd_atom");
  lower(a.max_qp_init_rd_atom, "max_qp_init_rd_atom");
  lower(a.max_res_rd_atom, "max_res_rd_atom");
  lower(a.max_srq, "max_srq");
  lower(a.max_srq_wr, "max_srq_wr");
  lower(a.max_srq_sge, "max_srq_sge");
  lower(a.max_ah, "max_ah");
  lower(a.max_mcast_grp, "max_mcast_grp");
  if (auto v = prof().text("atomic_cap"); v && atomic_rank(*v) < a.atomic_cap)
    a.atomic_cap = static_cast<ibv_atomic_cap>(atomic_rank(*v));
  if (auto v = prof().number("vendor_id")) a.vendor_id = static_cast<uint32_t>(*v);
  if (auto v = prof().number("vendor_part_id")) a.vendor_part_id = static_cast<uint32_t>(*v);
  if (auto v = prof().number("hw_ver")) a.hw_ver = static_cast<uint32_t>(*v);
  if (auto v = prof().text("fw_ver")) std::snprintf(a.fw_ver, sizeof a.fw_ver, "%s", v->c_str());
}

void apply(ibv_port_attr& p) {
  if (auto v = prof().number("active_mtu"); v && mtu_enum(*v) < p.active_mtu) p.active_mtu = mtu_enum(*v);
  if (auto v = prof().number("max_mtu"); v && mtu_enum(*v) < p.max_mtu) p.max_mtu = mtu_enum(*v);
  lower(p.gid_tbl_len, "gid_tbl_len");
  lower(p.max_msg_sz, "max_msg_sz");
  if (auto v = prof().text("link_layer"))
    p.link_layer = *v == "ethernet" ? IBV_LINK_LAYER_ETHERNET : *v == "infiniband" ? IBV_LINK_LAYER_INFINIBAND
                                                                                    : IBV_LINK_LAYER_UNSPECIFIED;
}

// The profile's transport over the device beneath: only what keeps its addressing.
void retype(ibv_device* d) {
  auto t = prof().text("transport");
  if (!t) return;
  if (*t == "unspecified") {  // EFA-like: neither InfiniBand/RoCE nor iWARP
    d->transport_type = IBV_TRANSPORT_UNSPECIFIED;
    d->node_type = IBV_NODE_UNSPECIFIED;
    return;
  }
  const bool iwarp = d->transport_type == IBV_TRANSPORT_IWARP;
  if ((*t == "iwarp") != iwarp)
    fatal("profile " + prof().name() + " is " + *t + ", but the device beneath, " + d->name + ", is " +
          (iwarp ? "iWARP" : "InfiniBand/RoCE") + ": give it a profile of its own kind");
}

// --- per-QP state: the reads in flight against the peer's limit -------------------
struct QpState {
  ibv_qp* qp = nullptr;
  int max_rd_atomic = 0;      // this QP's, at RTS
  std::string remote;         // the peer QP's registry key, at RTR
  int remote_limit = -2;      // the peer's max_dest_rd_atomic; -2 not looked up, -1 unknown
  uint64_t posted = 0, done = 0;  // READs/atomics posted, and completed as far as polled
  std::deque<uint64_t> signaled;  // `posted` as each signaled WR left, in order
  bool failed = false;
  bool sig_all = false;       // created with sq_sig_all: every WR signaled
};
std::mutex mu;
std::unordered_map<uint32_t, QpState> qps;                 // by qp_num
std::unordered_map<ibv_cq*, std::deque<ibv_wc>> injected;  // completions made here, polled first
int live_qps = 0;

std::string gid_key(const ibv_gid& g, uint32_t qpn) {
  char s[48];
  for (int i = 0; i < 16; ++i) std::snprintf(s + 2 * i, 3, "%02x", g.raw[i]);
  return std::string(s) + "-" + std::to_string(qpn);
}

bool fetches(ibv_wr_opcode op) {
  return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

ibv_wc made(const ibv_send_wr& wr, uint32_t qpn, ibv_wc_status st) {
  ibv_wc wc{};
  wc.wr_id = wr.wr_id;
  wc.status = st;
  wc.opcode = wr.opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
              : wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP
                                                        : IBV_WC_FETCH_ADD;
  wc.qp_num = qpn;
  return wc;
}

// --- the context's ops, kept from the first device opened ---------------------------
struct Ops {
  decltype(ibv_context_ops::post_send) post_send = nullptr;
  decltype(ibv_context_ops::poll_cq) poll_cq = nullptr;
  decltype(verbs_context::query_port) query_port = nullptr;
  decltype(verbs_context::query_device_ex) query_device_ex = nullptr;
  decltype(verbs_context::create_qp_ex) create_qp_ex = nullptr;
  decltype(verbs_context::create_cq_ex) create_cq_ex = nullptr;
} orig;

int modify_real(ibv_qp* qp, ibv_qp_attr* a, int mask) {
  static auto real = next<int (*)(ibv_qp*, ibv_qp_attr*, int)>("ibv_modify_qp", "IBVERBS_1.1");
  return real(qp, a, mask);
}

int hooked_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  const bool no_atomics = prof().text("atomic_cap").value_or("") == "none";
  std::unique_lock<std::mutex> lock(mu);
  auto it = qps.find(qp->qp_num);
  if (it == qps.end()) {
    lock.unlock();
    return orig.post_send(qp, wr, bad);
  }
  QpState& s = it->second;
  for (ibv_send_wr* w = wr; w != nullptr; w = w->next) {
    if (no_atomics && (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)) {
      *bad = w;
      return EOPNOTSUPP;
    }
  }
  // Post WR by WR: one past the peer's limit stops the list there.
  for (ibv_send_wr* w = wr; w != nullptr; w = w->next) {
    if (fetches(w->opcode) && !s.failed) {
      if (s.remote_limit == -2) {
        std::ifstream in(config().registry + "/" + s.remote);
        if (!(in >> s.remote_limit)) s.remote_limit = -1;
      }
      // On the wire: no more than this QP's own max_rd_atomic (the NIC holds back the
      // rest); past the peer's max_dest_rd_atomic the peer NAKs the excess READ: it
      // completes in error, the QP goes to ERROR and flushes the rest.
      uint64_t on_wire = s.posted - s.done + 1;
      if (s.max_rd_atomic > 0) on_wire = std::min<uint64_t>(on_wire, static_cast<uint64_t>(s.max_rd_atomic));
      if (s.remote_limit >= 0 && on_wire > static_cast<uint64_t>(s.remote_limit)) {
        s.failed = true;
        injected[qp->send_cq].push_back(made(*w, qp->qp_num, IBV_WC_REM_INV_REQ_ERR));
        for (ibv_send_wr* r = w->next; r != nullptr; r = r->next)
          injected[qp->send_cq].push_back(made(*r, qp->qp_num, IBV_WC_WR_FLUSH_ERR));
        ibv_qp_attr err{};
        err.qp_state = IBV_QPS_ERR;
        modify_real(qp, &err, IBV_QP_STATE);
        return 0;
      }
      ++s.posted;
    }
    ibv_send_wr* rest = w->next;
    w->next = nullptr;
    int rc = orig.post_send(qp, w, bad);
    w->next = rest;
    if (rc != 0) return rc;
    if (!s.failed && ((w->send_flags & IBV_SEND_SIGNALED) || s.sig_all)) s.signaled.push_back(s.posted);
  }
  return 0;
}

int hooked_poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  int got = 0;
  std::unique_lock<std::mutex> lock(mu);
  if (auto it = injected.find(cq); it != injected.end()) {
    while (got < n && !it->second.empty()) {
      wc[got++] = it->second.front();
      it->second.pop_front();
    }
    if (it->second.empty()) injected.erase(it);
  }
  lock.unlock();
  if (got == n) return got;
  int rc = orig.poll_cq(cq, n - got, wc + got);
  if (rc < 0) return got > 0 ? got : rc;
  lock.lock();
  for (int i = got; i < got + rc; ++i) {
    auto q = qps.find(wc[i].qp_num);
    if (q == qps.end() || q->second.failed) continue;
    if (wc[i].status != IBV_WC_SUCCESS) {
      q->second.failed = true;  // the QP is in error: nothing left to count
    } else if (!(wc[i].opcode & IBV_WC_RECV) && !q->second.signaled.empty()) {
      q->second.done = q->second.signaled.front();  // a send queue completes in order
      q->second.signaled.pop_front();
    }
  }
  return got + rc;
}

// --- creation checks: errno as the device gives it, nullptr -------------------------
bool qp_refused(ibv_qp_type type, const ibv_qp_cap& cap, bool has_srq) {
  if (!active()) return false;
  auto refuse = [](int e) {
    errno = e;
    return true;
  };
  if (type == IBV_QPT_RC && !prof().yes("rc", true)) return refuse(EOPNOTSUPP);
  if (type == IBV_QPT_UD && !prof().yes("ud", true)) return refuse(EOPNOTSUPP);
  auto over = [](uint64_t v, const char* key) { return prof().number(key) && v > *prof().number(key); };
  if (over(cap.max_send_wr, "max_qp_wr") || (!has_srq && over(cap.max_recv_wr, "max_qp_wr")) ||
      over(cap.max_send_sge, "max_sge") || (!has_srq && over(cap.max_recv_sge, "max_sge")) ||
      over(cap.max_inline_data, "max_inline"))
    return refuse(EINVAL);
  std::lock_guard<std::mutex> l(mu);
  if (prof().number("max_qp") && static_cast<uint64_t>(live_qps) >= *prof().number("max_qp")) return refuse(ENOMEM);
  return false;
}

void created(ibv_qp* qp, int sq_sig_all) {
  if (qp == nullptr || !active()) return;
  std::lock_guard<std::mutex> l(mu);
  ++live_qps;
  if (qp->qp_type != IBV_QPT_RC) return;
  qps[qp->qp_num].qp = qp;
  qps[qp->qp_num].sig_all = sq_sig_all != 0;
}

bool cq_refused(int cqe) {
  if (!active() || static_cast<uint64_t>(cqe) <= limit_of("max_cqe", UINT64_MAX)) return false;
  errno = EINVAL;
  return true;
}

bool mr_refused(size_t length) {
  if (!active() || length <= limit_of("max_mr_size", UINT64_MAX)) return false;
  errno = EINVAL;
  return true;
}

int hooked_query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t size) {
  int rc = orig.query_port(ctx, port, attr, size);
  if (rc == 0) apply(*attr);
  return rc;
}

int hooked_query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* in, ibv_device_attr_ex* attr,
                           size_t size) {
  int rc = orig.query_device_ex(ctx, in, attr, size);
  if (rc == 0) apply(attr->orig_attr);
  return rc;
}

ibv_qp* hooked_create_qp_ex(ibv_context* ctx, ibv_qp_init_attr_ex* a) {
  if (qp_refused(a->qp_type, a->cap, a->srq != nullptr)) return nullptr;
  ibv_qp* qp = orig.create_qp_ex(ctx, a);
  created(qp, a->sq_sig_all);
  return qp;
}

ibv_cq_ex* hooked_create_cq_ex(ibv_context* ctx, ibv_cq_init_attr_ex* a) {
  if (cq_refused(static_cast<int>(a->cqe))) return nullptr;
  return orig.create_cq_ex(ctx, a);
}

void hook(ibv_context* ctx) {
  static std::mutex once;
  std::lock_guard<std::mutex> l(once);
  retype(ctx->device);
  verbs_context* v = verbs_get_ctx(ctx);
  auto keep = [](auto& saved, auto& slot, auto hooked) {
    if (slot == nullptr || slot == hooked) return;
    if (saved != nullptr && saved != slot) fatal("two kinds of device in one process: give each its own process");
    saved = slot;
    slot = hooked;
  };
  keep(orig.post_send, ctx->ops.post_send, &hooked_post_send);
  keep(orig.poll_cq, ctx->ops.poll_cq, &hooked_poll_cq);
  if (v == nullptr) return;
  keep(orig.query_port, v->query_port, &hooked_query_port);
  keep(orig.query_device_ex, v->query_device_ex, &hooked_query_device_ex);
  keep(orig.create_qp_ex, v->create_qp_ex, &hooked_create_qp_ex);
  keep(orig.create_cq_ex, v->create_cq_ex, &hooked_create_cq_ex);
}

bool hidden_counters(const char* path) {
  if (!active() || prof().yes("counters", true) || path == nullptr) return false;
  std::string p = path;
  return p.find("/infiniband/") != std::string::npos && p.find("/ports/") != std::string::npos &&
         (p.find("/hw_counters") != std::string::npos || p.find("/counters") != std::string::npos);
}

}  // namespace

// The profile for the null device (null_device.cpp), which has no device beneath.
const standin::Profile* standin::active_profile() { return active() ? &prof() : nullptr; }

#include "standin_symbols.inc"
