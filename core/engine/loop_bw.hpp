// The bandwidth loops, templates over the device calls they make (post a chain,
// poll the CQ, repost a receive), so unit tests and micro-benchmarks run them against
// a fake device. loop_bw.cpp instantiates them with real verbs.
#pragma once

#include <algorithm>
#include <type_traits>

#include "core/engine/loop_common.hpp"
#include "core/engine/send_credits.hpp"

namespace rdmasweep::detail {

struct BwPlan {
  uint32_t nqp = 1;
  uint32_t depth = 128;      // send-queue depth
  uint32_t post_list = 1;
  uint32_t every = 32;       // signal interval
  uint32_t batch = 16;       // WCs per poll
  uint64_t per_qp = 1000;    // operations per QP (ignored when duration > 0)
  double duration = 0;
  double interval = 0;       // timeline samples (--interval); 0: none
  bool await_peer = false;   // --bidir SEND's following end: its first post waits for the peer's first message
  const char* posted = "RDMA_WRITE";  // for error messages
};

// A point's plan: its knobs as the loop reads them.
BwPlan bw_plan(const TestConfig& c, uint64_t per_qp, double duration);

// Ops whose post() reads every WR's sequence (--validate fills each message by it) say
// so with `static constexpr bool kReadsEveryWrId = true`.
template <class Ops, class = void>
struct ReadsEveryWrId : std::false_type {};
template <class Ops>
struct ReadsEveryWrId<Ops, std::void_t<decltype(Ops::kReadsEveryWrId)>> : std::bool_constant<Ops::kReadsEveryWrId> {};

// Sets the wr_id and signal flag of each of chain w's first k WRs, from the send
// queue's count. With `was` (a full chain, none of it the target's last WR, whose
// flags were last set for a chain starting at until_signal `was`), only the WRs
// signaled then and now are touched: a chain's signaled WRs are every `every`-th from
// index until_signal - 1, and an unsignaled WR's wr_id is read only by a flushed
// completion, for its QP, which every WR of chain q names already.
inline void stamp_chain(ibv_send_wr* w, uint32_t k, uint32_t q, SendQueue& s, uint32_t every, uint64_t target,
                        uint32_t was) {
  if (was != 0) {
    const uint32_t u = s.until_signal;
    if (was != u) {  // else the same WRs are signaled as last time: only their wr_ids change
      for (uint32_t i = was - 1; i < k; i += every) w[i].send_flags &= ~IBV_SEND_SIGNALED;
      for (uint32_t i = u - 1; i < k; i += every) w[i].send_flags |= IBV_SEND_SIGNALED;
    }
    for (uint32_t i = u - 1; i < k; i += every) w[i].wr_id = WrId::encode(q, static_cast<uint32_t>(s.posted + i));
    // As k calls of next_signaled leave it; no division when the chain signals once.
    const uint32_t past = k - u;  // WRs after the chain's first signaled one (u <= k)
    s.until_signal = u > k ? u - k : every - (past < every ? past : past % every);
    return;
  }
  for (uint32_t i = 0; i < k; ++i) {
    const uint64_t seq = s.posted + i;
    w[i].wr_id = WrId::encode(q, static_cast<uint32_t>(seq));
    w[i].send_flags = (w[i].send_flags & ~IBV_SEND_SIGNALED) |
                      (s.next_signaled(every, seq + 1 == target) ? IBV_SEND_SIGNALED : 0);
  }
}

// Posts QP q's WRs while its send queue has room for a whole chain of post_list (a
// shorter last chain to reach `target`), each signaled as the signal interval says.
// With `cr` (SEND on iWARP), no further than the receiver's credit allows; its READ
// keeps its reserve of send-queue slots while in flight (read_fits).
template <class Ops>
inline void post_what_fits(Ops& ops, SendWrs& wrs, uint32_t q, SendQueue& s, uint64_t target, const BwPlan& p,
                           CreditReads* cr = nullptr) {
  uint64_t limit = target;
  uint32_t depth = p.depth;
  if (cr != nullptr) {
    limit = std::min(target, credit_limit(ops, *cr, q, s, target, depth, p.every));
    if (s.reading) depth -= cr->reserve;
  }
  // The loop works on copies (the device call between posts is opaque to the compiler,
  // which would otherwise reload every field after it), written back after.
  SendQueue t = s;
  const uint32_t n = p.post_list, every = p.every;
  ibv_send_wr* const w = wrs.chain(q);
  uint32_t stamped = wrs.stamped_at[q];
  while (t.posted < limit && t.outstanding() + n <= depth) {
    const uint32_t k = static_cast<uint32_t>(std::min<uint64_t>(n, limit - t.posted));
    const bool whole = k == n && t.posted + k < target;
    const uint32_t at = t.until_signal;
    stamp_chain(w, k, q, t, every, target, !ReadsEveryWrId<Ops>::value && whole ? stamped : 0);
    stamped = whole ? at : 0;
    int rc;
    if (k == n) {  // a whole chain ends in a null next already (make_send_wrs)
      rc = ops.post(q, w);
    } else {
      ibv_send_wr* saved = w[k - 1].next;
      w[k - 1].next = nullptr;  // a short final chain
      rc = ops.post(q, w);
      w[k - 1].next = saved;
    }
    if (rc != 0) {
      s.posted = t.posted;
      s.until_signal = t.until_signal;
      wrs.stamped_at[q] = 0;
      fail_post(rc, "ibv_post_send", q);
    }
    t.posted += k;
  }
  // Only the fields the loop changes, one store each: a whole-struct copy of `t` is
  // wide loads of fields just stored narrow, which the CPU cannot forward (a stall).
  s.posted = t.posted;
  s.until_signal = t.until_signal;
  wrs.stamped_at[q] = stamped;
}

// New per-QP targets (`stop_at` of each QP's accounting); returns the QPs not there yet.
template <class StopAt>
inline uint32_t retarget(const std::vector<SendQueue>& sq, std::vector<uint64_t>& target, StopAt stop_at) {
  uint32_t unfinished = 0;
  for (size_t q = 0; q < sq.size() && q < target.size(); ++q) {
    target[q] = stop_at(sq[q]);
    unfinished += sq[q].completed != target[q];
  }
  return unfinished;
}

// The initiator loop's progress: each QP's completion target, what is left, and how
// the loop is ending (the duration is up, or an interrupt drains it).
struct BwProgress {
  std::vector<uint64_t> target, first;
  uint32_t unfinished = 0;
  bool stopping = false, aborting = false;
  Clock::time_point abort_by{}, sends_end{};
  bool lingers = false;  // --bidir SEND or credit READs: the loop may outlast its last send
  // The QPs whose send queues freed slots since they last posted: only they can post
  // more, so a turn costs what completed, not a pass over every QP (1024 QPs, 16 WCs).
  std::vector<uint32_t> ready;
  std::vector<uint8_t> marked;

