#include "core/verbs/multicast.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdmasweep::verbs {

namespace {

std::string event_text(const CmEvent& e) {
  return std::string(cm_event_name(e.type)) + (e.status ? std::string(", ") + std::strerror(-e.status) : "");
}

}  // namespace

McastMembership::McastMembership(CmChannel& ch, const sockaddr_storage& local, const std::string& group,
                                 std::chrono::milliseconds timeout)
    : id_(ch, RDMA_PS_UDP), group_(address_of(group, 0)) {
  const std::string fail = "rdma_cm: could not join multicast group " + group + " within " + seconds_text(timeout);
  const int ms = static_cast<int>(std::min<int64_t>(timeout.count(), 1 << 30));
  // Resolving the group from our own address binds the id to our device and port.
  sockaddr_storage src = local;
  if (rdma_resolve_addr(id_.get(), reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&group_), ms) != 0)
    throw Error(fail + ": rdma_resolve_addr: " + std::strerror(errno), errno);
  CmEvent e = ch.next(timeout + std::chrono::seconds(1), fail + " (address not resolved)");
  if (e.type != RDMA_CM_EVENT_ADDR_RESOLVED)
    throw Error(fail + ": " + event_text(e) + " (is there a route for multicast on the RDMA interface?)");
  if (rdma_join_multicast(id_.get(), reinterpret_cast<sockaddr*>(&group_), nullptr) != 0)
    throw Error(fail + ": rdma_join_multicast: " + std::strerror(errno), errno);
  e = ch.next(timeout + std::chrono::seconds(1), fail + " (no answer to the join)");
  if (e.type != RDMA_CM_EVENT_MULTICAST_JOIN) {
    rdma_leave_multicast(id_.get(), reinterpret_cast<sockaddr*>(&group_));
    throw Error(fail + ": " + event_text(e));
  }
  ud_ = e.ud;
}

McastMembership::~McastMembership() { rdma_leave_multicast(id_.get(), reinterpret_cast<sockaddr*>(&group_)); }

McastAttachment::McastAttachment(const QueuePair& qp, const ibv_gid& mgid, uint16_t mlid)
    : qp_(qp.get()), mgid_(mgid), mlid_(mlid) {
  if (int rc = ibv_attach_mcast(qp_, &mgid_, mlid_); rc != 0)
    throw Error("ibv_attach_mcast(qpn " + std::to_string(qp.qpn()) + "): " + std::strerror(rc), rc);
}

McastAttachment::~McastAttachment() { ibv_detach_mcast(qp_, &mgid_, mlid_); }

}  // namespace rdmasweep::verbs
