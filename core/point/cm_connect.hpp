// --cm: a point's RC QPs connected by RDMA-CM (librdmacm) instead of by the QP
// numbers, PSNs and GIDs exchanged on the control channel. The QPs, buffers and
// loops are the same; only the connection differs: each QP gets an RDMA-CM id, the
// client resolves the server's address and route and connects (private data: the
// QP's index), the server accepts on a listener whose port it announced in SETUP_OK,
// and both move their QPs to RTR and RTS with the attributes the route chose. The
// source GID therefore comes from routing, not from --gid-index.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/verbs/cm.hpp"
#include "core/verbs/device.hpp"

namespace rdmasweep {

class TestResources;

// Where routing sends the connections: device, port and source GID.
struct CmRoute {
  std::string address;  // the server's address as given
  std::string device;
  uint8_t port = 0;
  std::string gid;  // the route's source GID
};

// One point's RDMA-CM state: the event channel, the server's listener and one id per
// QP, kept for the QPs' lifetime (destroying an id ends its connection).
class CmLinks {
 public:
  CmLinks() = default;
  CmLinks(const CmLinks&) = delete;
  CmLinks& operator=(const CmLinks&) = delete;

  // Server: listens on every address, on a port the kernel picks (returned); on an
  // iWARP device IPv4 only (verbs::CmId::listen_any).
  uint16_t listen(const verbs::Device& dev);
  // Client: connects every QP of a point's `lanes` (in order) to host:port; each step within `timeout`.
  void connect_all(const std::vector<TestResources*>& lanes, const std::string& host, uint16_t port,
                   std::chrono::milliseconds timeout);
  // Server: accepts one connection per QP of `lanes`, waiting at most `timeout` for each
  // event; `idle` runs while it waits (the control channel: a client that gave up).
  void accept_all(const std::vector<TestResources*>& lanes, std::chrono::milliseconds timeout,
                  const std::function<void()>& idle = {});

 private:
  // QP q of `lane` (global index i) asks `host`:`port` for its connection; a port the
  // host's TCP stack already holds (iWARP) is tried again on a new id.
  verbs::CmId request(TestResources& lane, uint32_t q, uint32_t i, const std::string& host, uint16_t port,
                      std::chrono::milliseconds timeout);
  verbs::CmChannel channel_;
  verbs::CmId listener_;
  std::vector<verbs::CmId> ids_;
};

// Client, before anything is opened: resolves `host`'s address and route within
// `timeout` (the device and port to use). Throws one line naming the address.
CmRoute resolve_cm_route(const std::string& host, std::chrono::milliseconds timeout);
// Where an iWARP device's QPs connect to a server reached at `host` (the control
// channel's host): `host` itself, but for a server on this host reached over loopback
// the address of the device's own interface (`netdev`), which loopback is not.
// ConfigError when that interface has no IPv4 address.
std::string iwarp_cm_address(const std::string& host, const std::string& device, const std::string& netdev);
// Throws one line unless `route` goes through `device`'s port `port` (--device, --ib-port).
void check_cm_device(const CmRoute& route, const std::string& device, uint8_t port);

}  // namespace rdmasweep
