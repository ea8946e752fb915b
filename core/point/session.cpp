#include "core/point/session.hpp"


#include "core/host/inventory.hpp"
#include "core/point/cm_connect.hpp"
#include "core/point/point_protocol.hpp"
#include "core/setup/sizing.hpp"

namespace rdmasweep {

using control::MsgType;
using namespace std::chrono_literals;

// ---- client ----

ClientSession::ClientSession(LocalFabric& fabric, control::Channel channel, SessionOptions opt)
    : fabric_(fabric), ch_(std::move(channel)), opt_(opt) {
  // iWARP QPs connect only through RDMA-CM: to the server's own address.
  if (fabric_.dev.is_iwarp() && opt_.cm_address.empty())
    opt_.cm_address = iwarp_cm_address(ch_.peer_address(), fabric_.dev.name(), fabric_.gid.netdev);
  control::Hello me = hello_with_cpus(fabric_, opt_);
  me.beside = opt_.beside;
  me.cm = !opt_.cm_address.empty();
  me.timeout_ms = static_cast<uint32_t>(opt_.timeout.count());
  ch_.send(MsgType::Hello, control::to_json(me));
  try {
    server_ = control::hello_from_json(ch_.expect(MsgType::Hello, opt_.timeout));
  } catch (const control::Timeout&) {
    // Connected but unanswered. A running server answers at once, busy or not (serve_forever
    // gives each connection its thread), so only these leave a HELLO unanswered.
    throw control::ChannelError("server " + ch_.peer() + " accepted the connection but did not answer within " +
                                std::to_string(opt_.timeout.count() / 1000) +
                                " s: a running rdmasweep server answers at once, even when busy, so it is stopped, "
                                "too loaded to answer, serving another client under --once, or not an rdmasweep "
                                "server (check the host and port; raise --timeout for a slow host)");
  }
  // From here each side ticks, and a server silent for our --timeout is given up.
  ch_.start_heartbeat();
  ch_.bound_silence(control::silence_bound(me.timeout_ms));
}

// The latest the point's last packet crossed the client's port: its window's end, when
// every packet of the point is acknowledged by then; --bidir's server direction may
// end later, before the server's RESULT (now).
static std::chrono::steady_clock::time_point last_traffic(const PointResult& r) {
  if (r.cfg.knobs.bidir || r.ended == std::chrono::steady_clock::time_point{}) return std::chrono::steady_clock::now();
  return r.ended;
}

PointResult ClientSession::run(const TestConfig& cfg, uint64_t slot) {
  WallTime wall;
  Laps laps(wall);
  const CounterValues c0 = sample(fabric_);
  laps.lap(&WallTime::counters);
  auto t0 = std::chrono::steady_clock::now();
  const bool reuse = reusable(res_.get(), cfg);
  if (reuse) {
    res_->retarget(cfg);
  } else {
    res_.reset();
    check_plan(cfg, fabric_.dev, slot);  // what fails without creating anything fails before the server does any work
  }
  std::exception_ptr failed;
  try {
    failed = set_up(cfg, slot, reuse);
  } catch (...) {
    broken_ = true;
    res_.reset();
    throw;
  }
  if (failed) std::rethrow_exception(failed);  // the server freed its side: the session goes on
  try {
    PointResult r = run_connected(*res_, reuse, t0, laps);
    r.reused = reuse;
    if (fabric_.counters.available()) {
      r.client_counters = counter_delta(c0, sample_after(fabric_, last_traffic(r)));
      r.has_client_counters = true;
    }
    laps.lap(&WallTime::counters);
    r.wall = wall;
    return r;
  } catch (...) {
    broken_ = true;  // the server is mid-test: this connection cannot run another point
    res_.reset();
    throw;
  }
}

namespace {

// --cm: every QP connected by RDMA-CM to the listener the server announced, then
// this test's remote buffer and the initial receives, as connect() does.
class CmClient final : public Connector {
 public:
  explicit CmClient(const SessionOptions& opt) : opt_(opt) {}
  void connect(PointResources& res, const std::vector<Endpoint>& peer) override {
    if (peer.at(0).cm_port == 0)
      throw verbs::Error("--cm: the server offered no RDMA-CM listener (an older rdmasweep server?): run the same "
                         "rdmasweep version on both hosts");
    res.cm = std::make_unique<CmLinks>();
    res.cm->connect_all(res.lanes(), opt_.cm_address, peer[0].cm_port, opt_.timeout);
    res.set_remote(peer);
    for (uint32_t t = 0; t < res.threads(); ++t) res.lane(t).post_receives();
  }

 private:
  const SessionOptions& opt_;
};

}  // namespace

std::exception_ptr ClientSession::set_up(const TestConfig& cfg, uint64_t slot, bool reuse) {
  if (reuse) {
    ch_.send(MsgType::Setup, control::to_json(control::SetupRequest{cfg, res_->slot_bytes(), true, res_->local_endpoints()}));
    return nullptr;
  }
  ch_.send(MsgType::Setup, control::to_json(control::SetupRequest{cfg, message_stride(cfg, slot), false, {}}));
  std::string why;
  std::exception_ptr failed;
  try {
    res_ = make_resources({fabric_.dev, fabric_.gid, Role::Initiator, slot, memory_node(opt_), server_.max_qp_rd_atom}, cfg);
    return nullptr;
  } catch (const std::exception& e) {
    why = e.what();
    failed = std::current_exception();
  }
  res_.reset();
  // The server created its side meanwhile: it answers, then frees it.
  ch_.expect(MsgType::SetupOk, opt_.timeout);
  ch_.send(MsgType::Abandon, {{"message", why}});
  return failed;
}

PointResult ClientSession::run_connected(PointResources& res, bool reuse, std::chrono::steady_clock::time_point t0,
                                         Laps& laps) {
  control::ChannelLink link(ch_, "the server", "the client");
  CmClient by_cm(opt_);
  Connector by_qp_data;
  lead_connect(res, link, opt_.cm_address.empty() ? by_qp_data : by_cm, {reuse, reuse}, opt_.timeout);
  if (!reuse) log_qps(res, "client", opt_.verbose);
  double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  laps.lap(&WallTime::setup);

  EndOptions eo = end_options(opt_, fabric_);
  eo.laps = &laps;
  control::Counts got;
  PointResult out = lead_end(res, link, eo, &got);
  out.setup_seconds = setup;
  laps.split(&WallTime::counters, got.counters_seconds, &WallTime::control);  // the server's wait is inside
  return out;
}

void ClientSession::close(const std::string& error) {
  try {
    if (error.empty())
      ch_.send(MsgType::Bye);
    else
      ch_.send(MsgType::Error, {{"message", error}});
  } catch (const std::exception&) {
    // The server may already be gone; nothing more to tell it.
  }
}

}  // namespace rdmasweep
