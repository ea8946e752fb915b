#include "core/point/point_protocol.hpp"

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "core/config/knobs.hpp"
#include "core/point/measured_run.hpp"
#include "core/point/point_checks.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

using control::MsgType;

// Long enough for any wait of a point; a dead peer is noticed sooner by its link.
static constexpr std::chrono::milliseconds kPointWait = std::chrono::hours(24);

// A message the peer sends mid-point: only its ERROR is expected.
[[noreturn]] static void peer_spoke(const control::PeerLink& link, const control::Message& m) {
  if (m.type == MsgType::Error) throw control::PeerFailed(link.who() + " reported: " + control::error_from_json(m.body));
  throw control::ProtocolError(std::string("unexpected ") + control::to_string(m.type) + " from " + link.who() +
                               " during a test");
}

void unexpected_message(const control::PeerLink& link, const control::Message& m, MsgType want) {
  if (m.type == MsgType::Error) throw control::PeerFailed(link.who() + " reported: " + control::error_from_json(m.body));
  if (m.type == MsgType::Abandon) throw PeerAbandoned{control::error_from_json(m.body)};
  throw control::ProtocolError(std::string("expected ") + control::to_string(want) + " from " + link.who() + ", got " +
                               control::to_string(m.type));
}

// The peer's next message, which must be `want`. `spin` (--target-spin): the wait
// polls without sleeping.
static control::Message expect(control::PeerLink& link, MsgType want,
                               std::chrono::milliseconds timeout = kPointWait, bool spin = false) {
  control::Message m;
  try {
    m = spin ? link.recv_spinning(timeout) : link.recv(timeout);
  } catch (const control::Timeout& e) {  // say what was awaited, not only who was silent
    throw control::Timeout(std::string("waiting for ") + control::to_string(want) + ": " + e.what());
  }
  if (m.type != want) unexpected_message(link, m, want);
  return m;
}

// A flushed completion is the effect of an earlier failure, often the peer's: on
// iWARP it tears its QPs down (their TCP connections close, flushing ours at once)
// just before its ERROR leaves. That reason, if it comes within a second, is the one to give.
static void throw_peer_cause(control::PeerLink& link) {
  std::optional<control::Message> m;
  try {
    m = link.recv(std::chrono::seconds(1));
  } catch (const std::exception&) {
    return;  // nothing came, or the peer is gone: the flush is all there is to say
  }
  if (m->type == MsgType::Error) peer_spoke(link, *m);
}

// This end failed: the peer, in its loops or waiting for DONE or RESULT, is told why,
// so that it stops now, not on a timeout. A failure the peer reported is its own to tell.
template <class Body>
static auto telling_peer(control::PeerLink& link, Body body) -> decltype(body()) {
  try {
    return body();
  } catch (const control::PeerFailed&) {
    throw;
  } catch (const std::exception& e) {
    try {
      link.send(MsgType::Error, {{"message", e.what()}});
    } catch (const std::exception&) {
      // the peer is gone: nothing more to tell it
    }
    throw;
  }
}

// ---- the connection ----

namespace {

std::vector<Endpoint> endpoints_in(const PointResources& res, const control::Message& m) {
  const TestConfig& cfg = res.cfg();
  return control::endpoints_from_json(m.body, cfg.knobs.threads, cfg.work.qps);
}

std::vector<Endpoint> peer_endpoints(const PointResources& res, control::PeerLink& link, MsgType want,
                                              std::chrono::milliseconds timeout) {
  return endpoints_in(res, expect(link, want, timeout));
}

void join(PointResources& res, Connector& c, Joining j, const std::vector<Endpoint>& peer) {
  if (j.reused) res.set_remote(peer);  // same QPs, this point's rkey
  else c.connect(res, peer);
}

}  // namespace

static void follow_connection(PointResources& res, control::PeerLink& link, Connector& c, Joining j) {
  std::vector<Endpoint> mine = res.local_endpoints();
  if (!j.reused) c.offer(res, mine);
  link.send(MsgType::SetupOk, control::to_json(mine));
  if (j.peer_knows) return;  // connected and ready: SETUP_OK says so
  if (!j.reused) c.await(res, link);
  // The leading end creates its side meanwhile (as long as that takes, with many QPs):
  // one that stops is caught by its link (silence, a rank gone), not by a bound on its work.
  join(res, c, j, c.early ? endpoints_in(res, *c.early) : peer_endpoints(res, link, MsgType::Connect, kPointWait));
  link.send(MsgType::Ready);
}