  void mark(uint32_t q) {
    if (!marked[q]) {
      marked[q] = 1;
      ready.push_back(q);  // capacity nqp, reserved: no allocation
    }
  }
  void mark_all() {
    for (uint32_t q = 0; q < marked.size(); ++q) mark(q);
  }

  uint64_t done(const std::vector<SendQueue>& sq) const {
    uint64_t n = 0;
    for (size_t q = 0; q < first.size(); ++q) n += sq[q].completed - first[q];
    return n;
  }
};

// One poll's completions: sends retired per QP, receives (--bidir SEND) reposted and
// counted, credit READs taken.
template <class Ops>
inline void take_completions(Ops& ops, const ibv_wc* wc, int got, std::vector<SendQueue>& sq, BwProgress& g,
                             const char* posted, Arrivals* in, CreditReads* cr) {
  for (int i = 0; i < got; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], in ? "SEND or RECV" : posted);
    if (in != nullptr && (wc[i].opcode & IBV_WC_RECV)) {
      in->take(ops.recv(wc[i]));
      continue;
    }
    if (cr != nullptr && WrId::is_credit(wc[i].wr_id)) {
      const uint32_t q = WrId::credit_qp(wc[i].wr_id);
      cr->take(sq[q], q);
      g.mark(q);
      continue;
    }
    const uint32_t q = WrId::qp(wc[i].wr_id);
    g.mark(q);
    if (sq[q].retire(WrId::seq(wc[i].wr_id)) && sq[q].completed == g.target[q] && --g.unfinished == 0 && g.lingers)
      g.sends_end = Clock::now();
  }
}

