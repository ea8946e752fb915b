// libFuzzer target for the control protocol: the bytes a peer (or anything that
// connects to the port) can send us. Contract under test: every decoder returns
// or throws control::ProtocolError, for any input. A crash, a sanitizer report or
// any other exception escaping is a bug (libFuzzer reports an escaped exception as
// a deadly signal and saves the input).
//
// Structure: an input starting with the magic "RDSW" is a byte stream of frames,
// taken apart as Channel::take() does (header, then a payload of the header's
// length; a truncated last frame is left unread, as the channel would wait for
// more). Any other input is one payload. Each decoded payload goes to every typed
// decoder (the sender picks the type, so any body can reach any decoder), with a
// few expected QP counts. Whatever decodes is checked to survive a round trip
// through to_json/encode_frame/decode_* unchanged.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/knobs.hpp"
#include "core/config/refusals.hpp"
#include "core/control/mcast_messages.hpp"
#include "core/control/protocol.hpp"

using namespace rdmasweep;
using namespace rdmasweep::control;
using nlohmann::json;

namespace {

[[noreturn]] void fail(const char* what, const json& j) {
  std::fprintf(stderr, "fuzz_protocol: %s\n  body: %.2000s\n", what, j.dump().c_str());
  std::abort();
}

// A message we produced ourselves must decode: a ProtocolError here is a bug too.
json reframe(MsgType type, const json& body) {
  std::string f;
  try {
    f = encode_frame(type, body);
    Header h = decode_header(reinterpret_cast<const uint8_t*>(f.data()));
    if (h.type != type || h.length != f.size() - kHeaderBytes) fail("header does not round-trip", body);
    return decode_payload(f.substr(kHeaderBytes));
  } catch (const ProtocolError& e) {
    fail((std::string("our own frame does not decode: ") + e.what()).c_str(), body);
  }
}

bool same(const Hello& a, const Hello& b) {
  return a.protocol == b.protocol && a.tool_version == b.tool_version && a.host == b.host && a.device == b.device &&
         a.firmware == b.firmware && a.link_layer == b.link_layer && a.kernel == b.kernel &&
         a.active_mtu == b.active_mtu && a.rate_gbps == b.rate_gbps && a.max_qp == b.max_qp && a.max_cqe == b.max_cqe;
}

bool same(const Endpoint& a, const Endpoint& b) {
  return a.lid == b.lid && a.gid == b.gid && a.mtu == b.mtu && a.rkey == b.rkey && a.addr == b.addr &&
         a.slot_bytes == b.slot_bytes && a.regions == b.regions && a.qpn == b.qpn && a.psn == b.psn;
}

void check_hello(const json& j) {
  Hello h;
  try {
    h = hello_from_json(j);
  } catch (const ProtocolError&) {
    return;
  }
  json again = reframe(MsgType::Hello, to_json(h));
  try {
    if (!same(h, hello_from_json(again))) fail("HELLO changes in a round trip", j);
  } catch (const ProtocolError& e) {
    fail((std::string("HELLO round trip rejected: ") + e.what()).c_str(), j);
  }
}

void check_endpoint(const json& j, uint32_t qps) {
  Endpoint e;
  try {
    e = endpoint_from_json(j, qps);
  } catch (const ProtocolError&) {
    return;
  }
  if (e.qpn.size() != qps || e.psn.size() != qps) fail("endpoint accepted with the wrong QP count", j);
  if (e.mtu < 1 || e.mtu > 5) fail("endpoint accepted with a bad MTU", j);
  json again = reframe(MsgType::Connect, to_json(e));
  try {
    if (!same(e, endpoint_from_json(again, qps))) fail("endpoint changes in a round trip", j);
  } catch (const ProtocolError& x) {
    fail((std::string("endpoint round trip rejected: ") + x.what()).c_str(), j);
  }
}

void check_counts(const json& j, uint32_t qps) {
  Counts c;
  try {
    c = counts_from_json(j, qps);
  } catch (const ProtocolError&) {
    return;
  }
  if (c.per_qp.size() != qps) fail("counts accepted with the wrong QP count", j);
  json again = reframe(MsgType::Result, to_json(c));
  try {
    if (counts_from_json(again, qps).per_qp != c.per_qp) fail("counts change in a round trip", j);
  } catch (const ProtocolError& x) {
    fail((std::string("counts round trip rejected: ") + x.what()).c_str(), j);
  }
}

void check_setup(const json& j) {
  SetupRequest s;
  try {
    s = setup_from_json(j);
  } catch (const ProtocolError&) {
    return;
  }
  // What the peer may ask for is exactly what validate() allows.
  try {
    validate(s.cfg);
  } catch (const ConfigError& e) {
    fail((std::string("SETUP accepted an invalid configuration: ") + e.what()).c_str(), j);
  }
  if (s.slot_bytes < s.cfg.work.size) fail("SETUP accepted slot_bytes below the message size", j);
  json again = reframe(MsgType::Setup, to_json(s));
  try {
    SetupRequest t = setup_from_json(again);
    if (json(t.cfg) != json(s.cfg) || t.slot_bytes != s.slot_bytes || t.reuse != s.reuse ||
        to_json(t.peer) != to_json(s.peer))
      fail("SETUP changes in a round trip", j);
  } catch (const ProtocolError& x) {
    fail((std::string("SETUP round trip rejected: ") + x.what()).c_str(), j);
  }
}

void check_error(const json& j) {
  std::string m;
  try {
    m = error_from_json(j);
  } catch (const ProtocolError&) {
    return;
  }
  json again = reframe(MsgType::Error, json{{"message", m}});
  try {
    if (error_from_json(again) != m) fail("ERROR changes in a round trip", j);
  } catch (const ProtocolError& x) {
    fail((std::string("ERROR round trip rejected: ") + x.what()).c_str(), j);
  }
}

// The multicast messages (client --multicast): each decodes or throws ProtocolError,
// and what decodes survives a round trip.
template <typename Decode, typename Same>
void check_round_trip(const json& j, MsgType type, const char* what, Decode decode, Same same) {
  try {
    auto v = decode(j);
    json again = reframe(type, to_json(v));
    try {
      if (!same(v, decode(again))) fail((std::string(what) + " changes in a round trip").c_str(), j);
    } catch (const ProtocolError& x) {
      fail((std::string(what) + " round trip rejected: " + x.what()).c_str(), j);
    }
  } catch (const ProtocolError&) {
  }
}

void check_mcast(const json& j) {
  check_round_trip(j, MsgType::Probe, "PROBE", probe_from_json,
                   [](const Probe& a, const Probe& b) { return a.t1 == b.t1 && a.t2 == b.t2; });
  check_round_trip(j, MsgType::McastStart, "MCAST_START", mcast_start_from_json,
                   [](const McastStart& a, const McastStart& b) { return a.group == b.group && a.points.size() == b.points.size(); });
  for (size_t n : {1u, 4u})
    check_round_trip(j, MsgType::McastPoint, "MCAST_POINT", [n](const json& x) { return mcast_point_from_json(x, n); },
                     [](const McastPoint& a, const McastPoint& b) {
                       return a.index == b.index && a.tag == b.tag && a.latency == b.latency && a.offset_ns == b.offset_ns;
                     });
  check_round_trip(j, MsgType::McastResult, "MCAST_RESULT", mcast_arrived_from_json,
                   [](const McastArrived& a, const McastArrived& b) {
                     return a.received == b.received && a.windowed == b.windowed && a.latency == b.latency;
                   });
}

// Array lengths in the body are the QP counts under which it could be valid.
void add_len(std::vector<uint32_t>& qps, const json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end() && it->is_array() && it->size() <= kMaxQps) qps.push_back(static_cast<uint32_t>(it->size()));
}

