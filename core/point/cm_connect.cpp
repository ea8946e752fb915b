#include "core/point/cm_connect.hpp"

#include <algorithm>
#include <cerrno>

#include "core/setup/test_resources.hpp"
#include "core/host/inventory.hpp"
#include "core/verbs/gid.hpp"

namespace rdmasweep {

using verbs::Error;

namespace {

// Private data of a connection request: "RSCM" and the QP's index, big-endian.
std::string encode_index(uint32_t i) {
  std::string s = "RSCM";
  for (int b = 3; b >= 0; --b) s.push_back(static_cast<char>((i >> (8 * b)) & 0xff));
  return s;
}

bool decode_index(const std::string& s, uint32_t* i) {
  if (s.size() < 8 || s.compare(0, 4, "RSCM") != 0) return false;
  *i = 0;
  for (int b = 4; b < 8; ++b) *i = (*i << 8) | static_cast<uint8_t>(s[static_cast<size_t>(b)]);
  return true;
}

std::string seconds_text(std::chrono::milliseconds t) { return std::to_string((t.count() + 999) / 1000) + " s"; }

std::string route_mismatch(const std::string& host, const std::string& dev, unsigned port, const std::string& want,
                           unsigned want_port) {
  return "rdma_cm: " + host + " is reached through " + dev + " port " + std::to_string(port) + ", not " + want +
         " port " + std::to_string(want_port) + ": give --device " + dev + " --ib-port " + std::to_string(port) +
         " (or leave --device out)";
}

// The id's route must go through the device and port whose PD holds the QPs.
void check_device(const verbs::CmId& id, const verbs::Device& dev, const std::string& host) {
  if (id.device_name() == dev.name() && id.port_num() == dev.port()) return;
  throw Error(route_mismatch(host, id.device_name(), id.port_num(), dev.name(), dev.port()));
}

// QP `q` of `lane` to RTR with the route's attributes, the knobs applied.
void to_rtr(const verbs::CmId& id, TestResources& lane, uint32_t q) {
  int mask = 0;
  ibv_qp_attr a = id.qp_attr(IBV_QPS_RTR, &mask);
  a.path_mtu = lane.path_mtu(a.path_mtu);
  a.max_dest_rd_atomic = lane.rd_atomic;
  if (lane.cfg.knobs.tclass != 0) a.ah_attr.grh.traffic_class = static_cast<uint8_t>(lane.cfg.knobs.tclass);
  if (lane.cfg.knobs.sl != 0) a.ah_attr.sl = static_cast<uint8_t>(lane.cfg.knobs.sl);
  if (lane.cfg.knobs.flow_label != 0) a.ah_attr.grh.flow_label = lane.cfg.knobs.flow_label;
  lane.qps[q].modify(a, mask, "RTR");
}

void to_rts(const verbs::CmId& id, TestResources& lane, uint32_t q) {
  int mask = 0;
  ibv_qp_attr a = id.qp_attr(IBV_QPS_RTS, &mask);
  a.max_rd_atomic = lane.rd_atomic;
  a.timeout = lane.retry().timeout;  // RDMA-CM's own would be its route's; the knobs decide
  a.retry_cnt = lane.retry().count;
  mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT;
  lane.qps[q].modify(a, mask, "RTS");
  lane.psn[q] = a.sq_psn;
}

std::string event_text(const verbs::CmEvent& e) {
  return std::string(verbs::cm_event_name(e.type)) + (e.status != 0 ? " (status " + std::to_string(e.status) + ")" : "");
}

}  // namespace

// RDMA-CM picks a port in its own port space; on iWARP the connection also takes it on
// the host's TCP stack, where a socket without SO_REUSEADDR (the control channel's,
// open or in TIME_WAIT) may hold it already: rdma_listen, and on the connecting side
// rdma_connect, fail with EADDRINUSE (each seen on siw). A new id gets another port.
constexpr int kPortAttempts = 8;

uint16_t CmLinks::listen(const verbs::Device& dev) {
  for (int attempt = 1;; ++attempt) {
    listener_ = verbs::CmId(channel_);
    try {
      listener_.listen_any(dev.is_iwarp());
      return listener_.port();
    } catch (const verbs::Error& e) {
      if (e.errnum() != EADDRINUSE || attempt == kPortAttempts) throw;
    }
  }
}

verbs::CmId CmLinks::request(TestResources& lane, uint32_t q, uint32_t i, const std::string& host, uint16_t port,
                             std::chrono::milliseconds timeout) {
  for (int attempt = 1;; ++attempt) {
    verbs::CmId id(channel_);
    id.resolve(channel_, host, port, timeout);
    check_device(id, lane.dev, host);
    try {
      id.connect(lane.qps[q].qpn(), encode_index(i), lane.rd_atomic);
      return id;
    } catch (const verbs::Error& e) {
      if (e.errnum() != EADDRINUSE || attempt == kPortAttempts) throw;
    }
  }
}

void CmLinks::connect_all(const std::vector<TestResources*>& lanes, const std::string& host, uint16_t port,
                          std::chrono::milliseconds timeout) {
  uint32_t i = 0;
  for (TestResources* l : lanes) {
    TestResources& lane = *l;
    for (uint32_t q = 0; q < lane.qps.size(); ++q, ++i) {
      verbs::CmId id = request(lane, q, i, host, port, timeout);
      verbs::CmEvent e = channel_.next(
          timeout, "rdma_cm: no answer from " + host + " port " + std::to_string(port) + " to QP " + std::to_string(i) +
                       "'s connection request within " + seconds_text(timeout) +
                       " (check that the address is the server's RDMA interface and that nothing filters RoCE)");
      if (e.type == RDMA_CM_EVENT_REJECTED)
        throw Error("rdma_cm: " + host + " rejected QP " + std::to_string(i) + "'s connection: " + event_text(e));
      // iWARP: the connection (its MPA exchange) is the provider's; it moves the QP to
      // RTS itself and the CM says ESTABLISHED. Elsewhere the QP is ours to move.
      const auto want = lane.dev.is_iwarp() ? RDMA_CM_EVENT_ESTABLISHED : RDMA_CM_EVENT_CONNECT_RESPONSE;
      if (e.type != want)
        throw Error("rdma_cm: connecting QP " + std::to_string(i) + " to " + host + " failed: " + event_text(e));
      if (!lane.dev.is_iwarp()) {
        to_rtr(id, lane, q);
        to_rts(id, lane, q);
        id.establish();
      }
      ids_.push_back(std::move(id));
    }
  }
}

void CmLinks::accept_all(const std::vector<TestResources*>& lanes, std::chrono::milliseconds timeout,
                         const std::function<void()>& idle) {
  std::vector<std::pair<uint32_t, uint32_t>> where;  // global QP index -> (lane, QP)
  for (uint32_t t = 0; t < lanes.size(); ++t)
    for (uint32_t q = 0; q < lanes[t]->qps.size(); ++q) where.emplace_back(t, q);
  std::vector<bool> taken(where.size(), false);
  size_t accepted = 0, established = 0;
  while (established < where.size()) {
    verbs::CmEvent e = channel_.next(timeout, "rdma_cm: the client connected " + std::to_string(accepted) + " of " +
                                                  std::to_string(where.size()) + " QPs, then nothing came within " +
                                                  seconds_text(timeout),
                                     idle);
    if (e.type == RDMA_CM_EVENT_ESTABLISHED) {
      ++established;
      continue;
    }
    if (e.type != RDMA_CM_EVENT_CONNECT_REQUEST)
      throw Error("rdma_cm: unexpected " + event_text(e) + " while accepting the client's QPs");
    verbs::CmId id = verbs::CmId::adopt(e.id);
    uint32_t i = 0;
    if (!decode_index(e.private_data, &i) || i >= where.size() || taken[i]) {
      id.reject("bad QP index");
      throw Error("rdma_cm: a connection request with no valid QP index (not from this point's client?)");
    }
    taken[i] = true;
    TestResources& lane = *lanes[where[i].first];
    const uint32_t q = where[i].second;
    check_device(id, lane.dev, "the client");
    const bool ours = !lane.dev.is_iwarp();  // iWARP: the provider moves the QP (connect_all)
    if (ours) to_rtr(id, lane, q);
    id.accept(lane.qps[q].qpn(), std::min(lane.rd_atomic, e.responder_resources),
              std::min(lane.rd_atomic, e.initiator_depth));
    if (ours) to_rts(id, lane, q);
    ids_.push_back(std::move(id));
    ++accepted;
  }
}

CmRoute resolve_cm_route(const std::string& host, std::chrono::milliseconds timeout) {
  verbs::CmChannel ch;
  verbs::CmId id(ch);
  id.resolve(ch, host, 1, timeout);  // any port: only the address and route are resolved
  CmRoute r;
  r.address = host;
  r.device = id.device_name();
  r.port = id.port_num();
  r.gid = gid_to_string(id.source_gid());
  return r;
}

std::string iwarp_cm_address(const std::string& host, const std::string& device, const std::string& netdev) {
  const bool loopback = host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
  if (!loopback) return host;
  std::string addr = interface_ipv4(netdev);
  if (addr.empty())
    throw ConfigError(device + " is iWARP and its interface '" + netdev +
                      "' has no IPv4 address for RDMA-CM: ip addr add ADDR/PREFIX dev " + netdev);
  return addr;
}

void check_cm_device(const CmRoute& route, const std::string& device, uint8_t port) {
  if (route.device == device && route.port == port) return;
  throw Error(route_mismatch(route.address, route.device, route.port, device, port));
}

}  // namespace rdmasweep