static void lead_connection(PointResources& res, control::PeerLink& link, Connector& c, Joining j,
                            std::chrono::milliseconds timeout) {
  join(res, c, j, peer_endpoints(res, link, MsgType::SetupOk, timeout));
  if (j.peer_knows) return;
  link.send(MsgType::Connect, control::to_json(res.local_endpoints()));
  expect(link, MsgType::Ready, timeout);
}

void follow_connect(PointResources& res, control::PeerLink& link, Connector& c, Joining j) {
  telling_peer(link, [&] { follow_connection(res, link, c, j); });
}

void lead_connect(PointResources& res, control::PeerLink& link, Connector& c, Joining j,
                  std::chrono::milliseconds timeout) {
  telling_peer(link, [&] { lead_connection(res, link, c, j, timeout); });
}

// ---- the measured point ----

static PointResult run_leading_loops(PointResources& res, control::PeerLink& link, const EndOptions& o,
                                     std::vector<uint64_t>& sent) {
  const TestConfig& cfg = res.cfg();
  RunControl ctl;
  ctl.interrupted = o.interrupted;
  ctl.wind_up = o.wind_up;
  ctl.idle_timeout = o.timeout;
  // UD latency has one message in flight per QP: a lost one stops its QP.
  if (is_ud(cfg) && cfg.work.mode == Mode::Lat)
    ctl.idle_hint = "a UD ping or its pong was lost (UD does not retransmit), or the peer is gone or stuck";
  ctl.on_idle = [&link] {
    if (auto m = link.try_recv()) peer_spoke(link, *m);  // the peer only speaks mid-point to report a failure
  };
  std::atomic<bool> said{false};  // the first lane's window opens the point's
  if (o.progress_file)
    ctl.on_window = [&] {
      if (!said.exchange(true)) o.progress_file->say("measuring", point_name(cfg));
    };
  try {
    return measure_threads(res, ctl, effective_interval(o.interval, cfg.work), o.placement, sent);
  } catch (const verbs::CompletionError& e) {
    if (e.status() == IBV_WC_WR_FLUSH_ERR) throw_peer_cause(link);
    // iWARP has no receiver-not-ready retry: a SEND that finds no receive posted ends
    // the connection (the peer's TERMINATE, reported here as a local QP error). The
    // credit scheme (core/engine/send_credits.hpp) exists so that this never happens.
    if (e.status() == IBV_WC_LOC_QP_OP_ERR && cfg.work.op == Op::Send && o.iwarp)
      throw verbs::CompletionError(std::string(e.what()) +
                                       ": on iWARP a SEND that finds no receive posted ends the connection (no "
                                       "RNR retry), which the SEND credit should rule out: please report it",
                                   e.status());
    throw;
  }
}

// RESULT against what this end sent: the one place a point's counts are checked.
static void settle(PointResources& res, const control::PeerLink& link, const std::vector<uint64_t>& sent,
                   const control::Counts& got, PointResult& out) {
  const TestConfig& cfg = res.cfg();
  out.server_cpu_seconds = got.cpu_seconds;
  out.has_server_counters = got.has_counters;
  out.server_counters = got.counters;
  if (is_atomic(cfg.work.op)) {
    check_atomic_sum(cfg, sent, got.atomic_sum);
    out.atomic_sum = *got.atomic_sum;
  }
  if (cfg.knobs.bidir) take_reverse(res, got, out, link.me(), link.who());
  if (is_ud(cfg)) {  // datagrams may be lost: counted, not an error
    out.datagram = true;
    for (size_t q = 0; q < sent.size(); ++q) {
      out.sent += sent[q];
      out.received += q < got.per_qp.size() ? got.per_qp[q] : 0;
    }
  } else if (cfg.work.op == Op::Send) {
    check_received(link.who(), got.per_qp, link.me(), sent);
  }
}

static PointResult lead(PointResources& res, control::PeerLink& link, const EndOptions& o, control::Counts* got_out) {
  std::vector<uint64_t> sent;
  if (o.progress_file) o.progress_file->say("traffic", point_name(res.cfg()));
  if (o.on_traffic) o.on_traffic();
  PointResult out = run_leading_loops(res, link, o, sent);
  res.fence_writes(o.timeout);
  if (o.laps) o.laps->split(&WallTime::measured, out.seconds, &WallTime::warmup);
  control::Counts done;
  done.per_qp = sent;
  link.send(MsgType::Done, control::to_json(done));
  const uint32_t nqp = static_cast<uint32_t>(total_qps(res.cfg()));
  control::Counts got = control::counts_from_json(expect(link, MsgType::Result).body, nqp);
  res.close_window();  // the peer is done with our buffer
  settle(res, link, sent, got, out);
  if (got_out) *got_out = std::move(got);
  return out;
}

