#include "core/control/mcast_messages.hpp"

#include "core/config/knobs.hpp"
#include "core/control/fields.hpp"
#include "core/config/multicast_point.hpp"
#include "core/config/refusals.hpp"

namespace rdmasweep::control {

using nlohmann::json;

json to_json(const Probe& p) { return {{"t1", p.t1}, {"t2", p.t2}}; }

Probe probe_from_json(const json& j) { return {field<uint64_t>(j, "t1"), field<uint64_t>(j, "t2")}; }

json to_json(const McastStart& s) {
  json points = json::array();
  for (const TestConfig& c : s.points) points.push_back(c);
  return {{"group", s.group}, {"points", points}};
}

McastStart mcast_start_from_json(const json& j) {
  McastStart s;
  s.group = field<std::string>(j, "group");
  if (!is_multicast_address(s.group)) throw ProtocolError("control message field 'group' is not a multicast address");
  auto it = j.find("points");
  if (it == j.end() || !it->is_array() || it->empty() || it->size() > 100000)
    throw ProtocolError("control message lacks array 'points' (1 to 100000 of them)");
  for (const json& p : *it) {
    TestConfig c;
    try {
      from_json(p, c);
      validate(c);
      check_multicast_point(c);
    } catch (const std::exception& e) {
      throw ProtocolError(std::string("bad multicast point from peer: ") + e.what());
    }
    s.points.push_back(c);
  }
  return s;
}

json to_json(const McastPoint& p) {
  return {{"index", p.index}, {"tag", p.tag}, {"latency", p.latency}, {"offset_ns", p.offset_ns}};
}

McastPoint mcast_point_from_json(const json& j, size_t points) {
  McastPoint p;
  p.index = field<uint32_t>(j, "index");
  if (p.index >= points) throw ProtocolError("control message field 'index' is past the multicast points");
  p.tag = field<uint32_t>(j, "tag");
  p.latency = field<bool>(j, "latency");
  auto it = j.find("offset_ns");
  if (it == j.end() || !it->is_number_integer()) throw ProtocolError("control message lacks integer 'offset_ns'");
  p.offset_ns = it->get<int64_t>();
  return p;
}

json to_json(const McastArrived& a) {
  return {{"received", a.received}, {"warmup_received", a.warmup_received}, {"measured", a.measured},
          {"windowed", a.windowed}, {"late", a.late},   {"before_send", a.before_send},
          {"seconds", a.seconds},   {"cpu_seconds", a.cpu_seconds}, {"latency", a.latency},
          {"histogram", a.histogram}};
}

McastArrived mcast_arrived_from_json(const json& j) {
  McastArrived a;
  a.received = field<uint64_t>(j, "received");
  a.warmup_received = field<uint64_t>(j, "warmup_received");
  a.measured = field<uint64_t>(j, "measured");
  a.windowed = field<uint64_t>(j, "windowed");
  a.late = field<uint64_t>(j, "late");
  a.before_send = field<uint64_t>(j, "before_send");
  a.seconds = field<double>(j, "seconds");
  a.cpu_seconds = field<double>(j, "cpu_seconds");
  if (a.warmup_received > a.received || a.measured > a.received || a.windowed > a.measured)
    throw ProtocolError("control message counts of a multicast receiver do not add up");
  for (const char* key : {"latency", "histogram"}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_object() || it->dump().size() > (1u << 20))
      throw ProtocolError(std::string("control message field '") + key + "' is not an object of at most 1 MiB");
    (std::string(key) == "latency" ? a.latency : a.histogram) = *it;
  }
  if (!a.latency.is_null())
    for (const auto& [k, v] : a.latency.items())
      if (!v.is_number()) throw ProtocolError("control message field 'latency' holds a non-number: " + k);
  return a;
}

}  // namespace rdmasweep::control