void payload(const std::string& bytes) {
  json j;
  try {
    j = decode_payload(bytes);
  } catch (const ProtocolError&) {
    return;
  }
  if (!j.is_object()) fail("decode_payload returned a non-object", j);
  check_hello(j);
  check_setup(j);
  check_error(j);
  check_mcast(j);
  std::vector<uint32_t> qps = {0, 1, 2, 3, 4, 16};
  add_len(qps, j, "qpn");
  add_len(qps, j, "psn");
  add_len(qps, j, "per_qp");
  for (uint32_t q : qps) {
    check_endpoint(j, q);
    check_counts(j, q);
  }
}

void frames(const std::string& in) {
  size_t pos = 0;
  while (in.size() - pos >= kHeaderBytes) {
    Header h;
    try {
      h = decode_header(reinterpret_cast<const uint8_t*>(in.data() + pos));
    } catch (const ProtocolError&) {
      return;
    }
    if (h.length > kMaxPayload) fail("decode_header accepted a length over the limit", json());
    if (static_cast<uint16_t>(h.type) < static_cast<uint16_t>(MsgType::Hello) ||
        static_cast<uint16_t>(h.type) > static_cast<uint16_t>(kLastMsgType))
      fail("decode_header accepted an unknown type", json());
    pos += kHeaderBytes;
    if (in.size() - pos < h.length) return;  // the channel would wait for the rest
    payload(in.substr(pos, h.length));
    pos += h.length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  if (size >= 4 && std::memcmp(data, "RDSW", 4) == 0) frames(in);
  else payload(in);
  return 0;
}
