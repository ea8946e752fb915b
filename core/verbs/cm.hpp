// RDMA-CM (librdmacm) for --cm: an event channel and communication ids, each RAII.
// The QPs stay ours (ibv_create_qp on our PD and CQ): an id only carries the
// connection handshake ("manual QP" use: rdma_connect/rdma_accept with qp_num), and
// rdma_init_qp_attr gives the attributes its route chose for each state.
#pragma once

#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "core/verbs/errors.hpp"
#include "core/verbs/handle.hpp"

namespace rdmasweep::verbs {

inline int destroy_event_channel(rdma_event_channel* ch) {
  rdma_destroy_event_channel(ch);
  return 0;
}

// One event, copied out and acknowledged at once (so no id's destruction waits on it).
struct CmEvent {
  rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_ERROR;
  int status = 0;
  rdma_cm_id* id = nullptr;  // CONNECT_REQUEST: a new id, owned by the receiver
  std::string private_data;
  uint8_t initiator_depth = 0;
  uint8_t responder_resources = 0;
  rdma_ud_param ud{};  // MULTICAST_JOIN: the group's address handle attributes and Q_Key
};

// A channel's events are waited for with poll() on its non-blocking fd, never forever.
class CmChannel {
 public:
  CmChannel();
  rdma_event_channel* get() const { return ch_.get(); }
  // The next event, or throws Error(`on_timeout`) when none comes within `timeout`.
  // `idle`, when set, runs about every 100 ms while it waits (it throws to give up).
  CmEvent next(std::chrono::milliseconds timeout, const std::string& on_timeout,
               const std::function<void()>& idle = {});

 private:
  Handle<rdma_event_channel, destroy_event_channel> ch_;
};

class CmId {
 public:
  CmId() = default;
  // rdma_create_id: RDMA_PS_TCP for connections, RDMA_PS_UDP for a multicast join.
  explicit CmId(CmChannel& ch, rdma_port_space ps = RDMA_PS_TCP);
  static CmId adopt(rdma_cm_id* id);         // a CONNECT_REQUEST's new id
  rdma_cm_id* get() const { return id_.get(); }
  explicit operator bool() const { return static_cast<bool>(id_); }

  // rdma_resolve_addr then rdma_resolve_route to `host` (a name or address) port
  // `port`, each within `timeout`; one line naming the address on failure.
  void resolve(CmChannel& ch, const std::string& host, uint16_t port, std::chrono::milliseconds timeout);
  // Listens on every address, on a port the kernel picks (port()): IPv4 and IPv6, or
  // with `ipv4_only` IPv4 alone (iWARP: a request to the IPv6 wildcard carries a
  // v4-mapped address, which RDMA-CM finds on no device and rejects).
  void listen_any(bool ipv4_only = false);
  uint16_t port() const;

  // The device and port its route goes through (after resolve, or on a request's id).
  std::string device_name() const;
  uint8_t port_num() const;
  // The route's source GID (after resolve).
  ibv_gid source_gid() const { return id_.get()->route.addr.addr.ibaddr.sgid; }

  // Attributes for moving our QP to `state` on this connection (rdma_init_qp_attr).
  ibv_qp_attr qp_attr(ibv_qp_state state, int* mask) const;

  void connect(uint32_t qp_num, const std::string& private_data, uint8_t rd_atomic);
  void accept(uint32_t qp_num, uint8_t initiator_depth, uint8_t responder_resources);
  void reject(const std::string& why);
  void establish();

 private:
  Handle<rdma_cm_id, rdma_destroy_id> id_;
};

const char* cm_event_name(rdma_cm_event_type t);
// `host` (a name or address) with `port`; throws one line when it does not resolve.
sockaddr_storage address_of(const std::string& host, uint16_t port);
// "3 s": a timeout as the errors say it (rounded up to whole seconds).
std::string seconds_text(std::chrono::milliseconds t);

}  // namespace rdmasweep::verbs
