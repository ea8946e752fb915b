// The exported verbs only the null device takes (standin_symbols.inc has those the
// profile stand-in takes too, each routed to null0 first): in null mode null0 serves
// them, otherwise each calls the real one beneath, untouched.
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "null_device.hpp"

#undef ibv_query_port  // verbs.h's inline wrapper: the exported compat function is taken here

namespace {

template <class F>
F real(const char* name, const char* version) {
  void* p = dlvsym(RTLD_NEXT, name, version);
  if (p == nullptr) p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    std::fprintf(stderr, "verbs stand-in: no %s in the libraries beneath (is libibverbs loaded?)\n", name);
    std::_Exit(2);
  }
  return reinterpret_cast<F>(p);
}

// NAME(ARGS): null0's answer when null mode is on, else the real NAME@VERSION's.
#define PASS(ret, name, version, params, args, null_answer)                                  \
  ret name params {                                                                          \
    if (standin::null::on()) return null_answer;                                             \
    static auto next = real<ret(*) params>(#name, version);                                  \
    return next args;                                                                        \
  }

template <class T>
T refused(T value, int err) {
  errno = err;
  return value;
}

}  // namespace

namespace null = standin::null;

extern "C" {

PASS(void, ibv_free_device_list, "IBVERBS_1.1", (ibv_device * *l), (l), null::free_device_list(l))
PASS(const char*, ibv_get_device_name, "IBVERBS_1.1", (ibv_device * d), (d), d->name)
PASS(__be64, ibv_get_device_guid, "IBVERBS_1.1", (ibv_device * d), (d), null::device_guid(d))
PASS(int, ibv_get_device_index, "IBVERBS_1.9", (ibv_device * d), (d), -1)  // no kernel device: no index
PASS(int, ibv_close_device, "IBVERBS_1.1", (ibv_context * c), (c), null::close_device(c))
PASS(int, ibv_query_port, "IBVERBS_1.1", (ibv_context * c, uint8_t p, _compat_ibv_port_attr* a), (c, p, a),
     null::query_port(c, p, reinterpret_cast<ibv_port_attr*>(a), sizeof(ibv_port_attr)))
// rdma-core's private helper (ibv_devinfo -v prints each GID's type with it); the enum
// is ibv_gid_type_sysfs: 0 IB/RoCE v1, 1 RoCE v2.
PASS(int, ibv_query_gid_type, "IBVERBS_PRIVATE_34", (ibv_context * c, uint8_t p, unsigned i, int* t), (c, p, i, t),
     null::query_gid_type(c, p, i, t))
PASS(int, ibv_query_pkey, "IBVERBS_1.1", (ibv_context * c, uint8_t p, int i, __be16* k), (c, p, i, k),
     null::query_pkey(c, p, i, k))
PASS(int, ibv_get_pkey_index, "IBVERBS_1.5", (ibv_context * c, uint8_t p, __be16 k), (c, p, k),
     k == htobe16(0xffff) ? 0 : -1)
PASS(ibv_pd*, ibv_alloc_pd, "IBVERBS_1.1", (ibv_context * c), (c), null::alloc_pd(c))
PASS(int, ibv_dealloc_pd, "IBVERBS_1.1", (ibv_pd * pd), (pd), null::dealloc_pd(pd))
PASS(int, ibv_dereg_mr, "IBVERBS_1.1", (ibv_mr * mr), (mr), null::dereg_mr(mr))
PASS(ibv_mr*, ibv_reg_dmabuf_mr, "IBVERBS_1.12", (ibv_pd * pd, uint64_t o, size_t l, uint64_t v, int fd, int a),
     (pd, o, l, v, fd, a), refused<ibv_mr*>(nullptr, EOPNOTSUPP))
PASS(int, ibv_rereg_mr, "IBVERBS_1.1", (ibv_mr * mr, int f, ibv_pd* pd, void* a, size_t l, int x),
     (mr, f, pd, a, l, x), IBV_REREG_MR_ERR_INPUT)
PASS(ibv_comp_channel*, ibv_create_comp_channel, "IBVERBS_1.0", (ibv_context * c), (c), null::create_comp_channel(c))
PASS(int, ibv_destroy_comp_channel, "IBVERBS_1.0", (ibv_comp_channel * ch), (ch), null::destroy_comp_channel(ch))
PASS(int, ibv_destroy_cq, "IBVERBS_1.1", (ibv_cq * cq), (cq), null::destroy_cq(cq))
PASS(int, ibv_resize_cq, "IBVERBS_1.1", (ibv_cq * cq, int n), (cq, n), EOPNOTSUPP)
PASS(int, ibv_get_cq_event, "IBVERBS_1.1", (ibv_comp_channel * ch, ibv_cq** cq, void** x), (ch, cq, x),
     null::get_cq_event(ch, cq, x))
PASS(void, ibv_ack_cq_events, "IBVERBS_1.1", (ibv_cq * cq, unsigned n), (cq, n), null::ack_cq_events(cq, n))
PASS(int, ibv_query_qp, "IBVERBS_1.1", (ibv_qp * qp, ibv_qp_attr* a, int m, ibv_qp_init_attr* i), (qp, a, m, i),
     null::query_qp(qp, a, m, i))
PASS(ibv_qp_ex*, ibv_qp_to_qp_ex, "IBVERBS_1.6", (ibv_qp * qp), (qp), null::qp_to_qp_ex(qp))
PASS(int, ibv_modify_srq, "IBVERBS_1.1", (ibv_srq * s, ibv_srq_attr* a, int m), (s, a, m), null::modify_srq(s, a, m))
PASS(int, ibv_query_srq, "IBVERBS_1.1", (ibv_srq * s, ibv_srq_attr* a), (s, a), null::query_srq(s, a))
PASS(int, ibv_destroy_srq, "IBVERBS_1.1", (ibv_srq * s), (s), null::destroy_srq(s))
PASS(ibv_ah*, ibv_create_ah, "IBVERBS_1.1", (ibv_pd * pd, ibv_ah_attr* a), (pd, a), null::create_ah(pd, a))
PASS(int, ibv_destroy_ah, "IBVERBS_1.1", (ibv_ah * ah), (ah), null::destroy_ah(ah))
// A receive never completes on null0, so no WC to make an address from.
PASS(ibv_ah*, ibv_create_ah_from_wc, "IBVERBS_1.1", (ibv_pd * pd, ibv_wc* wc, ibv_grh* g, uint8_t p), (pd, wc, g, p),
     refused<ibv_ah*>(nullptr, EOPNOTSUPP))
PASS(int, ibv_init_ah_from_wc, "IBVERBS_1.1", (ibv_context * c, uint8_t p, ibv_wc* wc, ibv_grh* g, ibv_ah_attr* a),
     (c, p, wc, g, a), EOPNOTSUPP)
PASS(int, ibv_attach_mcast, "IBVERBS_1.1", (ibv_qp * qp, const ibv_gid* g, uint16_t l), (qp, g, l), EOPNOTSUPP)
PASS(int, ibv_detach_mcast, "IBVERBS_1.1", (ibv_qp * qp, const ibv_gid* g, uint16_t l), (qp, g, l), EOPNOTSUPP)
PASS(int, ibv_fork_init, "IBVERBS_1.1", (void), (), 0)
PASS(int, ibv_get_async_event, "IBVERBS_1.1", (ibv_context * c, ibv_async_event* e), (c, e),
     null::get_async_event(c, e))
PASS(void, ibv_ack_async_event, "IBVERBS_1.1", (ibv_async_event * e), (e), (void)e)

}  // extern "C"
