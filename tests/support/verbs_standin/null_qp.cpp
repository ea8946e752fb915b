// The null device's QPs, SRQs and address handles: their creation against null0's
// limits, the QP state machine (the masks each transition needs, as the kernel checks
// them), what ibv_query_qp answers, and their teardown.
#include <atomic>
#include <cstring>

#include "null_device.hpp"
#include "null_objects.hpp"

namespace standin::null {

namespace {

std::atomic<uint32_t> next_qpn{0x100};
std::atomic<int> live_qps{0};

// The masks a transition needs (the kernel's qp_state_table, for RC/UC and UD).
int required(ibv_qp_type type, ibv_qp_state from, ibv_qp_state to) {
  const bool ud = type == IBV_QPT_UD;
  if (to == IBV_QPS_INIT && from == IBV_QPS_RESET)
    return IBV_QP_PKEY_INDEX | IBV_QP_PORT | (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
  if (to == IBV_QPS_RTR && from == IBV_QPS_INIT)
    return ud ? 0
              : IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                    (type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0);
  if (to == IBV_QPS_RTS && from == IBV_QPS_RTR)
    return IBV_QP_SQ_PSN | (type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                                     IBV_QP_MAX_QP_RD_ATOMIC
                                               : 0);
  return 0;
}

bool allowed(ibv_qp_state from, ibv_qp_state to) {
  switch (to) {
    case IBV_QPS_RESET:
    case IBV_QPS_ERR: return true;
    case IBV_QPS_INIT: return from == IBV_QPS_RESET || from == IBV_QPS_INIT;
    case IBV_QPS_RTR: return from == IBV_QPS_INIT;
    case IBV_QPS_RTS: return from == IBV_QPS_RTR || from == IBV_QPS_RTS || from == IBV_QPS_SQD;
    case IBV_QPS_SQD: return from == IBV_QPS_RTS || from == IBV_QPS_SQD;
    default: return false;
  }
}

void copy_attr(ibv_qp_attr& to, const ibv_qp_attr& a, int mask) {
#define NULL_TAKE(bit, field) \
  if (mask & (bit)) to.field = a.field
  NULL_TAKE(IBV_QP_CUR_STATE, cur_qp_state);
  NULL_TAKE(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
  NULL_TAKE(IBV_QP_ACCESS_FLAGS, qp_access_flags);
  NULL_TAKE(IBV_QP_PKEY_INDEX, pkey_index);
  NULL_TAKE(IBV_QP_PORT, port_num);
  NULL_TAKE(IBV_QP_QKEY, qkey);
  NULL_TAKE(IBV_QP_AV, ah_attr);
  NULL_TAKE(IBV_QP_PATH_MTU, path_mtu);
  NULL_TAKE(IBV_QP_TIMEOUT, timeout);
  NULL_TAKE(IBV_QP_RETRY_CNT, retry_cnt);
  NULL_TAKE(IBV_QP_RNR_RETRY, rnr_retry);
  NULL_TAKE(IBV_QP_RQ_PSN, rq_psn);
  NULL_TAKE(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
  NULL_TAKE(IBV_QP_ALT_PATH, alt_ah_attr);
  NULL_TAKE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
  NULL_TAKE(IBV_QP_SQ_PSN, sq_psn);
  NULL_TAKE(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
  NULL_TAKE(IBV_QP_PATH_MIG_STATE, path_mig_state);
  NULL_TAKE(IBV_QP_DEST_QPN, dest_qp_num);
#undef NULL_TAKE
}

}  // namespace

// ibv_create_qp_ex: the ibv_wr_* API for the opcodes null0 takes.
ibv_qp* create_qp_ex(ibv_context*, ibv_qp_init_attr_ex* a) {
  constexpr uint64_t kOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
                            IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
                            IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
  const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || (a->comp_mask & ~known)) {
    errno = (a->comp_mask & ~known) ? EOPNOTSUPP : EINVAL;
    return nullptr;
  }
  const bool ex = a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  constexpr uint64_t kAtomics = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
  if (ex && ((a->send_ops_flags & ~kOps) ||
             ((a->send_ops_flags & kAtomics) && limits().dev.atomic_cap == IBV_ATOMIC_NONE))) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  ibv_qp_init_attr init{};
  init.qp_context = a->qp_context;
  init.send_cq = a->send_cq;
  init.recv_cq = a->recv_cq;
  init.srq = a->srq;
  init.cap = a->cap;
  init.qp_type = a->qp_type;
  init.sq_sig_all = a->sq_sig_all;
  ibv_qp* qp = create_qp(a->pd, &init);
  if (qp == nullptr) return nullptr;
  a->cap = init.cap;
  reinterpret_cast<Qp*>(qp)->ex = ex;
  return qp;
}

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* a) {
  const Limits& l = limits();
  const ibv_qp_cap& c = a->cap;
  const bool rc = a->qp_type == IBV_QPT_RC, uc = a->qp_type == IBV_QPT_UC, ud = a->qp_type == IBV_QPT_UD;
  if (!(rc || uc || ud) || (rc && !l.rc) || (ud && !l.ud)) return made<ibv_qp>(nullptr, EOPNOTSUPP);
  const auto over = [](uint32_t v, int max) { return v > static_cast<uint32_t>(max); };
  const bool srq = a->srq != nullptr;
  if (a->send_cq == nullptr || a->recv_cq == nullptr || over(c.max_send_wr, l.dev.max_qp_wr) ||
      over(c.max_send_sge, l.dev.max_sge) || (!srq && (over(c.max_recv_wr, l.dev.max_qp_wr) ||
                                                       over(c.max_recv_sge, l.dev.max_sge))) ||
      c.max_inline_data > l.max_inline)
    return made<ibv_qp>(nullptr, EINVAL);
  if (live_qps.fetch_add(1) >= l.dev.max_qp) {
    --live_qps;
    return made<ibv_qp>(nullptr, ENOMEM);
  }
  auto* q = new Qp{};
  ibv_qp& b = q->qpx.qp_base;
  b.context = pd->context;
  b.qp_context = a->qp_context;
  b.pd = pd;
  b.send_cq = a->send_cq;
  b.recv_cq = a->recv_cq;
  b.srq = a->srq;
  b.handle = new_handle();
  b.qp_num = next_qpn++ & 0xffffff;
  b.state = IBV_QPS_RESET;
  b.qp_type = a->qp_type;
  pthread_mutex_init(&b.mutex, nullptr);
  pthread_cond_init(&b.cond, nullptr);
  q->scq = reinterpret_cast<Cq*>(a->send_cq);
  q->rcq = reinterpret_cast<Cq*>(a->recv_cq);
  ++q->scq->users;
  ++q->rcq->users;
  q->sq_depth = c.max_send_wr;
  q->max_send_sge = c.max_send_sge;
  q->max_inline = c.max_inline_data;
  q->sig_all = a->sq_sig_all != 0;
  q->rq_depth = srq ? 0 : c.max_recv_wr;
  q->max_recv_sge = srq ? 0 : c.max_recv_sge;
  q->rq = q->rq_depth ? new uint64_t[q->rq_depth] : nullptr;
  std::memset(q->wc_op, kNoOp, sizeof q->wc_op);
  q->wc_op[IBV_WR_SEND] = q->wc_op[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND;
  if (!ud) q->wc_op[IBV_WR_RDMA_WRITE] = q->wc_op[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE;
  if (rc) q->wc_op[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ;
  if (rc && l.dev.atomic_cap != IBV_ATOMIC_NONE) {
    q->wc_op[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP;
    q->wc_op[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD;
  }
  install_wr_api(q);
  report_qp_created(q);
  q->init = *a;
  q->attr.cap = a->cap;
  return &b;
}

int modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask) {
  Qp* q = reinterpret_cast<Qp*>(qp);
  const Limits& l = limits();
  const ibv_qp_state from = (mask & IBV_QP_CUR_STATE) ? a->cur_qp_state : qp->state;
  const ibv_qp_state to = (mask & IBV_QP_STATE) ? a->qp_state : from;
  const int needed = required(qp->qp_type, from, to);
  if (from != qp->state || !allowed(from, to) || (mask & needed) != needed) return EINVAL;
  if ((mask & IBV_QP_PORT) && a->port_num != 1) return EINVAL;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > l.dev.max_qp_init_rd_atom) return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > l.dev.max_qp_rd_atom) return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) && a->path_mtu > l.port.active_mtu) return EINVAL;
  if ((mask & IBV_QP_AV) && l.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
    ibv_gid_entry g{};
    if (!a->ah_attr.is_global || !gid_at(a->ah_attr.grh.sgid_index, &g)) return EINVAL;  // RoCE needs a GRH
  }
  copy_attr(q->attr, *a, mask);
  q->attr.qp_state = q->attr.cur_qp_state = to;
  qp->state = to;
  if (to == IBV_QPS_RESET) {  // its work is gone, its completions too
    purge(q->scq, q);
    purge(q->rcq, q);
    report_qp_reset(q, false);
    q->posted = q->retired = 0;
    q->rq_posted = q->rq_flushed = 0;
  } else if (to == IBV_QPS_ERR) {
    flush_receives(q);
  }
  return 0;
}

int query_qp(ibv_qp* qp, ibv_qp_attr* a, int, ibv_qp_init_attr* init) {
  const Qp* q = reinterpret_cast<const Qp*>(qp);
  *a = q->attr;
  a->qp_state = a->cur_qp_state = qp->state;
  a->cap = q->init.cap;
  *init = q->init;
  return 0;
}

int destroy_qp(ibv_qp* qp) {
  Qp* q = reinterpret_cast<Qp*>(qp);
  purge(q->scq, q);
  purge(q->rcq, q);
  report_qp_reset(q, true);
  --q->scq->users;
  --q->rcq->users;
  --live_qps;
  pthread_mutex_destroy(&qp->mutex);
  pthread_cond_destroy(&qp->cond);
  delete[] q->rq;
  delete q;
  return 0;
}

ibv_qp_ex* qp_to_qp_ex(ibv_qp* qp) {
  Qp* q = reinterpret_cast<Qp*>(qp);
  return q->ex ? &q->qpx : made<ibv_qp_ex>(nullptr, EOPNOTSUPP);
}

ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* a) {
  const Limits& l = limits();
  if (l.dev.max_srq == 0) return made<ibv_srq>(nullptr, EOPNOTSUPP);
  if (a->attr.max_wr < 1 || a->attr.max_wr > static_cast<uint32_t>(l.dev.max_srq_wr) ||
      a->attr.max_sge > static_cast<uint32_t>(l.dev.max_srq_sge))
    return made<ibv_srq>(nullptr, EINVAL);
  auto* s = new Srq{};
  s->srq.context = pd->context;
  s->srq.srq_context = a->srq_context;
  s->srq.pd = pd;
  s->srq.handle = new_handle();
  pthread_mutex_init(&s->srq.mutex, nullptr);
  pthread_cond_init(&s->srq.cond, nullptr);
  s->max_wr = a->attr.max_wr;
  s->max_sge = a->attr.max_sge;
  s->limit = a->attr.srq_limit;
  return &s->srq;
}

int modify_srq(ibv_srq* srq, ibv_srq_attr* a, int mask) {
  Srq* s = reinterpret_cast<Srq*>(srq);
  if ((mask & IBV_SRQ_MAX_WR) && (a->max_wr > static_cast<uint32_t>(limits().dev.max_srq_wr) || a->max_wr < s->posted))
    return EINVAL;
  if (mask & IBV_SRQ_MAX_WR) s->max_wr = a->max_wr;
  if (mask & IBV_SRQ_LIMIT) s->limit = a->srq_limit;
  return 0;
}

int query_srq(ibv_srq* srq, ibv_srq_attr* a) {
  const Srq* s = reinterpret_cast<const Srq*>(srq);
  *a = ibv_srq_attr{s->max_wr, s->max_sge, s->limit};
  return 0;
}

int destroy_srq(ibv_srq* srq) {
  pthread_mutex_destroy(&srq->mutex);
  pthread_cond_destroy(&srq->cond);
  delete reinterpret_cast<Srq*>(srq);
  return 0;
}

ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* a) {
  if (a->port_num != 1 || (limits().port.link_layer == IBV_LINK_LAYER_ETHERNET && !a->is_global))
    return made<ibv_ah>(nullptr, EINVAL);
  return new ibv_ah{pd->context, pd, new_handle()};
}

int destroy_ah(ibv_ah* ah) {
  delete ah;
  return 0;
}

}  // namespace standin::null
