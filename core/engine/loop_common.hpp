// Pieces shared by the hot loops: prebuilt work requests and send-queue accounting.
// Internal to core/loop_*.cpp.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/engine/loop.hpp"
#include "core/engine/shared_cq.hpp"
#include "core/engine/wr_id.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep::detail {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Fills a Timeline: due() is one comparison, so a loop may ask at every clock read.
// Storage for a duration's worth of samples is reserved before the loop starts.
class TimelineRecorder {
 public:
  TimelineRecorder(Timeline& out, double interval, double duration) : out_(out) {
    out_.interval = interval > 0 ? interval : 0;
    if (!on()) return;
    step_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval));
    if (step_.count() <= 0) step_ = Clock::duration(1);
    const size_t n = duration > 0 ? static_cast<size_t>(duration / interval) + 4 : 1024;
    out_.t.reserve(n);
    out_.messages.reserve(n);
  }
  bool on() const { return out_.interval > 0; }
  void start(Clock::time_point t0) {
    start_ = t0;
    next_ = t0 + step_;
  }
  bool due(Clock::time_point now) const { return on() && now >= next_; }
  // A sample at `now`; boundaries the loop slept through are skipped (one long interval).
  void record(Clock::time_point now, uint64_t done) {
    push(seconds_between(start_, now), done);
    while (next_ <= now) next_ += step_;
  }
  // The window's end: its last, partial interval.
  void finish(Clock::time_point now, uint64_t done) {
    const double t = seconds_between(start_, now);
    if (on() && (out_.t.empty() || t > out_.t.back())) push(t, done);
  }

 private:
  void push(double t, uint64_t done) {
    out_.t.push_back(t);
    out_.messages.push_back(done);
  }

  Timeline& out_;
  Clock::duration step_{};
  Clock::time_point start_{}, next_{};
};

// One prebuilt chain of `post_list` send WRs per QP; the loop only sets wr_id,
// flags and the chain's length.
struct SendWrs {
  std::vector<ibv_send_wr> wr;
  std::vector<ibv_sge> sge;
  uint32_t per_qp = 1;
  // Per QP: the send queue's until_signal when its whole chain's signal flags were last
  // set (loop_bw.hpp's stamp_chain), 0 when a chain was cut short since: which of its
  // WRs are signaled follows from it alone.
  std::vector<uint32_t> stamped_at;

  SendWrs(uint32_t nqp, uint32_t post_list, ibv_wr_opcode opcode, int base_flags);
  SendWrs(SendWrs&&) = default;  // the WRs point into sge and each other: never copy
  SendWrs(const SendWrs&) = delete;
  // Points QP q's WRs at a local buffer and, for RDMA WRITE/READ, the peer's.
  void set_buffers(uint32_t qp, uint64_t local, uint32_t length, uint32_t lkey, uint64_t remote, uint32_t rkey);
  // UD: QP q's WRs go to the peer's QP `remote_qpn` through `ah`.
  void set_datagram(uint32_t qp, ibv_ah* ah, uint32_t remote_qpn, uint32_t qkey);
  ibv_send_wr* chain(uint32_t qp) { return &wr[static_cast<size_t>(qp) * per_qp]; }
};

// The WRs of a test. `echo`: send out of the rx region (a WRITE latency responder
// returns what it got).
SendWrs make_send_wrs(const LoopResources& r, uint32_t post_list, ibv_wr_opcode opcode, int base_flags, bool echo = false);

// Throws the completion error of a failed WC, naming its QP.
[[noreturn]] void fail_completion(const ibv_wc& wc, const char* posted);
[[noreturn]] void fail_post(int rc, const char* what, uint32_t qp);
// A negative ibv_poll_cq: out of line, so the loops' poll stays small enough to inline.
[[noreturn]] void fail_poll(int rc);
const char* posted_name(Op op);  // the WR opcode a loop posts for `op`

