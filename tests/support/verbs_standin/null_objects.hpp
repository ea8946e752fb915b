// The null device's objects, shared by its setup (null_device.cpp) and its datapath
// (null_datapath.cpp). Each embeds the verbs struct the application sees as its first
// member, so the application's pointer is the object's.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace standin::null {

struct Qp;

// One completion as the CQ's ring holds it (32 bytes). `qp` and `sq_pos` retire the
// send queue when it is polled: a signaled WR's completion frees it and every WR
// before it on its QP, as a NIC's does under selective signaling.
struct Cqe {
  uint64_t wr_id;
  Qp* qp;
  uint64_t sq_pos;   // the QP's count of send WRs up to and including this one; 0: a receive
  uint32_t byte_len;
  uint8_t opcode;    // ibv_wc_opcode
  uint8_t status;    // ibv_wc_status
  uint16_t unused;
};

// A CQ: a ring of `capacity` (the cqe asked for, exactly) completions in a power-of-two
// array. One producer (the thread posting to its QPs) and one consumer at a time (the
// poller): `tail` is written by the first, `head` by the second, no lock. A second
// thread posting to its QPs is reported once (null_datapath.cpp: posters_check).
struct Cq {
  ibv_cq_ex cq;  // ibv_cq is its first part (ibv_cq_ex_to_cq is a cast)
  Cqe* ring = nullptr;
  uint32_t mask = 0;
  uint32_t capacity = 0;
  bool armed = false;       // ibv_req_notify_cq: the next completion writes an event
  bool overrun = false;     // a completion found the ring full: the CQ is in error
  void* poster = nullptr;   // the thread posting to its QPs (its thread pointer)
  bool shared_warned = false;
  uint64_t ex_next = 0;     // ibv_start_poll/next_poll: past the entry being read
  int users = 0;            // QPs on it (a CQ in use cannot be destroyed)
  alignas(64) uint64_t tail = 0;
  alignas(64) uint64_t head = 0;
};

// A completion channel: ibv_get_cq_event reads the CQ pointer a completion wrote.
struct Channel {
  ibv_comp_channel ch;
  int write_fd = -1;
};

// The region a QP's last atomic reached, as this process maps it (null_atomics.cpp):
// [lo, hi) in its owner's addresses, `base` where lo is here; null: nothing to change.
struct AtomicTarget {
  uint32_t rkey = 0;
  uint64_t lo = 0, hi = 0;
  char* base = nullptr;
};

// A QP. The fields the datapath reads on every post come first after the verbs struct.
struct Qp {
  ibv_qp_ex qpx;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  uint64_t posted = 0;    // send WRs posted
  uint64_t retired = 0;   // send WRs freed by polled completions (written by the poller)
  uint32_t sq_depth = 0;  // max_send_wr
  uint32_t max_inline = 0;
  uint32_t max_send_sge = 0;
  bool sig_all = false;
  uint8_t wc_op[16];      // ibv_wr_opcode -> ibv_wc_opcode; kNoOp: refused (EINVAL)
  // The ibv_wr_* batch between wr_start and wr_complete.
  uint64_t b_posted = 0, b_tail = 0;
  Cqe* b_cur = nullptr;   // the batch's last WR's staged completion (or a scratch one)
  int b_err = 0;
  Cqe scratch{};
  // Receives: their wr_ids in a ring of rq_depth, flushed when the QP goes to ERR.
  uint64_t* rq = nullptr;
  uint32_t rq_depth = 0;
  uint32_t max_recv_sge = 0;
  uint64_t rq_posted = 0, rq_flushed = 0;
  // What ibv_query_qp answers.
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  bool ex = false;        // created with send_ops_flags: ibv_qp_to_qp_ex answers
  AtomicTarget at;        // the region of its last atomic
  uint64_t b_fetched = 0; // an ibv_wr_* atomic's old value, for its wr_set_sge
  bool b_fetch = false;
};

constexpr uint8_t kNoOp = 0xff;

struct Srq {
  ibv_srq srq;
  uint32_t max_wr = 0, max_sge = 0, limit = 0;
  uint64_t posted = 0;
};

// null0's limits: the profile's, and null0's own defaults where it has none
// (null_device.cpp).
struct Limits {
  ibv_device_attr dev{};
  ibv_port_attr port{};
  uint32_t max_inline = 0;
  bool rc = true, ud = true;
};
const Limits& limits();
// GID `index` of port 1: false for an empty slot.
bool gid_at(uint32_t index, ibv_gid_entry* e);
uint32_t new_handle();

// A verbs creation's result: null with errno `err`, as libibverbs fails one.
template <class T>
T* made(T* p, int err) {
  if (p == nullptr) errno = err;
  return p;
}

// Atomics (null_atomics.cpp): a region registered for remote atomics is published under
// a key of its own (0: it could not be, and atomics to it change nothing); a QP's
// atomic to a region it has not reached before finds it (false: nothing to change,
// and `t` says so for that rkey).
uint32_t publish_atomic_region(void* addr, size_t length, uint64_t iova);
void unpublish_atomic_region(uint32_t key);
bool find_atomic_target(uint32_t rkey, uint64_t addr, AtomicTarget& t);

// The word an atomic changes, or null: the fast path is one compare while the QP's
// atomics stay in the region it last reached.
inline uint64_t* atomic_word(Qp* q, uint32_t rkey, uint64_t addr) {
  AtomicTarget& t = q->at;
  if (__builtin_expect(rkey != t.rkey || addr < t.lo || addr + 8 > t.hi, 0) && !find_atomic_target(rkey, addr, t))
    return nullptr;
  return t.base == nullptr ? nullptr : reinterpret_cast<uint64_t*>(t.base + (addr - t.lo));
}

// A fetch-and-add (`add`) or compare-and-swap on its word, as the responder's NIC does
// it: atomic against every other atomic on this host. Returns the old value.
inline uint64_t apply_atomic(uint64_t* w, bool add, uint64_t compare_add, uint64_t swap) {
  if (add) return __atomic_fetch_add(w, compare_add, __ATOMIC_SEQ_CST);
  __atomic_compare_exchange_n(w, &compare_add, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare_add;  // the word's value: on a failed compare, the exchange wrote it here
}

// The setup of QPs, SRQs and AHs (null_qp.cpp); ibv_create_qp_ex is a context op.
ibv_qp* create_qp_ex(ibv_context* ctx, ibv_qp_init_attr_ex* a);

// RDMASWEEP_STANDIN_NULL_REPORT (null_report.cpp): each QP's send WRs counted, those
// of a QP reset or destroyed kept (its count is zeroed here).
void report_qp_created(Qp* q);
void report_qp_reset(Qp* q, bool destroyed);

// The datapath's entry points (null_datapath.cpp).
void install_context_ops(ibv_context* ctx);
void install_wr_api(Qp* q);
void install_cq_ex(Cq* cq);
// The QP's completions still in `cq` are dropped (its destroy or reset, as mlx5 cleans
// its CQs), and its receives flushed (IBV_WC_WR_FLUSH_ERR) on going to ERR.
void purge(Cq* cq, const Qp* q);
void flush_receives(Qp* q);
// Where a completion found the ring full: the CQ is in error from then on.
void report_overrun(Cq* cq);

}  // namespace standin::null
