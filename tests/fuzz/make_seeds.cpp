// Writes the seed corpora of the fuzz targets from the real encoders, so seeds
// follow the protocol: `fuzz_seeds DIR` writes DIR/protocol/* and DIR/sweep/*
// (the committed tests/fuzz/corpus; the configs/*.json are copied there by hand).
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/control/protocol.hpp"

using namespace rdmasweep;
using namespace rdmasweep::control;
using nlohmann::json;

static std::string dir;

static void put(const std::string& name, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  Hello h;
  h.tool_version = "0.1.0";
  h.host = "rxe-lab";
  h.device = "rxe0";
  h.firmware = "";
  h.link_layer = "Ethernet";
  h.kernel = "6.1.0-18-amd64";
  h.active_mtu = 1024;
  h.rate_gbps = 2.5;
  h.max_qp = 1 << 16;
  h.max_cqe = 1 << 18;

  Endpoint e;
  e.lid = 0;
  e.gid = "::ffff:192.0.2.1";
  e.mtu = 3;
  e.rkey = 0x1234;
  e.addr = 0x7f0000001000;
  e.slot_bytes = 65536;
  e.regions = 2;
  e.qpn = {17, 18};
  e.psn = {0x123456, 0xabcdef};

  Counts c{{1000, 1000}};

  SetupRequest s;
  s.cfg.work.op = Op::Write;
  s.cfg.work.qps = 2;
  s.cfg.work.size = 4096;
  s.cfg.knobs.cq_depth = 1024;
  s.slot_bytes = 4096;
  s.reuse = true;
  s.peer = {e};  // a SETUP that reuses QPs carries the client's endpoints
  SetupRequest lat;
  lat.cfg.work.op = Op::Read;
  lat.cfg.work.mode = Mode::Lat;
  lat.cfg.work.duration = 1.5;
  lat.slot_bytes = 65536;

  dir = argv[1] + std::string("/protocol");
  std::string hello = encode_frame(MsgType::Hello, to_json(h));
  std::string setup = encode_frame(MsgType::Setup, to_json(s));
  put("hello", hello);
  put("setup", setup);
  put("setup-read-lat", encode_frame(MsgType::Setup, to_json(lat)));
  put("setup-ok", encode_frame(MsgType::SetupOk, to_json(e)));
  put("connect", encode_frame(MsgType::Connect, to_json(e)));
  put("ready", encode_frame(MsgType::Ready, json::object()));
  put("done", encode_frame(MsgType::Done, to_json(c)));
  put("result", encode_frame(MsgType::Result, to_json(c)));
  put("error", encode_frame(MsgType::Error, {{"message", "qps: 0 is out of range 1..1048576"}}));
  put("bye", encode_frame(MsgType::Bye, json::object()));
  const std::string tick = encode_frame(MsgType::Tick, json::object());
  put("tick", tick);
  // A client's whole conversation, as one stream.
  put("session", hello + tick + setup + encode_frame(MsgType::Connect, to_json(e)) + tick +
                     encode_frame(MsgType::Ready, json::object()) + encode_frame(MsgType::Done, to_json(c)) + tick +
                     encode_frame(MsgType::Bye, json::object()));
  // Odd ones: truncated, bad version and type, payloads without a frame.
  put("truncated-header", hello.substr(0, 7));
  put("truncated-payload", hello.substr(0, hello.size() - 5));
  std::string v2 = hello;
  v2[5] = static_cast<char>(kProtocolVersion + 1);
  put("bad-version", v2);
  std::string t0 = hello;
  t0[7] = 0;
  put("bad-type", t0);
  put("not-object", encode_frame(MsgType::Ready, json::array({1, 2, 3})));
  put("payload-endpoint", to_json(e).dump());
  put("payload-setup-bad", R"({"config":{"op":"send","qps":0,"signal_every":4294967295},"slot_bytes":-1,"reuse":1})");
  return 0;
}
