// The stand-in's null device (RDMASWEEP_STANDIN_DEVICE=null): one device, null0, with
// no device beneath, whose work requests complete as they are posted and move no data
// but an atomic's word (null_atomics.cpp).
// It measures what a benchmark's own post/poll loop costs per message (perftest's and
// rdmasweep's alike, unmodified), the limit every tool on a NIC shares.
//
// In null mode every verbs call the stand-in takes (standin_symbols.inc,
// null_symbols.cpp) is served here, and the real libibverbs is never called for a null
// object. The datapath (ibv_post_send/recv, ibv_poll_cq, the ibv_wr_* API) goes through
// the context's and the QP's function pointers, as on a NIC (null_datapath.cpp).
//
// What null0 is: the profile's limits and capabilities (RDMASWEEP_STANDIN_PROFILE; a
// key the profile leaves out takes null0's own default, kDefaults in null_device.cpp),
// one RoCE port (ACTIVE; Ethernet unless the profile says InfiniBand) with GID 0 RoCE
// v1 and GID 1 RoCE v2, both ::ffff:127.0.0.1 on `lo`.
// What it does not do: SENDs complete at the sender but never arrive (receives are
// taken and never complete, until their QP goes to the error state and flushes them),
// READs and atomics fetch nothing, so the atomics' end-of-point checks see the target
// untouched; no RDMA-CM (librdmacm finds no device), no iWARP profile, no memory
// windows, flows, DM or XRC. One thread posts to the QPs of a CQ (the CQ is a
// single-producer ring).
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

namespace standin {
class Profile;
// The profile RDMASWEEP_STANDIN_PROFILE names, loaded (standin.cpp), or null.
const Profile* active_profile();
}  // namespace standin

namespace standin::null {

// RDMASWEEP_STANDIN_DEVICE=null (read once; any other value stops the process).
bool on();

ibv_device** get_device_list(int* n);
void free_device_list(ibv_device** list);
ibv_context* open_device(ibv_device* d);
int close_device(ibv_context* ctx);
__be64 device_guid(ibv_device* d);

int query_device(ibv_context* ctx, ibv_device_attr* a);
int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* a, size_t size);
int query_gid(ibv_context* ctx, uint8_t port, int index, ibv_gid* gid);
int query_gid_ex(ibv_context* ctx, uint32_t port, uint32_t index, ibv_gid_entry* e, uint32_t flags, size_t size);
ssize_t query_gid_table(ibv_context* ctx, ibv_gid_entry* e, size_t max, uint32_t flags, size_t size);
int query_gid_type(ibv_context* ctx, uint8_t port, unsigned index, int* type);
int query_pkey(ibv_context* ctx, uint8_t port, int index, __be16* pkey);

ibv_pd* alloc_pd(ibv_context* ctx);
int dealloc_pd(ibv_pd* pd);
ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access);
int dereg_mr(ibv_mr* mr);

ibv_comp_channel* create_comp_channel(ibv_context* ctx);
int destroy_comp_channel(ibv_comp_channel* ch);
ibv_cq* create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch, int vector);
int destroy_cq(ibv_cq* cq);
int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context);
void ack_cq_events(ibv_cq* cq, unsigned n);

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* a);
int modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask);
int query_qp(ibv_qp* qp, ibv_qp_attr* a, int mask, ibv_qp_init_attr* init);
int destroy_qp(ibv_qp* qp);
ibv_qp_ex* qp_to_qp_ex(ibv_qp* qp);

ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* a);
int modify_srq(ibv_srq* srq, ibv_srq_attr* a, int mask);
int query_srq(ibv_srq* srq, ibv_srq_attr* a);
int destroy_srq(ibv_srq* srq);

ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* a);
int destroy_ah(ibv_ah* ah);

int get_async_event(ibv_context* ctx, ibv_async_event* e);

}  // namespace standin::null