// The clock's turn (see the loop): a throughput sample when due, an interrupt (post
// nothing more, drain each QP's last signaled WR), the duration's end (stop each QP at
// its next signaled WR, so every posted WR is accounted for). False: stop now (the
// drain's time is up).
inline bool clock_turn(std::vector<SendQueue>& sq, BwProgress& g, TimelineRecorder& timeline, IdleWatch& watch,
                       uint32_t every, bool timed, Clock::time_point deadline) {
  // Lingering past its window (sends_end), the loop only waits: no sample there.
  if (timeline.on() && g.sends_end == Clock::time_point{}) {
    const Clock::time_point now = Clock::now();
    if (timeline.due(now)) timeline.record(now, g.done(sq));
  }
  if (!g.aborting && watch.interrupted()) {
    g.aborting = g.stopping = true;
    watch.draining();
    g.abort_by = Clock::now() + kInterruptDrain;
    g.unfinished = retarget(sq, g.target, [every](const SendQueue& s) { return s.posted - (every - s.until_signal); });
    g.mark_all();
  } else if (g.aborting) {
    if (Clock::now() >= g.abort_by) return false;
  } else if (timed && !g.stopping && (Clock::now() >= deadline || watch.wound_up())) {
    g.stopping = true;
    g.unfinished = retarget(sq, g.target, [every](const SendQueue& s) {
      return s.posted + (s.until_signal == every ? 0 : s.until_signal);
    });
    g.mark_all();  // the new targets may ask for a last few WRs
  }
  return true;
}

// Ops: int post(uint32_t qp, ibv_send_wr* chain); int poll(int n, ibv_wc* wc); uint32_t recv(const ibv_wc&)
// (used with `in` only).
// `sq` is the QPs' own accounting and carries over from the previous point.
// `watch` is the one the Ops' poller (--events) checks while it sleeps: both must
// see the same progress, or a sleeping poller takes a busy point for a dead peer.
// On an interrupt the loop stops posting, lets the WRs in flight drain for up to
// kInterruptDrain, then throws RunAborted("interrupted").
// `in` (--bidir SEND): receive completions among the sends' are reposted and counted
// there, and the loop goes on until `in->expect` arrived on every QP; the window (and
// `seconds`, and the timeline) still ends with this side's last send. With
// `p.await_peer`, a point's first loop opens its window at its first post, once the
// peer's first message is in (await_first_arrival).
// `cr` (SEND on iWARP): sends wait for the receiver's credit; the loop ends once its
// credit READs are back too (the window still ends with the last send), so none is in
// flight when the peer closes the window its count is read through.
template <class Ops>
LoopStats bw_initiator_loop(Ops& ops, SendWrs& wrs, std::vector<SendQueue>& sq, const BwPlan& p, IdleWatch& watch,
                            Arrivals* in = nullptr, CreditReads* cr = nullptr) {
  const uint32_t nqp = p.nqp;
  const bool timed = p.duration > 0;
  BwProgress g;
  g.target.resize(nqp);
  g.first.resize(nqp);
  for (uint32_t q = 0; q < nqp; ++q) {
    g.first[q] = sq[q].posted;
    g.target[q] = timed ? UINT64_MAX : sq[q].posted + p.per_qp;
    g.unfinished += sq[q].completed != g.target[q];
  }
  g.lingers = in != nullptr || cr != nullptr;
  g.ready.reserve(nqp);
  g.marked.assign(nqp, 0);
  g.mark_all();
  std::vector<ibv_wc> wc(p.batch);
  uint64_t loops = 0;
  if (in != nullptr && p.await_peer) await_first_arrival(ops, wc.data(), static_cast<int>(p.batch), *in, watch);

  LoopStats st;
  TimelineRecorder timeline(st.timeline, p.interval, p.duration);
  const double cpu0 = loop_cpu_seconds();
  const Clock::time_point start = Clock::now();
  timeline.start(start);
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.duration));
  while (g.unfinished > 0 || (in != nullptr && in->missing > 0 && !g.aborting) || (cr != nullptr && cr->in_flight > 0)) {
    if (cr != nullptr) {
      // On credit a QP may wait for the receiver with nothing of its own to complete:
      // every QP looks again each turn.
      for (uint32_t q = 0; q < nqp; ++q) post_what_fits(ops, wrs, q, sq[q], g.target[q], p, cr);
    } else {
      for (uint32_t q : g.ready) {
        g.marked[q] = 0;
        post_what_fits(ops, wrs, q, sq[q], g.target[q], p, cr);
      }
      g.ready.clear();
    }
    int got = ops.poll(static_cast<int>(p.batch), wc.data());
    if (got < 0) fail_poll(got);
    take_completions(ops, wc.data(), got, sq, g, p.posted, in, cr);
    watch.tick(got);
    // The clock and the stop flag are read once per poll that returned completions
    // (at most once per batch of WCs), or every 64 empty polls: not per message, but
    // often enough when a loop turn is slow (big messages, a slow device, --events).
    if ((got > 0 || g.aborting || (++loops & 63) == 0) &&
        !clock_turn(sq, g, timeline, watch, p.every, timed, deadline))
      break;
  }
  if (g.aborting) throw RunAborted("interrupted");
  const Clock::time_point end = g.lingers && g.sends_end != Clock::time_point{} ? g.sends_end : Clock::now();
  timeline.finish(end, g.done(sq));
  st.seconds = seconds_between(start, end);
  st.began = start;
  st.ended = end;
  st.cpu_seconds = loop_cpu_seconds() - cpu0;
  st.per_qp.resize(nqp);
  for (uint32_t q = 0; q < nqp; ++q) st.per_qp[q] = sq[q].completed - g.first[q];
  return st;
}

