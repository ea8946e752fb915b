// One queue pair, reliable connection (RC) or unreliable datagram (UD), and its state
// transitions RESET->INIT->RTR->RTS.
#pragma once

#include <cstdint>
#include <string>

#include <infiniband/verbs.h>

#include "core/verbs/completion_queue.hpp"
#include "core/verbs/protection_domain.hpp"

namespace rdmasweep::verbs {

struct QpCaps {
  uint32_t max_send_wr = 128;
  uint32_t max_recv_wr = 512;
  uint32_t max_inline = 0;
  ibv_srq* srq = nullptr;  // receives come from this shared queue instead of the QP's own
  bool ud = false;         // IBV_QPT_UD instead of IBV_QPT_RC
};

// The Q_Key of every UD QP (perftest's DEF_QKEY): a datagram carrying another is dropped.
constexpr uint32_t kUdQkey = 0x11111111;

// What the local QP needs to know about its peer to reach RTR.
struct PeerAddress {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint16_t lid = 0;
  ibv_gid gid{};
  bool use_gid = true;  // RoCE always routes by GID; IB only across subnets
  uint8_t sgid_index = 0;
  ibv_mtu mtu = IBV_MTU_1024;
  // Path attributes (--tclass, --sl, --flow-label).
  uint8_t traffic_class = 0;
  uint8_t sl = 0;
  uint32_t flow_label = 0;
};

// An RC requester's transport retries (--qp-timeout, --retry-count): a packet not ACKed
// within 4.096 us x 2^timeout is sent again, `count` times, before the WR fails.
struct Retry {
  uint8_t timeout = 14;  // 67 ms
  uint8_t count = 7;
};

class QueuePair {
 public:
  QueuePair() = default;
  // Send and receive completions both go to `cq`: the engine polls one CQ.
  QueuePair(const ProtectionDomain& pd, const CompletionQueue& cq, const QpCaps& caps);

  ibv_qp* get() const { return qp_.get(); }
  uint32_t qpn() const { return qp_.get()->qp_num; }
  uint32_t max_inline() const { return max_inline_; }
  bool ud() const { return ud_; }

  // One line with the QP's state and key attributes (ibv_query_qp), for --verbose.
  std::string describe() const;

  void to_init(uint8_t port, int access_flags);
  void to_rtr(const PeerAddress& peer, uint8_t port, uint8_t max_dest_rd_atomic);
  void to_rts(uint32_t psn, uint8_t max_rd_atomic, Retry retry);
  // UD: INIT with `qkey` (a multicast group's is RDMA-CM's); RTR and RTS with no peer
  // (each send WR names its own).
  void to_init_ud(uint8_t port, uint32_t qkey = kUdQkey);
  void to_rts_ud(uint32_t psn);
  // A transition with attributes from elsewhere (RDMA-CM's rdma_init_qp_attr).
  void modify(ibv_qp_attr& attr, int mask, const char* state);

 private:
  std::string describe_ud() const;

  Handle<ibv_qp, ibv_destroy_qp> qp_;
  uint32_t max_inline_ = 0;
  bool ud_ = false;
};

// A signaled RDMA READ of `sge` from the peer's `remote_addr` under `rkey`: the
// setup-side READs the harness posts beside the loops' own WRs (the WRITE fence, the
// credit READs of SEND on iWARP).
inline ibv_send_wr signaled_read(uint64_t wr_id, ibv_sge* sge, uint64_t remote_addr, uint32_t rkey) {
  ibv_send_wr w{};
  w.wr_id = wr_id;
  w.sg_list = sge;
  w.num_sge = 1;
  w.opcode = IBV_WR_RDMA_READ;
  w.send_flags = IBV_SEND_SIGNALED;
  w.wr.rdma.remote_addr = remote_addr;
  w.wr.rdma.rkey = rkey;
  return w;
}

}  // namespace rdmasweep::verbs
