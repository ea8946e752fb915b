// The null device's datapath: ibv_post_send/ibv_post_recv/ibv_poll_cq (through the
// context's ops), the ibv_wr_* API (through the QP's), and ibv_cq_ex polling. A send WR
// completes as it is posted: a signaled one (or any, with sq_sig_all) puts its
// completion on the send CQ's ring at once, an unsignaled one none. Its send-queue
// slot stays taken until a later signaled completion of its QP is polled, so a post
// past max_send_wr outstanding fails with ENOMEM, as on a NIC. No lock, no allocation,
// no lookup per WR: this cost is part of what every tool measured on null0 shares.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "null_objects.hpp"

namespace standin::null {

namespace {

inline uint64_t acquire(const uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_ACQUIRE); }
inline void release(uint64_t& v, uint64_t x) { __atomic_store_n(&v, x, __ATOMIC_RELEASE); }

// The verbs struct is each object's first member.
inline Qp* qp_of(ibv_qp* qp) { return reinterpret_cast<Qp*>(qp); }
inline Qp* qp_of(ibv_qp_ex* qp) { return reinterpret_cast<Qp*>(qp); }
inline Cq* cq_of(ibv_cq* cq) { return reinterpret_cast<Cq*>(cq); }
inline Cq* cq_of(ibv_cq_ex* cq) { return reinterpret_cast<Cq*>(cq); }

// The ring at `tail` has no free entry as `head` saw it: the poller may have moved on
// since; if not, the ring is full (an overrun) and there is none.
[[gnu::noinline, gnu::cold]] Cqe* full_ring(Cq* cq, uint64_t tail, uint64_t& head) {
  head = acquire(cq->head);
  if (tail - head < cq->capacity) return &cq->ring[tail & cq->mask];
  report_overrun(cq);
  return nullptr;
}

// The ring's next free entry at `tail`, or null when it is full.
inline Cqe* take_slot(Cq* cq, uint64_t tail, uint64_t& head) {
  if (__builtin_expect(tail - head >= cq->capacity, 0)) return full_ring(cq, tail, head);
  return &cq->ring[tail & cq->mask];
}

// Another thread than the last posts to this CQ's QPs: fine if the last has stopped
// (a hand-over), lost completions if both post at once (the ring has one producer).
[[gnu::noinline, gnu::cold]] void new_poster(Cq* cq, void* me) {
  void* none = nullptr;
  if (__atomic_compare_exchange_n(&cq->poster, &none, me, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  __atomic_store_n(&cq->poster, me, __ATOMIC_RELAXED);
  if (cq->shared_warned) return;
  cq->shared_warned = true;
  std::fprintf(stderr,
               "verbs stand-in: null0: another thread now posts to the QPs of a CQ: null0's CQ is a ring with one "
               "producer, so two threads posting at once lose completions (e.g. rdmasweep --threads N "
               "--cq-scope process): give each thread its own CQ; a hand-over from a thread that has stopped is "
               "fine\n");
}

inline void posters_check(Cq* cq) {
  void* me = __builtin_thread_pointer();
  if (__builtin_expect(cq->poster != me, 0)) new_poster(cq, me);
}

// New completions are in: an armed CQ writes its event to its channel.
inline void publish(Cq* cq, uint64_t tail) {
  release(cq->tail, tail);
  if (__builtin_expect(cq->armed, 0)) {
    cq->armed = false;
    auto* ch = reinterpret_cast<Channel*>(cq->cq.channel);
    ibv_cq* p = ibv_cq_ex_to_cq(&cq->cq);
    if (ch != nullptr && write(ch->write_fd, &p, sizeof p) != sizeof p)
      std::fprintf(stderr, "verbs stand-in: null0: cannot write a completion event\n");
  }
}

inline void fill(ibv_wc& w, const Cqe& e) {
  w.wr_id = e.wr_id;
  w.status = static_cast<ibv_wc_status>(e.status);
  w.opcode = static_cast<ibv_wc_opcode>(e.opcode);
  w.vendor_err = 0;
  w.byte_len = e.byte_len;
  w.imm_data = 0;
  w.qp_num = e.qp->qpx.qp_base.qp_num;
  w.src_qp = 0;
  w.wc_flags = 0;
  w.pkey_index = 0;
  w.slid = 0;
  w.sl = 0;
  w.dlid_path_bits = 0;
}

// A polled send completion frees its WR and every earlier one of its QP.
inline void retire(const Cqe& e) {
  if (e.sq_pos != 0) release(e.qp->retired, e.sq_pos);
}

inline uint32_t length(const ibv_send_wr* wr) {
  uint32_t len = 0;
  for (int i = 0; i < wr->num_sge; ++i) len += wr->sg_list[i].length;
  return len;
}

// Why a send WR cannot be posted (out of the common path's way): 0 if it can.
[[gnu::noinline, gnu::cold]] int refusal(const Qp* q, const ibv_send_wr* wr, uint64_t posted, uint64_t full) {
  const unsigned opcode = static_cast<unsigned>(wr->opcode);
  if (opcode >= 16 || q->wc_op[opcode] == kNoOp || static_cast<uint32_t>(wr->num_sge) > q->max_send_sge) return EINVAL;
  if (posted == full) return ENOMEM;  // max_send_wr outstanding: no slot until a completion is polled
  if ((wr->send_flags & IBV_SEND_INLINE) && length(wr) > q->max_inline) return EINVAL;
  return 0;
}

// An atomic WR's effect on its target, and the old value in its local buffer.
[[gnu::noinline]] void run_atomic(Qp* q, const ibv_send_wr* wr) {
  const auto& a = wr->wr.atomic;
  uint64_t* w = atomic_word(q, a.rkey, a.remote_addr);
  if (w == nullptr) return;
  const uint64_t old = apply_atomic(w, wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD, a.compare_add, a.swap);
  if (wr->num_sge > 0 && wr->sg_list[0].length >= sizeof old)
    std::memcpy(reinterpret_cast<void*>(wr->sg_list[0].addr), &old, sizeof old);
}

int post_send(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad) {
  Qp* q = qp_of(ibqp);
  // RTS posts; ERR takes every WR and flushes it (each one completes, signaled or not).
  const bool flushing = ibqp->state == IBV_QPS_ERR;
  if (__builtin_expect(ibqp->state != IBV_QPS_RTS, 0) && !flushing) {
    *bad = wr;
    return EINVAL;
  }
  Cq* cq = q->scq;
  posters_check(cq);
  uint64_t posted = q->posted;
  const uint64_t full = acquire(q->retired) + q->sq_depth;
  const uint64_t tail0 = cq->tail;
  uint64_t tail = tail0, head = acquire(cq->head);
  const bool every = q->sig_all || flushing;
  const uint8_t status = flushing ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS;
  int rc = 0;
  for (; wr != nullptr; wr = wr->next) {
    const unsigned opcode = static_cast<unsigned>(wr->opcode);
    const unsigned flags = wr->send_flags;
    if (__builtin_expect(opcode >= 16 || q->wc_op[opcode] == kNoOp ||
                             static_cast<uint32_t>(wr->num_sge) > q->max_send_sge || posted == full ||
                             ((flags & IBV_SEND_INLINE) && length(wr) > q->max_inline),
                         0)) {
      rc = refusal(q, wr, posted, full);
      break;
    }
    ++posted;
    if (__builtin_expect(opcode - IBV_WR_ATOMIC_CMP_AND_SWP < 2u, 0) && !flushing) run_atomic(q, wr);
    if (!every && !(flags & IBV_SEND_SIGNALED)) continue;
    if (Cqe* e = take_slot(cq, tail, head)) {
      *e = Cqe{wr->wr_id, q, posted, length(wr), q->wc_op[opcode], status, 0};
      ++tail;
    }
  }
  q->posted = posted;
  if (tail != tail0) publish(cq, tail);
  if (rc != 0) *bad = wr;
  return rc;
}

int post_recv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Qp* q = qp_of(ibqp);
  int rc = 0;
  if (ibqp->srq != nullptr || ibqp->state == IBV_QPS_RESET) rc = EINVAL;
  for (; rc == 0 && wr != nullptr; wr = wr->next) {
    if (static_cast<uint32_t>(wr->num_sge) > q->max_recv_sge) rc = EINVAL;
    else if (q->rq_posted - q->rq_flushed >= q->rq_depth) rc = ENOMEM;  // nothing ever consumes one
    else q->rq[q->rq_posted++ % q->rq_depth] = wr->wr_id;
    if (rc != 0) break;
  }
  if (ibqp->state == IBV_QPS_ERR) flush_receives(q);
  if (rc != 0) *bad = wr;
  return rc;
}

int post_srq_recv(ibv_srq* ibsrq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Srq* s = reinterpret_cast<Srq*>(ibsrq);
  for (; wr != nullptr; wr = wr->next) {
    const int rc = static_cast<uint32_t>(wr->num_sge) > s->max_sge ? EINVAL : s->posted >= s->max_wr ? ENOMEM : 0;
    if (rc != 0) {
      *bad = wr;
      return rc;
    }
    ++s->posted;
  }
  return 0;
}

int poll_cq(ibv_cq* ibcq, int n, ibv_wc* wc) {
  Cq* cq = cq_of(ibcq);
  const uint64_t head = cq->head;
  const uint64_t ready = acquire(cq->tail) - head;
  if (ready == 0) return cq->overrun ? -1 : 0;
  const int k = n <= 0 ? 0 : ready < static_cast<uint64_t>(n) ? static_cast<int>(ready) : n;
  for (int i = 0; i < k; ++i) {
    const Cqe& e = cq->ring[(head + static_cast<uint64_t>(i)) & cq->mask];
    fill(wc[i], e);
    retire(e);
  }
  release(cq->head, head + static_cast<uint64_t>(k));
  return k;
}

int req_notify_cq(ibv_cq* ibcq, int) {
  cq_of(ibcq)->armed = true;
  return 0;
}

// --- the ibv_wr_* API: a batch from wr_start, posted whole by wr_complete ----------

void wr_start(ibv_qp_ex* x) {
  Qp* q = qp_of(x);
  q->b_posted = q->posted;
  posters_check(q->scq);
  q->b_tail = q->scq->tail;
  q->b_cur = &q->scratch;
  q->b_fetch = false;
  q->b_err = x->qp_base.state == IBV_QPS_RTS ? 0 : EINVAL;
}

// A WR of the batch begins: its slot, and its completion staged past the CQ's tail.
inline void begin(ibv_qp_ex* x, ibv_wr_opcode opcode) {
  Qp* q = qp_of(x);
  q->b_cur = &q->scratch;
  if (q->b_err != 0) return;
  if (q->wc_op[opcode] == kNoOp) {
    q->b_err = EINVAL;
    return;
  }
  if (q->b_posted - acquire(q->retired) >= q->sq_depth) {
    q->b_err = ENOMEM;
    return;
  }
  ++q->b_posted;
  if (!(x->wr_flags & IBV_SEND_SIGNALED) && !q->sig_all) return;
  uint64_t head = acquire(q->scq->head);
  if (Cqe* e = take_slot(q->scq, q->b_tail, head)) {
    *e = Cqe{x->wr_id, q, q->b_posted, 0, q->wc_op[opcode], IBV_WC_SUCCESS, 0};
    q->b_cur = e;
    ++q->b_tail;
  }
}

void wr_rdma_write(ibv_qp_ex* x, uint32_t, uint64_t) { begin(x, IBV_WR_RDMA_WRITE); }
void wr_rdma_write_imm(ibv_qp_ex* x, uint32_t, uint64_t, __be32) { begin(x, IBV_WR_RDMA_WRITE_WITH_IMM); }
void wr_rdma_read(ibv_qp_ex* x, uint32_t, uint64_t) { begin(x, IBV_WR_RDMA_READ); }
void wr_send(ibv_qp_ex* x) { begin(x, IBV_WR_SEND); }
void wr_send_imm(ibv_qp_ex* x, __be32) { begin(x, IBV_WR_SEND_WITH_IMM); }
// An atomic takes effect as it is staged; its old value goes to the buffer its
// wr_set_sge names next.
void atomic(ibv_qp_ex* x, bool add, uint32_t rkey, uint64_t addr, uint64_t compare_add, uint64_t swap) {
  begin(x, add ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP);
  Qp* q = qp_of(x);
  q->b_cur->byte_len = 8;
  uint64_t* w = q->b_err == 0 ? atomic_word(q, rkey, addr) : nullptr;
  q->b_fetch = w != nullptr;
  if (w != nullptr) q->b_fetched = apply_atomic(w, add, compare_add, swap);
}
void wr_atomic_fetch_add(ibv_qp_ex* x, uint32_t rkey, uint64_t addr, uint64_t add) {
  atomic(x, true, rkey, addr, add, 0);
}
void wr_atomic_cmp_swp(ibv_qp_ex* x, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
  atomic(x, false, rkey, addr, compare, swap);
}
inline void deliver_fetched(Qp* q, uint64_t addr, uint32_t length) {
  if (__builtin_expect(q->b_fetch, 0) && length >= sizeof q->b_fetched)
    std::memcpy(reinterpret_cast<void*>(addr), &q->b_fetched, sizeof q->b_fetched);
  q->b_fetch = false;
}

// What null0 does not do: the batch fails at wr_complete.
void refuse(ibv_qp_ex* x) {
  Qp* q = qp_of(x);
  if (q->b_err == 0) q->b_err = EOPNOTSUPP;
  q->b_cur = &q->scratch;
}
void wr_local_inv(ibv_qp_ex* x, uint32_t) { refuse(x); }
void wr_bind_mw(ibv_qp_ex* x, ibv_mw*, uint32_t, const ibv_mw_bind_info*) { refuse(x); }
void wr_send_inv(ibv_qp_ex* x, uint32_t) { refuse(x); }
void wr_send_tso(ibv_qp_ex* x, void*, uint16_t, uint16_t) { refuse(x); }
void wr_atomic_write(ibv_qp_ex* x, uint32_t, uint64_t, const void*) { refuse(x); }
void wr_set_xrc_srqn(ibv_qp_ex* x, uint32_t) { refuse(x); }
void wr_set_ud_addr(ibv_qp_ex*, ibv_ah*, uint32_t, uint32_t) {}

void wr_set_sge(ibv_qp_ex* x, uint32_t, uint64_t addr, uint32_t length) {
  Qp* q = qp_of(x);
  q->b_cur->byte_len = length;
  deliver_fetched(q, addr, length);
}
void wr_set_sge_list(ibv_qp_ex* x, size_t n, const ibv_sge* sge) {
  Qp* q = qp_of(x);
  if (n > 0) deliver_fetched(q, sge[0].addr, sge[0].length);
  if (n > q->max_send_sge && q->b_err == 0) q->b_err = EINVAL;
  uint32_t len = 0;
  for (size_t i = 0; i < n; ++i) len += sge[i].length;
  q->b_cur->byte_len = len;
}
void wr_set_inline_data(ibv_qp_ex* x, void*, size_t length) {
  Qp* q = qp_of(x);
  if (length > q->max_inline && q->b_err == 0) q->b_err = EINVAL;
  q->b_cur->byte_len = static_cast<uint32_t>(length);
}
void wr_set_inline_data_list(ibv_qp_ex* x, size_t n, const ibv_data_buf* buf) {
  size_t len = 0;
  for (size_t i = 0; i < n; ++i) len += buf[i].length;
  wr_set_inline_data(x, nullptr, len);
}

int wr_complete(ibv_qp_ex* x) {
  Qp* q = qp_of(x);
  if (q->b_err != 0) return q->b_err;  // nothing of the batch is posted
  q->posted = q->b_posted;
  if (q->b_tail != q->scq->tail) publish(q->scq, q->b_tail);
  return 0;
}

void wr_abort(ibv_qp_ex*) {}

// --- ibv_cq_ex polling --------------------------------------------------------------

inline const Cqe& current(Cq* cq) { return cq->ring[(cq->ex_next - 1) & cq->mask]; }

inline void load(Cq* cq, uint64_t at) {
  const Cqe& e = cq->ring[at & cq->mask];
  cq->cq.wr_id = e.wr_id;
  cq->cq.status = static_cast<ibv_wc_status>(e.status);
  cq->ex_next = at + 1;
  retire(e);
}

int start_poll(ibv_cq_ex* x, ibv_poll_cq_attr*) {
  Cq* cq = cq_of(x);
  if (acquire(cq->tail) == cq->head) return cq->overrun ? EIO : ENOENT;
  load(cq, cq->head);
  return 0;
}
int next_poll(ibv_cq_ex* x) {
  Cq* cq = cq_of(x);
  if (acquire(cq->tail) == cq->ex_next) return ENOENT;
  load(cq, cq->ex_next);
  return 0;
}
void end_poll(ibv_cq_ex* x) { release(cq_of(x)->head, cq_of(x)->ex_next); }
ibv_wc_opcode read_opcode(ibv_cq_ex* x) { return static_cast<ibv_wc_opcode>(current(cq_of(x)).opcode); }
uint32_t read_byte_len(ibv_cq_ex* x) { return current(cq_of(x)).byte_len; }
uint32_t read_qp_num(ibv_cq_ex* x) { return current(cq_of(x)).qp->qpx.qp_base.qp_num; }
uint32_t read_zero32(ibv_cq_ex*) { return 0; }
__be32 read_imm_data(ibv_cq_ex*) { return 0; }
unsigned read_wc_flags(ibv_cq_ex*) { return 0; }
uint8_t read_zero8(ibv_cq_ex*) { return 0; }
uint64_t read_zero64(ibv_cq_ex*) { return 0; }
uint16_t read_zero16(ibv_cq_ex*) { return 0; }
void read_tm_info(ibv_cq_ex*, ibv_wc_tm_info* t) { *t = ibv_wc_tm_info{}; }

}  // namespace

void install_context_ops(ibv_context* ctx) {
  ctx->ops.post_send = post_send;
  ctx->ops.post_recv = post_recv;
  ctx->ops.post_srq_recv = post_srq_recv;
  ctx->ops.poll_cq = poll_cq;
  ctx->ops.req_notify_cq = req_notify_cq;
}

void install_wr_api(Qp* q) {
  ibv_qp_ex& x = q->qpx;
  x.wr_start = wr_start;
  x.wr_complete = wr_complete;
  x.wr_abort = wr_abort;
  x.wr_rdma_write = wr_rdma_write;
  x.wr_rdma_write_imm = wr_rdma_write_imm;
  x.wr_rdma_read = wr_rdma_read;
  x.wr_send = wr_send;
  x.wr_send_imm = wr_send_imm;
  x.wr_atomic_fetch_add = wr_atomic_fetch_add;
  x.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
  x.wr_local_inv = wr_local_inv;
  x.wr_bind_mw = wr_bind_mw;
  x.wr_send_inv = wr_send_inv;
  x.wr_send_tso = wr_send_tso;
  x.wr_atomic_write = wr_atomic_write;
  x.wr_set_xrc_srqn = wr_set_xrc_srqn;
  x.wr_set_ud_addr = wr_set_ud_addr;
  x.wr_set_sge = wr_set_sge;
  x.wr_set_sge_list = wr_set_sge_list;
  x.wr_set_inline_data = wr_set_inline_data;
  x.wr_set_inline_data_list = wr_set_inline_data_list;
  q->b_cur = &q->scratch;
}

void install_cq_ex(Cq* cq) {
  ibv_cq_ex& x = cq->cq;
  x.start_poll = start_poll;
  x.next_poll = next_poll;
  x.end_poll = end_poll;
  x.read_opcode = read_opcode;
  x.read_vendor_err = read_zero32;
  x.read_byte_len = read_byte_len;
  x.read_imm_data = read_imm_data;
  x.read_qp_num = read_qp_num;
  x.read_src_qp = read_zero32;
  x.read_wc_flags = read_wc_flags;
  x.read_slid = read_zero32;
  x.read_sl = read_zero8;
  x.read_dlid_path_bits = read_zero8;
  x.read_completion_ts = read_zero64;
  x.read_cvlan = read_zero16;
  x.read_flow_tag = read_zero32;
  x.read_tm_info = read_tm_info;
  x.read_completion_wallclock_ns = read_zero64;
}

void purge(Cq* cq, const Qp* q) {
  uint64_t kept = cq->head;
  for (uint64_t i = cq->head; i != cq->tail; ++i) {
    const Cqe e = cq->ring[i & cq->mask];
    if (e.qp != q) cq->ring[kept++ & cq->mask] = e;
  }
  cq->tail = kept;
}

void flush_receives(Qp* q) {
  if (q->rcq == nullptr) return;
  uint64_t tail = q->rcq->tail, head = acquire(q->rcq->head);
  for (; q->rq_flushed < q->rq_posted; ++q->rq_flushed) {
    Cqe* e = take_slot(q->rcq, tail, head);
    if (e == nullptr) break;
    *e = Cqe{q->rq[q->rq_flushed % q->rq_depth], q, 0, 0, IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, 0};
    ++tail;
  }
  q->rq_flushed = q->rq_posted;
  if (tail != q->rcq->tail) publish(q->rcq, tail);
}

void report_overrun(Cq* cq) {
  if (cq->overrun) return;
  cq->overrun = true;
  std::fprintf(stderr,
               "verbs stand-in: null0: CQ overrun: a completion found all %u entries of its CQ taken; the CQ is in "
               "error from now on (ibv_poll_cq returns -1 once it is empty), as a NIC's would be: size the CQ for "
               "every signaled WR its QPs can have outstanding\n",
               cq->capacity);
}

}  // namespace standin::null
