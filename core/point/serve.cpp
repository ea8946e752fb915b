// The server's half of a session (core/point/session.hpp): serve_client follows one client
// point by point: SETUP (or ABANDON), the connection, the following side's loops, the
// counts it got, RESULT. The client's half is core/point/session.cpp.
#include <atomic>
#include <optional>

#include "core/config/knobs.hpp"
#include "core/point/cm_connect.hpp"
#include "core/point/point_checks.hpp"
#include "core/point/session.hpp"

namespace rdmasweep {

using control::MsgType;

// The client could not create its side of the point (SetupRequest): the server frees
// its own and waits for the next SETUP.
struct Abandoned {
  std::string why;
};

// The client's answer to SETUP_OK: its endpoints (CONNECT), or ABANDON.
static void take_abandon(const control::Message& m) {
  if (m.type == MsgType::Abandon) throw Abandoned{control::error_from_json(m.body)};
  if (m.type == MsgType::Error) throw control::ChannelError("client stopped: " + control::error_from_json(m.body));
}

// --cm: accepts the client's RDMA-CM connection of every QP on the listener announced
// in SETUP_OK, then posts the initial receives (before READY, as connect() does).
static void accept_by_cm(PointResources& res, control::Channel& ch, const SessionOptions& opt) {
  res.cm->accept_all(res.lanes(), opt.timeout, [&ch] {
    // The client speaks now only when it gave up (its side failed, it failed to connect, or was interrupted).
    if (auto m = ch.try_recv()) {
      take_abandon(*m);
      throw control::ProtocolError(std::string("unexpected ") + control::to_string(m->type) + " while its QPs connect");
    }
  });
  for (uint32_t t = 0; t < res.threads(); ++t) res.lane(t).post_receives();
  log_qps(res, "server", opt.verbose);
}

// `res` holds the previous point's resources, reused when the client asks. Sets up
// (or retargets) and connects this point's QPs, every thread's. Throws Abandoned when
// the client's side failed.
static void serve_setup(LocalFabric& fabric, control::Channel& ch, const control::SetupRequest& req,
                        const SessionOptions& opt, bool cm, std::unique_ptr<PointResources>& res) {
  const TestConfig& cfg = req.cfg;
  try {
    if (req.reuse) {
      if (!res || !res->can_serve(cfg) || res->slot_bytes() != req.slot_bytes)
        throw verbs::Error("the client asked to reuse QPs this server does not have (protocol out of step)");
      res->retarget(cfg);
      res->set_remote(req.peer);  // the client's rkey for this test
    } else {
      res.reset();  // free the previous point's memory and QPs first
      res = std::make_unique<PointResources>(fabric.dev, fabric.gid, cfg, Role::Target, req.slot_bytes, memory_node(opt));
    }
  } catch (const std::exception& e) {
    ch.send(MsgType::Error, {{"message", std::string("server cannot set up ") + point_name(cfg) + ": " + e.what()}});
    throw;
  }
  std::vector<control::Endpoint> mine = res->local_endpoints();
  const bool by_cm = cm && !req.reuse;
  if (by_cm) {
    res->cm = std::make_unique<CmLinks>();
    mine[0].cm_port = res->cm->listen(fabric.dev);
  }
  ch.send(MsgType::SetupOk, control::to_json(mine));
  if (req.reuse) return;  // connected, and ready: SETUP_OK said so
  if (by_cm) accept_by_cm(*res, ch, opt);
  // The client creates its side meanwhile (as long as that takes, with many QPs): a
  // client that stops is caught by its silence, not by a bound on its work.
  control::Message m = ch.recv(kTestWait);
  take_abandon(m);
  if (m.type != MsgType::Connect)
    throw control::ProtocolError(std::string("expected CONNECT from ") + ch.peer() + ", got " + control::to_string(m.type));
  std::vector<control::Endpoint> peer = control::endpoints_from_json(m.body, cfg.knobs.threads, cfg.work.qps);
  if (by_cm) {
    res->set_remote(peer);
  } else {
    res->connect(peer);
    log_qps(*res, "server", opt.verbose);
  }
  ch.send(MsgType::Ready);
}

// The client's DONE as every thread sees it: thread 0 reads the channel (its
// on_idle), the others pick the counts up at their own idle checks.
struct DoneBoard {
  std::optional<control::Counts> done;
  std::atomic<bool> posted{false};
};

// The following side's loops of one point, one per thread (core/point/lanes.hpp): thread
// 0 reads the client's DONE from the channel, every thread picks its counts up.
static LoopStats follow_point(PointResources& res, control::Channel& ch, const SessionOptions& opt, DoneBoard& board,
                              const std::function<void(const control::Message&)>& take_done) {
  RunControl ctl;
  ctl.interrupted = opt.interrupted;
  ctl.idle_timeout = kTestWait;  // the client decides when a test ends; EOF or keepalive tells us it died
  ctl.on_idle = [&] {
    if (auto m = ch.try_recv()) {
      take_done(*m);
      board.posted.store(true, std::memory_order_release);
    }
  };
  return follow_threads(res, ctl, opt.placement, [&]() -> const std::vector<uint64_t>* {
    return board.posted.load(std::memory_order_acquire) ? &board.done->per_qp : nullptr;
  });
}

// --bidir: this side's own direction, run as the client runs its (measure_threads);
// the client's DONE may come in meanwhile and is kept.
static PointResult lead_point(PointResources& res, control::Channel& ch, const SessionOptions& opt,
                              const std::function<void(const control::Message&)>& take_done, std::vector<uint64_t>& sent) {
  RunControl ctl;
  ctl.interrupted = opt.interrupted;
  ctl.idle_timeout = opt.timeout;
  ctl.on_idle = [&] {
    if (auto m = ch.try_recv()) take_done(*m);
  };
  PointResult mine = measure_threads(res, ctl, 0, opt.placement, sent);
  res.fence_writes(opt.timeout);  // before RESULT: the client then closes its window
  return mine;
}

// Returns false when the client abandoned the point before it ran.
static bool serve_test(LocalFabric& fabric, control::Channel& ch, const control::SetupRequest& req,
                       const SessionOptions& opt, bool cm, std::unique_ptr<PointResources>& res,
                       const std::function<void(const std::string&)>& log) {
  const TestConfig& cfg = req.cfg;
  const CounterValues c0 = sample(fabric);
  try {
    serve_setup(fabric, ch, req, opt, cm, res);
  } catch (const Abandoned& a) {
    res.reset();
    if (log) log("client " + ch.peer() + " could not set up " + point_name(cfg) + " on its side: " + a.why);
    return false;
  }

  const Workload& w = cfg.work;
  const uint32_t nqp = static_cast<uint32_t>(total_qps(cfg));
  DoneBoard board;
  auto take_done = [&](const control::Message& m) {
    if (m.type == MsgType::Error) throw control::ChannelError("client reported: " + control::error_from_json(m.body));
    if (m.type != MsgType::Done)
      throw control::ProtocolError(std::string("unexpected ") + control::to_string(m.type) + " from client during a test");
    board.done = control::counts_from_json(m.body, nqp);
  };
  std::vector<uint64_t> counts(nqp, 0);
  double cpu = 0;  // over the client's measured window, as the loops define it

  const bool bidir = cfg.knobs.bidir;
  const bool receives = w.op == Op::Send && w.mode == Mode::Bw && !bidir;
  const bool responds = w.mode == Mode::Lat && !fetches(w.op);
  std::optional<control::Counts::Reverse> reverse;
  if (bidir) {
    control::Counts::Reverse r;
    PointResult mine = lead_point(*res, ch, opt, take_done, r.sent);
    r.messages = mine.messages;
    r.seconds = mine.seconds;
    reverse = std::move(r);
    cpu = mine.cpu_seconds;
    if (both_ways_send(cfg)) counts = arrivals(*res);
  } else if (receives || responds) {
    LoopStats st = follow_point(*res, ch, opt, board, take_done);
    counts = std::move(st.per_qp);
    cpu = st.cpu_seconds;
  }
  if (!board.done) {
    // A passive target (WRITE/READ bw, READ lat) only waits for DONE: its CPU over
    // the window is what this wait costs (READY to DONE, the client's warm-up included).
    const double cpu0 = loop_cpu_seconds();
    take_done(ch.recv(kTestWait));
    if (!receives && !responds && !bidir) cpu = loop_cpu_seconds() - cpu0;
  }
  res->close_window();  // before RESULT: once the client has it, no rkey of this test works
  control::Counts result;
  if (is_atomic(w.op)) result.atomic_sum = atomic_sum(*res);
  result.reverse = std::move(reverse);
  result.per_qp = std::move(counts);
  result.cpu_seconds = cpu;
  if (fabric.counters.available()) {
    const auto t = std::chrono::steady_clock::now();  // every packet of the point has come and gone
    result.has_counters = true;
    result.counters = counter_delta(c0, sample_after(fabric, t));
    result.counters_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  ch.send(MsgType::Result, control::to_json(result));
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
  while (true) {
    control::Message m = ch.recv(kTestWait);
    if (m.type == MsgType::Bye) return served;
    if (m.type == MsgType::Error) throw control::ChannelError("client stopped: " + control::error_from_json(m.body));
    if (m.type != MsgType::Setup)
      throw control::ProtocolError(std::string("expected SETUP, got ") + control::to_string(m.type));
    if (serve_test(fabric, ch, control::setup_from_json(m.body), opt, client.cm, res, log)) ++served;
  }
}

}  // namespace rdmasweep