namespace {

// The leading end's DONE as every thread of the following end sees it: the thread
// that reads the link posts it, the others pick the counts up at their idle checks.
struct DoneBoard {
  std::optional<control::Counts> done;
  std::atomic<bool> posted{false};
};

struct Follower {
  PointResources& res;
  control::PeerLink& link;
  const EndOptions& o;
  DoneBoard board;

  void take(const control::Message& m) {
    if (m.type != MsgType::Done) peer_spoke(link, m);
    board.done = control::counts_from_json(m.body, static_cast<uint32_t>(total_qps(res.cfg())));
  }
  RunControl control() {
    RunControl ctl;
    ctl.interrupted = o.interrupted;
    ctl.on_idle = [this] {
      if (auto m = link.try_recv()) take(*m);
    };
    return ctl;
  }
  // SEND receiver or latency responder: until DONE's counts (every thread).
  LoopStats follow() {
    RunControl ctl = control();
    ctl.idle_timeout = kPointWait;  // the leading end decides when a point ends; its link tells us it died
    ctl.settled = &board.posted;     // once its DONE is in, what it sent is here within --timeout or lost
    ctl.settle_timeout = o.timeout;
    ctl.on_idle = [this] {
      if (auto m = link.try_recv()) {
        take(*m);
        board.posted.store(true, std::memory_order_release);
      }
    };
    return follow_threads(res, ctl, o.placement, [this]() -> const std::vector<uint64_t>* {
      return board.posted.load(std::memory_order_acquire) ? &board.done->per_qp : nullptr;
    });
  }
  // --bidir: this end's own direction, run as the leading end runs its; DONE may come meanwhile.
  control::Counts::Reverse lead(double& cpu) {
    RunControl ctl = control();
    ctl.idle_timeout = o.timeout;
    control::Counts::Reverse r;
    PointResult mine = measure_threads(res, ctl, 0, o.placement, r.sent);
    res.fence_writes(o.timeout);  // before RESULT: the leading end then closes its window
    r.messages = mine.messages;
    r.seconds = mine.seconds;
    cpu = mine.cpu_seconds;
    return r;
  }
};

}  // namespace

PointResult lead_end(PointResources& res, control::PeerLink& link, const EndOptions& o, control::Counts* got) {
  return telling_peer(link, [&] { return lead(res, link, o, got); });
}

static void follow(PointResources& res, control::PeerLink& link, const EndOptions& o) {
  const TestConfig& cfg = res.cfg();
  const Workload& w = cfg.work;
  const bool bidir = cfg.knobs.bidir;
  const bool receives = w.op == Op::Send && w.mode == Mode::Bw && !bidir;
  const bool responds = w.mode == Mode::Lat && !fetches(w.op);
  Follower f{res, link, o, {}};
  if (o.progress_file) o.progress_file->say("traffic", point_name(cfg));
  control::Counts result;
  result.per_qp.assign(total_qps(cfg), 0);
  double cpu = 0;  // over the leading end's measured window, as the loops define it
  if (bidir) {
    result.reverse = f.lead(cpu);
    if (both_ways_send(cfg)) result.per_qp = arrivals(res);
  } else if (receives || responds) {
    LoopStats st = f.follow();
    result.per_qp = std::move(st.per_qp);
    cpu = st.cpu_seconds;
  }
  if (!f.board.done) {
    // A passive target (WRITE/READ bw, READ lat) only waits for DONE: its CPU over
    // the window is what this wait costs (READY to DONE, the warm-up included). With
    // --target-spin it spins there, as perftest's server does on its CQ with -R: a
    // software device answers the initiator from this CPU, and an idle one must wake.
    const double cpu0 = loop_cpu_seconds();
    f.take(expect(link, MsgType::Done, kPointWait, cfg.knobs.target_spin));
    if (!receives && !responds && !bidir) cpu = loop_cpu_seconds() - cpu0;
  }
  res.close_window();  // before RESULT: once the leading end has it, no rkey of this point works
  if (is_atomic(w.op)) result.atomic_sum = atomic_sum(res);
  result.cpu_seconds = cpu;
  if (o.add_to_result) o.add_to_result(result);
  link.send(MsgType::Result, control::to_json(result));
}

void follow_end(PointResources& res, control::PeerLink& link, const EndOptions& o) {
  telling_peer(link, [&] { follow(res, link, o); });
}

}  // namespace rdmasweep