// How long an interrupted loop waits for the work it has in flight before it gives up.
constexpr std::chrono::milliseconds kInterruptDrain{1000};

// Looks outside the loop (stop flag, peer, idle timeout) once every 4096 polls:
// one increment and a mask test per poll on the busy path. One per loop, shared
// with the loop's Poller so both see the same progress.
class IdleWatch {
 public:
  explicit IdleWatch(const RunControl& ctl) : ctl_(ctl), last_progress_(Clock::now()) {}
  void tick(int completions) {
    progressed_ |= completions > 0;
    if ((++polls_ & 4095) == 0) check();
  }
  void check();
  // True right after the tick that ran check(): a loop's own rare looks go there.
  bool just_checked() const { return (polls_ & 4095) == 0; }
  // For loops that look at the stop flag more often than check() does.
  bool interrupted() const { return ctl_.interrupted && ctl_.interrupted->load(std::memory_order_relaxed); }
  // A duration-mode window asked to end now (RunControl::wind_up).
  bool wound_up() const { return ctl_.wind_up && ctl_.wind_up->load(std::memory_order_relaxed); }
  // The loop saw the interrupt and is draining: check() leaves the stop to it.
  void draining() { draining_ = true; }
  // The measured window opens (RunControl::on_window): once a loop, never per message.
  void window_opened() const {
    if (ctl_.on_window) ctl_.on_window();
  }

 private:
  const RunControl& ctl_;
  uint64_t polls_ = 0;
  bool progressed_ = false;
  bool draining_ = false;
  Clock::time_point last_progress_;
};

// A following loop's last piece of work as its idle checks see it (never per message):
// the time and CPU clock at the first look that saw the count move. A loop that ends
// at an idle check (the peer's DONE, a quiet) ends its window there, not after the wait.
struct LastMove {
  uint64_t count = UINT64_MAX;
  Clock::time_point at{};
  double cpu = 0;
  // True when `n` moved since the last look (which then notes the time and CPU).
  bool look(uint64_t n) {
    if (n == count) return false;
    count = n;
    at = Clock::now();
    cpu = loop_cpu_seconds();
    return true;
  }
};

// Polls the test's CQ for up to the count the loop asks (its plan's batch, the size
// of its completion buffer). Busy polling by default; with --events, an empty poll arms
// the CQ, polls once more (a completion may have landed before arming) and sleeps
// on the completion channel until an event or 100 ms pass. Events are acknowledged
// in batches, and all of them before the loop ends (the CQ cannot be destroyed with
// events unacknowledged).
class Poller {
 public:
  Poller(const LoopResources& r, IdleWatch& watch)
      : cq_(r.completion_queue().get()), channel_(r.channel.get()), shared_(r.cq_router), lane_(r.lane),
        watch_(watch) {}
  ~Poller() {
    if (unacked_) ibv_ack_cq_events(cq_, unacked_);
  }
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  int poll(int n, ibv_wc* wc) {
    int got = shared_ != nullptr ? shared_->poll(lane_, n, wc) : ibv_poll_cq(cq_, n, wc);
    if (got == 0 && channel_ != nullptr) got = wait_and_poll(n, wc);
    if (got < 0) fail_poll(got);
    return got;
  }

 private:
  int wait_and_poll(int n, ibv_wc* wc);

  ibv_cq* cq_;
  ibv_comp_channel* channel_;
  SharedCq* shared_;  // --cq-scope process with several threads (never with --events)
  uint32_t lane_;
  IdleWatch& watch_;
  unsigned unacked_ = 0;
};

