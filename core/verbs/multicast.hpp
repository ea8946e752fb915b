// UD multicast: a group joined through RDMA-CM (rdma_join_multicast: the fabric's side
// of membership, and the group's GID, LID and Q_Key) and a UD QP attached to it
// (ibv_attach_mcast: where the device delivers the group's datagrams), each RAII.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "core/verbs/cm.hpp"
#include "core/verbs/queue_pair.hpp"

namespace rdmasweep::verbs {

class McastMembership {
 public:
  // Binds an id to the device that holds `local` (this port's address), then joins
  // `group` (a numeric IPv4 or IPv6 multicast address), each within `timeout`; one
  // line naming the group on failure.
  McastMembership(CmChannel& ch, const sockaddr_storage& local, const std::string& group,
                  std::chrono::milliseconds timeout);
  ~McastMembership();
  McastMembership(const McastMembership&) = delete;
  McastMembership& operator=(const McastMembership&) = delete;

  // Where the group's datagrams go: its GID and LID, for an address handle and attach.
  const ibv_ah_attr& ah_attr() const { return ud_.ah_attr; }
  const ibv_gid& mgid() const { return ud_.ah_attr.grh.dgid; }
  uint16_t mlid() const { return ud_.ah_attr.dlid; }
  uint32_t qkey() const { return ud_.qkey; }
  // The device RDMA-CM bound the id to (must be the one the QPs are on).
  std::string device_name() const { return id_.device_name(); }

 private:
  CmId id_;
  sockaddr_storage group_{};
  rdma_ud_param ud_{};
};

// `qp` receives the group's datagrams while this lives.
class McastAttachment {
 public:
  McastAttachment(const QueuePair& qp, const ibv_gid& mgid, uint16_t mlid);
  ~McastAttachment();
  McastAttachment(const McastAttachment&) = delete;
  McastAttachment& operator=(const McastAttachment&) = delete;

 private:
  ibv_qp* qp_;
  ibv_gid mgid_;
  uint16_t mlid_;
};

}  // namespace rdmasweep::verbs
