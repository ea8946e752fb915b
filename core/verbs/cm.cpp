#include "core/verbs/cm.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdmasweep::verbs {

const char* cm_event_name(rdma_cm_event_type t) { return rdma_event_str(t); }

CmChannel::CmChannel()
    : ch_(check_ptr(rdma_create_event_channel(),
                    "rdma_create_event_channel (is the rdma_ucm module loaded and /dev/infiniband/rdma_cm there?)"),
          "rdma_destroy_event_channel") {
  int fd = ch_.get()->fd;
  check_errno(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1 ? -1 : 0, "fcntl(rdma_cm event channel)");
}

CmEvent CmChannel::next(std::chrono::milliseconds timeout, const std::string& on_timeout,
                        const std::function<void()>& idle) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    rdma_cm_event* e = nullptr;
    if (rdma_get_cm_event(ch_.get(), &e) == 0) {
      CmEvent out;
      out.type = e->event;
      out.status = e->status;
      out.id = e->id;
      if (e->param.conn.private_data != nullptr)
        out.private_data.assign(static_cast<const char*>(e->param.conn.private_data), e->param.conn.private_data_len);
      out.initiator_depth = e->param.conn.initiator_depth;
      out.responder_resources = e->param.conn.responder_resources;
      if (e->event == RDMA_CM_EVENT_MULTICAST_JOIN) out.ud = e->param.ud;
      rdma_ack_cm_event(e);
      return out;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) check_errno(-1, "rdma_get_cm_event");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw Error(on_timeout, ETIMEDOUT);
    if (idle) idle();
    pollfd p{ch_.get()->fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), idle ? 100 : 1000))) < 0 && errno != EINTR)
      check_errno(-1, "poll(rdma_cm event channel)");
  }
}

CmId::CmId(CmChannel& ch, rdma_port_space ps) {
  rdma_cm_id* id = nullptr;
  check_errno(rdma_create_id(ch.get(), &id, nullptr, ps), "rdma_create_id");
  id_ = Handle<rdma_cm_id, rdma_destroy_id>(id, "rdma_destroy_id");
}

CmId CmId::adopt(rdma_cm_id* id) {
  CmId c;
  c.id_ = Handle<rdma_cm_id, rdma_destroy_id>(id, "rdma_destroy_id");
  return c;
}

sockaddr_storage address_of(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0 || res == nullptr)
    throw Error("rdma_cm: cannot resolve the host name " + host + ": " + gai_strerror(rc));
  sockaddr_storage ss{};
  std::memcpy(&ss, res->ai_addr, std::min<size_t>(res->ai_addrlen, sizeof ss));
  freeaddrinfo(res);
  if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
  else if (ss.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
  return ss;
}

std::string seconds_text(std::chrono::milliseconds t) {
  return std::to_string((t.count() + 999) / 1000) + " s";
}

void CmId::resolve(CmChannel& ch, const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  sockaddr_storage dst = address_of(host, port);
  const std::string unreachable = "rdma_cm: could not resolve " + host + " within " + seconds_text(timeout) +
                                  ": no RDMA device routes to it (check the address and that the interface has an "
                                  "RDMA device; --cm needs the server's address on its RDMA interface)";
  const int ms = static_cast<int>(std::min<int64_t>(timeout.count(), 1 << 30));
  if (rdma_resolve_addr(id_.get(), nullptr, reinterpret_cast<sockaddr*>(&dst), ms) != 0)
    throw Error(unreachable + ": " + std::strerror(errno), errno);
  CmEvent e = ch.next(timeout + std::chrono::seconds(1), unreachable);
  if (e.type != RDMA_CM_EVENT_ADDR_RESOLVED)
    throw Error(unreachable + ": " + cm_event_name(e.type) + (e.status ? std::string(", ") + std::strerror(-e.status) : ""));
  if (rdma_resolve_route(id_.get(), ms) != 0) throw Error(unreachable + ": " + std::strerror(errno), errno);
  e = ch.next(timeout + std::chrono::seconds(1), unreachable);
  if (e.type != RDMA_CM_EVENT_ROUTE_RESOLVED)
    throw Error(unreachable + ": " + cm_event_name(e.type) + (e.status ? std::string(", ") + std::strerror(-e.status) : ""));
}

void CmId::listen_any(bool ipv4_only) {
  if (ipv4_only) {
    sockaddr_in any4{};
    any4.sin_family = AF_INET;
    any4.sin_addr.s_addr = htonl(INADDR_ANY);
    check_errno(rdma_bind_addr(id_.get(), reinterpret_cast<sockaddr*>(&any4)), "rdma_bind_addr(0.0.0.0, any port)");
  } else {
    // The IPv6 wildcard takes IPv4 requests too (the id is not IPv6-only by default).
    sockaddr_in6 any{};
    any.sin6_family = AF_INET6;
    any.sin6_addr = in6addr_any;
    check_errno(rdma_bind_addr(id_.get(), reinterpret_cast<sockaddr*>(&any)), "rdma_bind_addr([::], any port)");
  }
  check_errno(rdma_listen(id_.get(), 64), "rdma_listen");
}

uint16_t CmId::port() const { return ntohs(rdma_get_src_port(id_.get())); }

std::string CmId::device_name() const {
  return id_.get()->verbs != nullptr ? ibv_get_device_name(id_.get()->verbs->device) : "";
}

uint8_t CmId::port_num() const { return id_.get()->port_num; }

ibv_qp_attr CmId::qp_attr(ibv_qp_state state, int* mask) const {
  ibv_qp_attr a{};
  a.qp_state = state;
  check_errno(rdma_init_qp_attr(id_.get(), &a, mask),
              std::string("rdma_init_qp_attr(") + (state == IBV_QPS_RTR ? "RTR" : state == IBV_QPS_RTS ? "RTS" : "INIT") + ")");
  return a;
}

void CmId::connect(uint32_t qp_num, const std::string& private_data, uint8_t rd_atomic) {
  rdma_conn_param p{};
  p.private_data = private_data.data();
  p.private_data_len = static_cast<uint8_t>(private_data.size());
  p.responder_resources = rd_atomic;
  p.initiator_depth = rd_atomic;
  p.retry_count = 7;
  p.rnr_retry_count = 7;  // as the QPs' own: a slow receiver is not an error
  p.qp_num = qp_num;
  check_errno(rdma_connect(id_.get(), &p), "rdma_connect(qpn " + std::to_string(qp_num) + ")");
}

void CmId::accept(uint32_t qp_num, uint8_t initiator_depth, uint8_t responder_resources) {
  rdma_conn_param p{};
  p.responder_resources = responder_resources;
  p.initiator_depth = initiator_depth;
  p.rnr_retry_count = 7;
  p.qp_num = qp_num;
  check_errno(rdma_accept(id_.get(), &p), "rdma_accept(qpn " + std::to_string(qp_num) + ")");
}

void CmId::reject(const std::string& why) {
  rdma_reject(id_.get(), why.data(), static_cast<uint8_t>(std::min<size_t>(why.size(), 32)));
}

void CmId::establish() { check_errno(rdma_establish(id_.get()), "rdma_establish"); }

}  // namespace rdmasweep::verbs
