#include "core/control/protocol.hpp"
#include "core/control/fields.hpp"

#include <algorithm>

#include "core/config/knobs.hpp"
#include "core/config/refusals.hpp"

namespace rdmasweep::control {

using nlohmann::json;

const char* to_string(MsgType t) {
  switch (t) {
    case MsgType::Hello: return "HELLO";
    case MsgType::Setup: return "SETUP";
    case MsgType::SetupOk: return "SETUP_OK";
    case MsgType::Connect: return "CONNECT";
    case MsgType::Ready: return "READY";
    case MsgType::Done: return "DONE";
    case MsgType::Result: return "RESULT";
    case MsgType::Error: return "ERROR";
    case MsgType::Bye: return "BYE";
    case MsgType::Tick: return "TICK";
    case MsgType::Abandon: return "ABANDON";
    case MsgType::Probe: return "PROBE";
    case MsgType::McastStart: return "MCAST_START";
    case MsgType::McastPoint: return "MCAST_POINT";
    case MsgType::McastSent: return "MCAST_SENT";
    case MsgType::McastResult: return "MCAST_RESULT";
  }
  return "?";
}

static void put_be(std::string& s, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
static uint64_t get_be(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

std::string encode_frame(MsgType type, const json& body) {
  std::string payload = body.dump();
  if (payload.size() > kMaxPayload) throw ProtocolError("control message too large: " + std::to_string(payload.size()) + " bytes");
  std::string s = "RDSW";
  put_be(s, kProtocolVersion, 2);
  put_be(s, static_cast<uint16_t>(type), 2);
  put_be(s, payload.size(), 4);
  return s + payload;
}

Header decode_header(const uint8_t* p) {
  if (p[0] != 'R' || p[1] != 'D' || p[2] != 'S' || p[3] != 'W')
    throw ProtocolError("not an rdmasweep control message (bad magic): is another program using this port?");
  uint16_t version = static_cast<uint16_t>(get_be(p + 4, 2));
  if (version != kProtocolVersion)
    throw ProtocolError("peer speaks control protocol " + std::to_string(version) + ", this rdmasweep speaks " +
                        std::to_string(kProtocolVersion) + ": run the same rdmasweep version on both hosts");
  uint16_t type = static_cast<uint16_t>(get_be(p + 6, 2));
  if (type < static_cast<uint16_t>(MsgType::Hello) || type > static_cast<uint16_t>(kLastMsgType))
    throw ProtocolError("unknown control message type " + std::to_string(type));
  uint32_t len = static_cast<uint32_t>(get_be(p + 8, 4));
  if (len > kMaxPayload) throw ProtocolError("control message length " + std::to_string(len) + " is over the limit");
  return Header{static_cast<MsgType>(type), len};
}

json decode_payload(const std::string& payload) {
  json j = json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw ProtocolError("control message payload is not a JSON object");
  return j;
}

std::chrono::milliseconds silence_bound(uint32_t peer_timeout_ms) {
  return std::max(std::chrono::milliseconds(peer_timeout_ms), 6 * kTickEvery);
}

json to_json(const Hello& h) {
  return {{"protocol", h.protocol}, {"tool_version", h.tool_version}, {"host", h.host},
          {"device", h.device},     {"firmware", h.firmware},         {"link_layer", h.link_layer},
          {"kernel", h.kernel},     {"active_mtu", h.active_mtu},     {"rate_gbps", h.rate_gbps},
          {"max_qp", h.max_qp},     {"max_cqe", h.max_cqe},           {"max_qp_rd_atom", h.max_qp_rd_atom},
          {"gid", h.gid},           {"gid_index", h.gid_index},       {"gid_type", h.gid_type},
          {"cpus", h.cpus},         {"beside", h.beside},             {"cm", h.cm},
          {"timeout_ms", h.timeout_ms}, {"capabilities", h.capabilities}, {"join", h.join}};
}

Hello hello_from_json(const json& j) {
  Hello h;
  h.protocol = field<uint32_t>(j, "protocol");
  h.tool_version = field<std::string>(j, "tool_version");
  h.host = field<std::string>(j, "host");
  h.device = field<std::string>(j, "device");
  h.firmware = field<std::string>(j, "firmware");
  h.link_layer = field<std::string>(j, "link_layer");
  h.kernel = field<std::string>(j, "kernel");
  h.active_mtu = field<uint32_t>(j, "active_mtu");
  h.rate_gbps = field<double>(j, "rate_gbps");
  h.max_qp = field<uint32_t>(j, "max_qp");
  h.max_cqe = field<uint32_t>(j, "max_cqe");
  if (j.contains("max_qp_rd_atom")) h.max_qp_rd_atom = field<uint32_t>(j, "max_qp_rd_atom");
  if (j.contains("gid")) h.gid = field<std::string>(j, "gid");
  if (j.contains("gid_index")) h.gid_index = field<uint32_t>(j, "gid_index");
  if (j.contains("gid_type")) h.gid_type = field<std::string>(j, "gid_type");
  if (j.contains("cpus")) h.cpus = field<std::string>(j, "cpus");
  if (j.contains("beside")) h.beside = field<bool>(j, "beside");
  if (j.contains("cm")) h.cm = field<bool>(j, "cm");
  if (j.contains("timeout_ms")) h.timeout_ms = field<uint32_t>(j, "timeout_ms");
  if (j.contains("capabilities")) {
    h.capabilities = j["capabilities"];
    if (!h.capabilities.is_object() && !h.capabilities.is_null())
      throw ProtocolError("control message field 'capabilities' is not an object");
    if (h.capabilities.dump().size() > 1024) throw ProtocolError("control message field 'capabilities' is too long");
  }
  if (j.contains("join")) h.join = field<std::string>(j, "join");
  if (h.cpus.size() > 512) throw ProtocolError("control message field 'cpus' is too long");
  if (h.join.size() > 64) throw ProtocolError("control message field 'join' is too long");
  return h;
}

json to_json(const Endpoint& e) {
  json j = {{"lid", e.lid},   {"gid", e.gid},       {"mtu", e.mtu},         {"rkey", e.rkey}, {"addr", e.addr},
            {"slot_bytes", e.slot_bytes}, {"regions", e.regions}, {"qpn", e.qpn}, {"psn", e.psn}};
  if (!e.rkeys.empty()) j["rkeys"] = e.rkeys;
  if (e.cm_port != 0) j["cm_port"] = e.cm_port;
  if (e.credit_rkey != 0) {
    j["credit_addr"] = e.credit_addr;
    j["credit_rkey"] = e.credit_rkey;
  }
  return j;
}

Endpoint endpoint_from_json(const json& j, uint32_t expected_qps) {
  Endpoint e;
  e.lid = field<uint16_t>(j, "lid");
  e.gid = field<std::string>(j, "gid");
  if (e.gid.size() > 64) throw ProtocolError("control message field 'gid' is too long");
  e.mtu = field<uint8_t>(j, "mtu");
  if (e.mtu < 1 || e.mtu > 5) throw ProtocolError("control message field 'mtu' is out of range");
  e.rkey = field<uint32_t>(j, "rkey");
  e.addr = field<uint64_t>(j, "addr");
  e.slot_bytes = field<uint64_t>(j, "slot_bytes");
  e.regions = field<uint32_t>(j, "regions");
  if (e.regions != 1 && e.regions != expected_qps) throw ProtocolError("control message field 'regions' does not match the QP count");
  e.qpn = array_field<uint32_t>(j, "qpn", expected_qps);
  e.psn = array_field<uint32_t>(j, "psn", expected_qps);
  if (j.contains("rkeys")) e.rkeys = array_field<uint32_t>(j, "rkeys", e.regions);
  if (j.contains("cm_port")) e.cm_port = field<uint16_t>(j, "cm_port");
  if (j.contains("credit_rkey")) {
    e.credit_addr = field<uint64_t>(j, "credit_addr");
    e.credit_rkey = field<uint32_t>(j, "credit_rkey");
  }
  return e;
}

json to_json(const std::vector<Endpoint>& lanes) {
  if (lanes.size() == 1) return to_json(lanes[0]);
  json a = json::array();
  for (const Endpoint& e : lanes) a.push_back(to_json(e));
  return {{"lanes", a}};
}

std::vector<Endpoint> endpoints_from_json(const json& j, uint32_t threads, uint32_t qps_per_thread) {
  if (threads == 1) return {endpoint_from_json(j, qps_per_thread)};
  if (!j.is_object() || !j.contains("lanes") || !j["lanes"].is_array() || j["lanes"].size() != threads)
    throw ProtocolError("control message field 'lanes' must list one endpoint per thread (" + std::to_string(threads) + ")");
  std::vector<Endpoint> out;
  for (const json& e : j["lanes"]) out.push_back(endpoint_from_json(e, qps_per_thread));
  return out;
}

json to_json(const Counts& c) {
  json j = {{"per_qp", c.per_qp}, {"cpu_seconds", c.cpu_seconds}};
  if (c.has_counters) j["counters"] = c.counters;
  if (c.counters_seconds > 0) j["counters_seconds"] = c.counters_seconds;
  if (c.atomic_sum) j["atomic_sum"] = *c.atomic_sum;
  if (c.reverse)
    j["reverse"] = {{"sent", c.reverse->sent}, {"messages", c.reverse->messages}, {"seconds", c.reverse->seconds}};
  return j;
}

Counts counts_from_json(const json& j, uint32_t expected_qps) {
  Counts c;
  c.per_qp = array_field<uint64_t>(j, "per_qp", expected_qps);
  c.cpu_seconds = field<double>(j, "cpu_seconds");
  if (!(c.cpu_seconds >= 0 && c.cpu_seconds < 1e9)) throw ProtocolError("control message field 'cpu_seconds' is out of range");
  if (auto it = j.find("counters"); it != j.end()) {
    // sysfs file names and their deltas: bounded, so a bad peer cannot bloat the results.
    if (!it->is_object() || it->size() > 1024) throw ProtocolError("control message field 'counters' must be an object of at most 1024 counters");
    for (auto e = it->begin(); e != it->end(); ++e) {
      if (e.key().empty() || e.key().size() > 64 || !e.value().is_number_unsigned())
        throw ProtocolError("control message field 'counters' has a bad entry '" + e.key().substr(0, 64) + "'");
      c.counters[e.key()] = e.value().get<uint64_t>();
    }
    c.has_counters = true;
  }
  if (j.contains("counters_seconds")) {
    c.counters_seconds = field<double>(j, "counters_seconds");
    if (!(c.counters_seconds >= 0 && c.counters_seconds < 1e9))
      throw ProtocolError("control message field 'counters_seconds' is out of range");
  }
  if (j.contains("atomic_sum")) c.atomic_sum = field<uint64_t>(j, "atomic_sum");
  if (auto it = j.find("reverse"); it != j.end()) {
    if (!it->is_object()) throw ProtocolError("control message field 'reverse' must be an object");
    Counts::Reverse r;
    r.sent = array_field<uint64_t>(*it, "sent", expected_qps);
    r.messages = field<uint64_t>(*it, "messages");
    r.seconds = field<double>(*it, "seconds");
    if (!(r.seconds >= 0 && r.seconds < 1e9)) throw ProtocolError("control message field 'seconds' is out of range");
    c.reverse = std::move(r);
  }
  return c;
}

json to_json(const SetupRequest& s) {
  json j = {{"config", s.cfg}, {"slot_bytes", s.slot_bytes}, {"reuse", s.reuse}};
  if (s.reuse) j["endpoints"] = to_json(s.peer);
  return j;
}

SetupRequest setup_from_json(const json& j) {
  SetupRequest s;
  auto cfg = j.find("config");
  if (cfg == j.end()) throw ProtocolError("control message lacks 'config'");
  try {
    from_json(*cfg, s.cfg);
    validate(s.cfg);
  } catch (const ConfigError& e) {
    throw ProtocolError(std::string("bad test configuration from peer: ") + e.what());
  }
  s.slot_bytes = field<uint64_t>(j, "slot_bytes");
  if (s.slot_bytes < s.cfg.work.size || s.slot_bytes > (uint64_t{1} << 30))
    throw ProtocolError("control message field 'slot_bytes' is out of range");
  auto reuse = j.find("reuse");
  if (reuse == j.end() || !reuse->is_boolean()) throw ProtocolError("control message lacks boolean 'reuse'");
  s.reuse = reuse->get<bool>();
  if (s.reuse) {
    auto e = j.find("endpoints");
    if (e == j.end()) throw ProtocolError("control message lacks 'endpoints' (a SETUP that reuses QPs carries them)");
    s.peer = endpoints_from_json(*e, s.cfg.knobs.threads, s.cfg.work.qps);
  }
  return s;
}

std::string error_from_json(const json& j) { return field<std::string>(j, "message"); }

}  // namespace rdmasweep::control