// Receive completions: routes each to its QP (by wr_id, or by qp_num through the
// QP table when receives come from a shared receive queue) and posts it again.
class Receives {
 public:
  explicit Receives(const LoopResources& r);
  uint32_t complete(const ibv_wc& wc) {
    ibv_recv_wr* bad = nullptr;
    if (srq_ != nullptr) {
      uint32_t q = r_.qp_of.find(wc.qp_num);
      if (q == QpnTable::kMissing) unknown_qp(wc);
      wr_[0].wr_id = wc.wr_id;
      if (int rc = ibv_post_srq_recv(srq_, &wr_[0], &bad)) fail_post(rc, "ibv_post_srq_recv", q);
      grant(q);
      return q;
    }
    uint32_t q = WrId::qp(wc.wr_id);
    wr_[q].wr_id = wc.wr_id;
    if (int rc = ibv_post_recv(qp_[q], &wr_[q], &bad)) fail_post(rc, "ibv_post_recv", q);
    grant(q);
    return q;
  }
  // --validate: the receive goes back with its own message buffer (one per receive).
  uint32_t complete_at(const ibv_wc& wc, char* buf, uint32_t length) {
    ibv_sge& s = sge_[srq_ != nullptr ? 0 : WrId::qp(wc.wr_id)];
    s.addr = reinterpret_cast<uint64_t>(buf);
    s.length = length;
    return complete(wc);
  }
  bool shared() const { return srq_ != nullptr; }  // receives from a shared receive queue
  // The QP a receive completion belongs to (complete() reposts it).
  uint32_t qp_of(const ibv_wc& wc) const {
    if (srq_ == nullptr) return WrId::qp(wc.wr_id);
    uint32_t q = r_.qp_of.find(wc.qp_num);
    if (q == QpnTable::kMissing) unknown_qp(wc);
    return q;
  }

 private:
  [[noreturn]] void unknown_qp(const ibv_wc& wc) const;
  // SEND on iWARP: one more receive of QP q is posted, in the count the sender READs
  // (core/engine/send_credits.hpp); stored after the repost, so no credit runs ahead of it.
  void grant(uint32_t q) {
    if (credit_ != nullptr) credit_[q * kCreditSlotWords] = credit_[q * kCreditSlotWords] + 1;
  }
  const LoopResources& r_;
  ibv_srq* srq_;
  volatile uint64_t* credit_;  // the count the peer READs; null where nobody does
  std::vector<ibv_qp*> qp_;
  std::vector<ibv_recv_wr> wr_;
  std::vector<ibv_sge> sge_;
};

// The real device calls the loops make, inlined into them (tests plug in a fake).
struct VerbsOps {
  std::vector<ibv_qp*> qp;
  Poller& poller;
  Receives* receives = nullptr;  // loops that take receive completions
  VerbsOps(const LoopResources& r, Poller& p, Receives* rx) : poller(p), receives(rx) {
    for (const verbs::QueuePair& q : r.qps) qp.push_back(q.get());
  }
  int post(uint32_t q, ibv_send_wr* w) {
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp[q], w, &bad);
  }
  int poll(int n, ibv_wc* wc) { return poller.poll(n, wc); }
  uint32_t recv(const ibv_wc& wc) { return receives->complete(wc); }
};

ibv_wr_opcode opcode_of(Op op);

// --bidir SEND: the following end (the server) posts nothing of a point until the
// leading end's first message is in, as perftest's server does. The leading end's loop
// starts a control message after the follower's; a follower that sent meanwhile would
// use up the receives the leading end keeps posted before it reposts any, and its
// SENDs would meet receiver-not-ready: the RNR timer, then the window sent again.
// Only the peer's messages can complete here: this end has posted nothing yet.
template <class Ops>
void await_first_arrival(Ops& ops, ibv_wc* wc, int batch, Arrivals& in, IdleWatch& watch) {
  while (in.none()) {
    const int got = ops.poll(batch, wc);
    if (got < 0) fail_poll(got);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) fail_completion(wc[i], "SEND or RECV");
      if (!(wc[i].opcode & IBV_WC_RECV))
        throw verbs::Error("a send completion before this end posted a send: please report it");
      in.take(ops.recv(wc[i]));
    }
    watch.tick(got);
  }
}

}  // namespace rdmasweep::detail