// UD: a lost message never arrives. Once the sender's DONE is in, the receiver ends
// on what arrived when nothing more has for kUdQuiet since the last arrival.
constexpr std::chrono::milliseconds kUdQuiet{1000};

// A lossy receiver's last arrival as its idle checks see it (never per message): the
// first check that saw the count's last move, and the loop's CPU clock then. Watched
// from the start, DONE or not yet, so a DONE that comes after a quiet ends at once;
// the window and CPU time end there, not after the wait for what never came.
struct QuietEnd {
  LastMove last;
  // True when `total` has not moved for kUdQuiet.
  bool over(uint64_t total) { return !last.look(total) && Clock::now() - last.at >= kUdQuiet; }
};

// The receiver's count: messages per QP against targets that the peer's DONE (via
// ctl.on_idle) may lower in duration mode; the caller's on_idle calls idle().
// `sender_done` (UD, set once the sender's DONE is in): messages may be lost.
struct ReceiveCount {
  std::vector<uint64_t>& expected;
  std::vector<uint64_t> received;
  uint32_t unfinished = 0;
  const bool* sender_done = nullptr;
  QuietEnd quiet;
  ReceiveCount(std::vector<uint64_t>& e, uint32_t nqp, const bool* done = nullptr)
      : expected(e), received(nqp, 0), sender_done(done) {
    recount();
  }
  void recount() {
    unfinished = 0;
    for (size_t q = 0; q < received.size(); ++q) unfinished += received[q] < expected[q];
  }
  // Every idle check, after the caller's (DONE may lower the targets). Lossy: once DONE
  // is in and nothing has arrived for kUdQuiet, what arrived is all there will be.
  void idle() {
    if (sender_done != nullptr && quiet.over(total()) && *sender_done)
      for (size_t q = 0; q < expected.size(); ++q) expected[q] = std::min(expected[q], received[q]);
    recount();
  }
  uint64_t total() const {
    uint64_t n = 0;
    for (uint64_t r : received) n += r;
    return n;
  }
  // Lossy, and nothing arrived since the check that saw the last arrival: the loop
  // ended at an idle check (DONE, the quiet), which is no part of its window.
  bool settled() const { return sender_done != nullptr && quiet.last.count == total(); }
};

// Ops: int poll(int n, ibv_wc* wc); uint32_t recv(const ibv_wc& wc) reposts the
// receive and returns its QP. The CPU window opens when `warmup` messages arrived
// on every QP.
template <class Ops>
LoopStats bw_receiver_loop(Ops& ops, ReceiveCount& c, const BwPlan& p, uint64_t warmup, IdleWatch& watch) {
  const uint32_t nqp = static_cast<uint32_t>(c.received.size());
  const uint32_t batch = p.batch;
  std::vector<ibv_wc> wc(batch);
  // QPs still in the client's warm-up; the CPU window opens when none is left.
  uint32_t warming = warmup > 0 ? nqp : 0;
  double cpu0 = loop_cpu_seconds();
  Clock::time_point start{};
  bool started = false;
  while (c.unfinished > 0) {
    int got = ops.poll(static_cast<int>(batch), wc.data());
    if (got < 0) fail_poll(got);
    if (got > 0 && !started) {
      start = Clock::now();
      started = true;
    }
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], "RECV");
      uint32_t q = ops.recv(wc[i]);
      uint64_t n = ++c.received[q];
      if (n == warmup && --warming == 0) cpu0 = loop_cpu_seconds();
      if (n == c.expected[q]) --c.unfinished;
    }
    watch.tick(got);
  }
  // A lossy receiver that ended at an idle check ends its window and CPU time at the
  // last arrival: its wait for the lost messages measured nothing.
  const bool settled = c.settled();
  const Clock::time_point end = settled ? c.quiet.last.at : Clock::now();
  const double cpu1 = settled ? c.quiet.last.cpu : loop_cpu_seconds();
  LoopStats st;
  st.seconds = started ? seconds_between(start, end) : 0;
  st.cpu_seconds = warming == 0 ? cpu1 - cpu0 : 0;
  st.per_qp = std::move(c.received);
  return st;
}

}  // namespace rdmasweep::detail
