#include "core/verbs/queue_pair.hpp"

#include <cerrno>
#include <cstdio>
#include <string>

namespace rdmasweep::verbs {

QueuePair::QueuePair(const ProtectionDomain& pd, const CompletionQueue& cq, const QpCaps& caps) {
  ibv_qp_init_attr init{};
  init.send_cq = cq.get();
  init.recv_cq = cq.get();
  init.qp_type = caps.ud ? IBV_QPT_UD : IBV_QPT_RC;
  init.sq_sig_all = 0;  // the loops choose which WRs are signaled
  init.cap.max_send_wr = caps.max_send_wr;
  init.cap.max_recv_wr = caps.max_recv_wr;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = caps.max_inline;
  init.srq = caps.srq;
  ibv_qp* qp = create_clearing_errno([&] { return ibv_create_qp(pd.get(), &init); });
  const std::string what = std::string("ibv_create_qp(") + (caps.ud ? "UD" : "RC");
  if (qp == nullptr && errno == EINVAL && caps.max_inline > 0) {
    int err = errno;
    throw Error(what + ", max_inline " + std::to_string(caps.max_inline) + ") failed: " + describe_errno(err) +
                    ": the device does not support that much inline data; lower --inline-size",
                err);
  }
  qp_ = Handle<ibv_qp, ibv_destroy_qp>(
      check_ptr(qp, what + ", max_send_wr " + std::to_string(caps.max_send_wr) + ", max_recv_wr " +
                        std::to_string(caps.max_recv_wr) + ", max_inline " + std::to_string(caps.max_inline) + ")"),
      "ibv_destroy_qp");
  max_inline_ = init.cap.max_inline_data;
  ud_ = caps.ud;
}

static const char* qp_state_name(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET: return "RESET";
    case IBV_QPS_INIT: return "INIT";
    case IBV_QPS_RTR: return "RTR";
    case IBV_QPS_RTS: return "RTS";
    case IBV_QPS_SQD: return "SQD";
    case IBV_QPS_SQE: return "SQE";
    case IBV_QPS_ERR: return "ERR";
    default: return "UNKNOWN";
  }
}

std::string QueuePair::describe() const {
  ibv_qp_attr a{};
  ibv_qp_init_attr init{};
  if (ud_) return describe_ud();
  int mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
             IBV_QP_RNR_RETRY | IBV_QP_AV | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
  if (int rc = ibv_query_qp(qp_.get(), &a, mask, &init); rc != 0)
    return "qpn " + std::to_string(qpn()) + ": ibv_query_qp failed: " + describe_errno(rc);
  char b[400];
  std::snprintf(b, sizeof b,
                "qpn %u: state %s, path MTU %d, dest qpn %u, sq psn %u, rq psn %u, timeout %u, retry %u, rnr retry %u, "
                "max rd atomic %u, sgid index %u, traffic class %u, sl %u, flow label %u, max send wr %u, "
                "max recv wr %u, max inline %u",
                qpn(), qp_state_name(a.qp_state), mtu_bytes(a.path_mtu), a.dest_qp_num, a.sq_psn, a.rq_psn,
                a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic, a.ah_attr.grh.sgid_index,
                a.ah_attr.grh.traffic_class, a.ah_attr.sl, a.ah_attr.grh.flow_label, init.cap.max_send_wr,
                init.cap.max_recv_wr, init.cap.max_inline_data);
  return b;
}

// UD QPs have no peer, path or retries of their own: each send's address handle says where.
std::string QueuePair::describe_ud() const {
  ibv_qp_attr a{};
  ibv_qp_init_attr init{};
  if (int rc = ibv_query_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_SQ_PSN, &init); rc != 0)
    return "UD qpn " + std::to_string(qpn()) + ": ibv_query_qp failed: " + describe_errno(rc);
  char b[300];
  std::snprintf(b, sizeof b, "UD qpn %u: state %s, qkey 0x%x, sq psn %u, max send wr %u, max recv wr %u, max inline %u",
                qpn(), qp_state_name(a.qp_state), a.qkey, a.sq_psn, init.cap.max_send_wr, init.cap.max_recv_wr,
                init.cap.max_inline_data);
  return b;
}

void QueuePair::to_init(uint8_t port, int access_flags) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = port;
  a.qp_access_flags = static_cast<unsigned>(access_flags);
  check_rc(ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
           "ibv_modify_qp(qpn " + std::to_string(qpn()) + ", INIT, port " + std::to_string(port) + ")");
}

void QueuePair::to_rtr(const PeerAddress& peer, uint8_t port, uint8_t max_dest_rd_atomic) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = peer.mtu;
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = max_dest_rd_atomic;
  a.min_rnr_timer = 12;  // 0.64 ms between RNR retries
  a.ah_attr.dlid = peer.lid;
  a.ah_attr.sl = peer.sl;
  a.ah_attr.port_num = port;
  if (peer.use_gid) {
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer.gid;
    a.ah_attr.grh.sgid_index = peer.sgid_index;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.grh.traffic_class = peer.traffic_class;
    a.ah_attr.grh.flow_label = peer.flow_label;
  }
  check_rc(ibv_modify_qp(qp_.get(), &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
           "ibv_modify_qp(qpn " + std::to_string(qpn()) + ", RTR, dest qpn " + std::to_string(peer.qpn) +
               ", sgid index " + std::to_string(peer.sgid_index) + ") (a wrong GID index is the usual cause)");
}

void QueuePair::to_rts(uint32_t psn, uint8_t max_rd_atomic, Retry retry) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = psn;
  a.timeout = retry.timeout;
  a.retry_cnt = retry.count;
  a.rnr_retry = 7;   // 7 = retry forever on receiver-not-ready: a slow receiver is not an error
  a.max_rd_atomic = max_rd_atomic;
  check_rc(ibv_modify_qp(qp_.get(), &a,
                         IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_MAX_QP_RD_ATOMIC),
           "ibv_modify_qp(qpn " + std::to_string(qpn()) + ", RTS)");
}

void QueuePair::to_init_ud(uint8_t port, uint32_t qkey) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = port;
  a.qkey = qkey;
  check_rc(ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
           "ibv_modify_qp(UD qpn " + std::to_string(qpn()) + ", INIT, port " + std::to_string(port) + ")");
}

void QueuePair::to_rts_ud(uint32_t psn) {
  const std::string name = "ibv_modify_qp(UD qpn " + std::to_string(qpn());
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  check_rc(ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE), name + ", RTR)");
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = psn;
  check_rc(ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_SQ_PSN), name + ", RTS)");
}

void QueuePair::modify(ibv_qp_attr& attr, int mask, const char* state) {
  check_rc(ibv_modify_qp(qp_.get(), &attr, mask), "ibv_modify_qp(qpn " + std::to_string(qpn()) + ", " + state + ", from rdma_cm)");
}

}  // namespace rdmasweep::verbs
