// The server's half of a session (core/point/session.hpp): serve_client follows one client
// point by point: SETUP (or ABANDON), the connection, then the following end of the
// point protocol (core/point/point_protocol.hpp): its loops, DONE, RESULT. The client's half is core/point/session.cpp.
#include <chrono>

#include "core/config/knobs.hpp"
#include "core/point/cm_connect.hpp"
#include "core/point/multicast_session.hpp"
#include "core/point/point_protocol.hpp"
#include "core/point/session.hpp"

namespace rdmasweep {

using control::MsgType;

namespace {

// --cm: the server listens for the client's RDMA-CM connection of every QP (its port
// in SETUP_OK) and accepts them before CONNECT comes; the initial receives are posted
// then (before READY, as connect() does).
class CmServer final : public Connector {
 public:
  CmServer(const verbs::Device& dev, const SessionOptions& opt) : dev_(dev), opt_(opt) {}
  void offer(PointResources& res, std::vector<Endpoint>& mine) override {
    res.cm = std::make_unique<CmLinks>();
    mine[0].cm_port = res.cm->listen(dev_);
  }
  void await(PointResources& res, control::PeerLink& link) override {
    res.cm->accept_all(res.lanes(), opt_.timeout, [this, &link] {
      auto m = link.try_recv();
      if (!m) return;
      // Its CONNECT: the client's QPs are connected on its side once our REP is in,
      // while our ESTABLISHED waits for its RTU (late, or lost and resent, toward us).
      if (m->type == MsgType::Connect && !early) {
        early = std::move(*m);
        return;
      }
      // Anything else: the client gave up (its side failed, it failed to connect, or was interrupted).
      unexpected_message(link, *m, MsgType::Connect);
    });
    for (uint32_t t = 0; t < res.threads(); ++t) res.lane(t).post_receives();
  }
  void connect(PointResources& res, const std::vector<Endpoint>& peer) override { res.set_remote(peer); }

 private:
  const verbs::Device& dev_;
  const SessionOptions& opt_;
};

}  // namespace

// `res` holds the previous point's resources, reused when the client asks. Sets up
// (or retargets) and connects this point's QPs, every thread's. Throws PeerAbandoned
// when the client's side failed.
static void serve_setup(LocalFabric& fabric, control::PeerLink& link, const control::SetupRequest& req,
                        const SessionOptions& opt, const control::Hello& client, std::unique_ptr<PointResources>& res) {
  const TestConfig& cfg = req.cfg;
  try {
    if (req.reuse) {
      if (!reusable(res.get(), cfg) || res->slot_bytes() != req.slot_bytes)
        throw verbs::Error("the client asked to reuse QPs this server does not have (protocol out of step)");
      res->retarget(cfg);
      res->set_remote(req.peer);  // the client's rkey for this test
    } else {
      res.reset();  // free the previous point's memory and QPs first
      // Reads and atomics in flight: what the client's device can take (this end's
      // --bidir initiator, and the responder the client's READs meet).
      res = make_resources({fabric.dev, fabric.gid, Role::Target, req.slot_bytes, memory_node(opt), client.max_qp_rd_atom},
                           cfg);
    }
  } catch (const std::exception& e) {
    link.send(MsgType::Error, {{"message", std::string("server cannot set up ") + point_name(cfg) + ": " + e.what()}});
    throw;
  }
  CmServer by_cm(fabric.dev, opt);
  Connector by_qp_data;
  follow_connect(*res, link, client.cm && !req.reuse ? by_cm : by_qp_data, {req.reuse, req.reuse});
  if (!req.reuse) log_qps(*res, "server", opt.verbose);
}

// Returns false when the client abandoned the point before it ran.
static bool serve_test(LocalFabric& fabric, control::Channel& ch, const control::SetupRequest& req,
                       const SessionOptions& opt, const control::Hello& client, std::unique_ptr<PointResources>& res,
                       const std::function<void(const std::string&)>& log) {
  const TestConfig& cfg = req.cfg;
  const CounterValues c0 = sample(fabric);
  control::ChannelLink link(ch, "the client", "the server");
  try {
    serve_setup(fabric, link, req, opt, client, res);
  } catch (const PeerAbandoned& a) {
    res.reset();
    if (log) log("client " + ch.peer() + " could not set up " + point_name(cfg) + " on its side: " + a.why);
    return false;
  }

  EndOptions eo = end_options(opt, fabric);
  if (fabric.counters.available())
    eo.add_to_result = [&fabric, &c0](control::Counts& result) {
      const auto t = std::chrono::steady_clock::now();  // every packet of the point has come and gone
      result.has_counters = true;
      result.counters = counter_delta(c0, sample_after(fabric, t));
      result.counters_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
  follow_end(*res, link, eo);
  return true;
}

size_t serve_client(LocalFabric& fabric, control::Channel& ch, const SessionOptions& opt,
                    const std::function<void(const std::string&)>& log,
                    const std::function<std::string(const control::Hello&)>& admit) {
  control::Hello client = control::hello_from_json(ch.expect(MsgType::Hello, opt.timeout));
  if (std::string why = admit ? admit(client) : ""; !why.empty()) {
    ch.send(MsgType::Error, {{"message", why}});
    log("client " + ch.peer() + " (" + client.host + ") refused: " + why);
    return 0;
  }
  control::Hello me = hello_with_cpus(fabric, opt);
  me.timeout_ms = static_cast<uint32_t>(opt.timeout.count());
  ch.send(MsgType::Hello, control::to_json(me));
  // A client that says nothing, not even a TICK, for its own --timeout is given up:
  // whatever it was doing, the point's threads stop and the server is free again.
  ch.start_heartbeat();
  ch.bound_silence(control::silence_bound(client.timeout_ms));
  log("client " + ch.peer() + " (" + client.host + ", " + client.device + ") connected" +
      (client.cm ? "; its QPs connect with RDMA-CM" : ""));
  size_t served = 0;
  std::unique_ptr<PointResources> res;
  McastReceiver mcast(fabric, opt);  // --join: a --multicast client's datagrams
  while (true) {
    control::Message m = ch.recv(kTestWait);
    if (m.type == MsgType::Bye) return served;
    if (m.type == MsgType::Error) throw control::ChannelError("client stopped: " + control::error_from_json(m.body));
    if (mcast.handle(ch, m)) {
      served += m.type == MsgType::McastPoint;
      continue;
    }
    if (m.type != MsgType::Setup)
      throw control::ProtocolError(std::string("expected SETUP, got ") + control::to_string(m.type));
    if (serve_test(fabric, ch, control::setup_from_json(m.body), opt, client, res, log)) ++served;
  }
}

}  // namespace rdmasweep
