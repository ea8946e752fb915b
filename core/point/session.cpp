#include "core/point/session.hpp"


#include "core/host/inventory.hpp"
#include "core/point/cm_connect.hpp"
#include "core/point/measured_run.hpp"
#include "core/point/point_checks.hpp"

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
    // Connected but unanswered: the server's accept queue holds us while it runs another client's tests.
    throw control::ChannelError("server " + ch_.peer() + " accepted the connection but did not answer within " +
                                std::to_string(opt_.timeout.count() / 1000) +
                                " s: it serves one client at a time, so another client is probably running against it "
                                "(wait for it, or raise --timeout to queue)");
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
  bool reuse = res_ && res_->can_serve(cfg);
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

// --cm: every QP connected by RDMA-CM to the listener the server announced, then
// this test's remote buffer and the initial receives, as connect() does.
static void connect_by_cm(PointResources& res, const std::vector<control::Endpoint>& peer, const SessionOptions& opt) {
  if (peer.at(0).cm_port == 0)
    throw verbs::Error("--cm: the server offered no RDMA-CM listener (an older rdmasweep server?): run the same "
                       "rdmasweep version on both hosts");
  res.cm = std::make_unique<CmLinks>();
  res.cm->connect_all(res.lanes(), opt.cm_address, peer[0].cm_port, opt.timeout);
  res.set_remote(peer);
  for (uint32_t t = 0; t < res.threads(); ++t) res.lane(t).post_receives();
}

std::exception_ptr ClientSession::set_up(const TestConfig& cfg, uint64_t slot, bool reuse) {
  if (reuse) {
    ch_.send(MsgType::Setup, control::to_json(control::SetupRequest{cfg, res_->slot_bytes(), true, res_->local_endpoints()}));
    return nullptr;
  }
  ch_.send(MsgType::Setup, control::to_json(control::SetupRequest{cfg, message_stride(cfg, slot), false, {}}));
  std::string why;
  std::exception_ptr failed;
  try {
    res_ = std::make_unique<PointResources>(fabric_.dev, fabric_.gid, cfg, Role::Initiator, slot, memory_node(opt_));
    res_->limit_reads(server_.max_qp_rd_atom);
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
  const TestConfig& cfg = res.cfg();
  const uint32_t nqp = static_cast<uint32_t>(total_qps(cfg));
  std::vector<control::Endpoint> peer =
      control::endpoints_from_json(ch_.expect(MsgType::SetupOk, opt_.timeout), cfg.knobs.threads, cfg.work.qps);
  if (reuse) {
    res.set_remote(peer);  // this test's rkey; the server had ours in SETUP and is ready
  } else {
    if (opt_.cm_address.empty()) res.connect(peer);
    else connect_by_cm(res, peer, opt_);
    log_qps(res, "client", opt_.verbose);
    ch_.send(MsgType::Connect, control::to_json(res.local_endpoints()));
    ch_.expect(MsgType::Ready, opt_.timeout);
  }
  double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  laps.lap(&WallTime::setup);

  RunControl ctl;
  ctl.interrupted = opt_.interrupted;
  ctl.idle_timeout = opt_.timeout;
  // UD latency has one message in flight per QP: a lost one stops its QP.
  if (is_ud(cfg) && cfg.work.mode == Mode::Lat)
    ctl.idle_hint = "a UD ping or its pong was lost (UD does not retransmit), or the peer is gone or stuck";
  ctl.on_idle = [this] {
    // The server only speaks during a test to report a failure.
    if (auto m = ch_.try_recv()) {
      if (m->type == MsgType::Error) throw control::ChannelError("server reported: " + control::error_from_json(m->body));
      throw control::ProtocolError(std::string("unexpected ") + control::to_string(m->type) + " from server during a test");
    }
  };

  std::vector<uint64_t> sent;
  PointResult out;
  try {
    out = measure_threads(res, ctl, effective_interval(opt_.interval, cfg.work), opt_.placement, sent);
  } catch (const verbs::CompletionError& e) {
    if (e.status() == IBV_WC_WR_FLUSH_ERR) throw_server_cause();
    // iWARP has no receiver-not-ready retry: a SEND that finds no receive posted ends
    // the connection (the peer's TERMINATE, reported here as a local QP error). The
    // credit scheme (core/engine/send_credits.hpp) exists so that this never happens.
    if (e.status() == IBV_WC_LOC_QP_OP_ERR && cfg.work.op == Op::Send && fabric_.dev.is_iwarp())
      throw verbs::CompletionError(std::string(e.what()) +
                                       ": on iWARP a SEND that finds no receive posted ends the connection (no "
                                       "RNR retry), which the SEND credit should rule out: please report it",
                                   e.status());
    throw;
  }
  res.fence_writes(opt_.timeout);
  out.setup_seconds = setup;
  laps.split(&WallTime::measured, out.seconds, &WallTime::warmup);
  const Workload& w = cfg.work;

  control::Counts done;
  done.per_qp = sent;
  ch_.send(MsgType::Done, control::to_json(done));
  control::Counts got = control::counts_from_json(ch_.expect(MsgType::Result, kTestWait), nqp);
  res.close_window();  // the server is done with our buffer
  out.server_cpu_seconds = got.cpu_seconds;
  out.has_server_counters = got.has_counters;
  out.server_counters = std::move(got.counters);
  if (is_atomic(w.op)) {
    check_atomic_sum(cfg, sent, got.atomic_sum);
    out.atomic_sum = *got.atomic_sum;
  }
  if (cfg.knobs.bidir) take_reverse(res, got, out);
  if (is_ud(cfg)) {  // datagrams may be lost: counted, not an error
    out.datagram = true;
    for (uint32_t q = 0; q < nqp; ++q) {
      out.sent += sent[q];
      out.received += got.per_qp[q];
    }
  } else if (w.op == Op::Send && got.per_qp != sent) {
    for (uint32_t q = 0; q < nqp; ++q)
      if (got.per_qp[q] != sent[q])
        throw verbs::Error("server received " + std::to_string(got.per_qp[q]) + " messages on QP " + std::to_string(q) +
                           " but " + std::to_string(sent[q]) + " were sent");
  }
  laps.split(&WallTime::counters, got.counters_seconds, &WallTime::control);  // the server's wait is inside
  return out;
}

// A flushed completion is the effect of an earlier failure; on iWARP often the server's:
// it tears its QPs down (their TCP connections close, flushing ours at once) just
// before its ERROR leaves. That reason, if it comes within a second, is the one to give.
void ClientSession::throw_server_cause() {
  std::optional<control::Message> m;
  try {
    m = ch_.recv(std::chrono::seconds(1));
  } catch (const std::exception&) {
    // nothing came, or the server is gone: the flush is all there is to say
  }
  if (m && m->type == MsgType::Error) throw control::ChannelError("server reported: " + control::error_from_json(m->body));
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
