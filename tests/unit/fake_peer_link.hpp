// Two control::PeerLink ends joined in memory, for the point protocol's abort-path
// tests (abort_paths_test.cpp): each end's messages queue, in order, for the other
// (one lock; any thread may send, take or wait), as the real links keep them (a TCP
// stream, MPI's ordered point-to-point). A fault may be set on the first message of a
// type that one end sends (faults on different messages combine):
//   Lost        it and everything after it in that direction never arrive: a stream
//               loses a message only with its connection, heartbeat included, so the
//               receiving end hears silence and, `silence` later, gets control::Silent,
//               as a Channel does from a peer whose heartbeat stopped;
//   Late        it arrives `delay` later, and what follows it no earlier (in order);
//               the heartbeat goes on, so the receiver only waits;
//   Duplicated  it arrives twice;
//   Failed      the sending end fails at that step instead: send() throws Injected,
//               and the protocol's own abort path (ERROR to the peer) takes over.
//
// Delays, silence and recv()'s timeouts run on the link's own clock, which moves
// only in tick(), and only when neither end can act before the next of them: both
// are waiting in recv(), or polling with nothing to do (`idle`), or done. So a
// loaded machine that stalls a thread for a second changes no outcome: only the
// order of the link's events decides, as on an idle machine.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/control/peer_link.hpp"

namespace rdmasweep::testing {

// An end's own failure, injected: what a real end's failed step (a QP that would not
// connect, a completion in error) throws.
class Injected : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LinkPair {
 public:
  using Time = std::chrono::nanoseconds;  // on the link's clock, from 0
  enum class Fault : uint8_t { None, Lost, Late, Duplicated, Failed };
  static constexpr int kLead = 0, kFollow = 1;  // end 0 leads the point, end 1 follows

  // A wait longer than `forever` is never timed out by tick() (it would hang for real:
  // the caller's watchdog says so).
  LinkPair(std::chrono::milliseconds silence, std::chrono::milliseconds forever)
      : silence_(silence),
        forever_(forever),
        ends_{End(*this, kLead, "the following end", "the leading end"),
              End(*this, kFollow, "the leading end", "the following end")} {}
  LinkPair(const LinkPair&) = delete;
  LinkPair& operator=(const LinkPair&) = delete;

  control::PeerLink& end(int i) { return ends_[i]; }
  void add_fault(int from, control::MsgType type, Fault f, std::chrono::milliseconds delay = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    faults_.push_back({from, type, f, delay});
  }
  // Whether end i, polling (try_recv found nothing), has nothing to do but poll again.
  void set_idle(int i, std::function<bool()> idle) { idle_[i] = std::move(idle); }
  void finish(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    state_[i] = State::Done;
  }
  Time now() const {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  // Moves the clock to the next delivery, silence or timeout once neither end can act
  // before it. The test calls it over and over while the ends run.
  void tick() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Time next = Time::max();
      for (int i = 0; i < 2; ++i) {
        if (!quiet(i)) return;
        next = std::min(next, next_event(i));
      }
      if (next == Time::max()) return;
      now_ = next;
    }
    cv_.notify_all();
  }
  // Every wait of both ends ends now with a ChannelError(why): the test's watchdog.
  void cut(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cut_ = why;
    }
    cv_.notify_all();
  }
  // What was sent to end i and never taken by it (late ones still on the way included).
  std::vector<control::MsgType> unread(int i) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<control::MsgType> out;
    for (const Item& it : box_[i].q) out.push_back(it.m.type);
    return out;
  }
  int spinning_waits(int i) const { return spinning_[i]; }  // end i's recv_spinning calls
  int errors_sent(int i) const {  // ERRORs end i sent, lost ones included
    std::lock_guard<std::mutex> lock(mu_);
    return errors_[i];
  }
  bool faults_hit() const {  // every message a fault is set on was sent
    std::lock_guard<std::mutex> lock(mu_);
    for (const FaultSpec& f : faults_)
      if (!f.hit) return false;
    return true;
  }

 private:
  enum class State : uint8_t { Running, Waiting, Polling, Done };
  struct Item {
    Time due;
    control::Message m;
  };
  struct Inbox {
    std::deque<Item> q;
    bool dead = false;  // Lost: nothing more arrives
    Time dead_since{};
  };
  struct FaultSpec {
    int from = -1;
    control::MsgType type = control::MsgType::Hello;
    Fault kind = Fault::None;
    std::chrono::milliseconds delay{};
    bool hit = false;
  };

  class End final : public control::PeerLink {
   public:
    End(LinkPair& p, int i, std::string who, std::string me) : p_(p), i_(i), who_(std::move(who)), me_(std::move(me)) {}
    void send(control::MsgType type, const nlohmann::json& body) override { p_.post(i_, type, body); }
    std::optional<control::Message> try_recv() override {
      std::lock_guard<std::mutex> lock(p_.mu_);
      p_.state_[i_] = State::Running;
      std::optional<control::Message> m = p_.take(i_);
      if (!m) p_.state_[i_] = State::Polling;
      return m;
    }
    control::Message recv(std::chrono::milliseconds timeout) override {
      std::unique_lock<std::mutex> lock(p_.mu_);
      p_.state_[i_] = State::Waiting;
      p_.deadline_[i_] = p_.now_ + timeout;
      struct Back {  // however the wait ends
        State& s;
        ~Back() { s = State::Running; }
      } back{p_.state_[i_]};
      while (true) {
        if (auto m = p_.take(i_)) return std::move(*m);
        if (p_.now_ >= p_.deadline_[i_]) throw control::Timeout(who_ + " sent no message for " + ms(timeout));
        p_.cv_.wait(lock);
      }
    }
    // The wait itself on the link's clock, as recv's (a real spin would never let it
    // move); counted, for the tests that the protocol spins where it should.
    control::Message recv_spinning(std::chrono::milliseconds timeout) override {
      ++p_.spinning_[i_];
      return recv(timeout);
    }
    const std::string& who() const override { return who_; }
    const std::string& me() const override { return me_; }

   private:
    LinkPair& p_;
    const int i_;
    const std::string who_, me_;
  };

  static std::string ms(Time d) { return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms"; }

  // Under mu_: end i's next message if it is due; throws once the watchdog cut the
  // link, or once a lost message's silence has lasted `silence_`.
  std::optional<control::Message> take(int i) {
    Inbox& in = box_[i];
    if (!cut_.empty()) throw control::ChannelError(cut_);
    if (!in.q.empty() && in.q.front().due <= now_) {
      control::Message m = std::move(in.q.front().m);
      in.q.pop_front();
      return m;
    }
    if (in.dead && now_ - in.dead_since >= silence_)
      throw control::Silent(ends_[i].who() + " has sent nothing, not even its heartbeat, for " + ms(silence_));
    return std::nullopt;
  }
  // Under mu_: end i cannot act before the clock moves.
  bool quiet(int i) const {
    if (state_[i] == State::Done) return true;
    if (state_[i] == State::Running || !cut_.empty()) return false;
    if (state_[i] == State::Polling && !(idle_[i] && idle_[i]())) return false;
    return next_event(i) > now_;
  }
  Time next_event(int i) const {
    if (state_[i] == State::Done) return Time::max();
    const Inbox& in = box_[i];
    Time t = Time::max();
    if (!in.q.empty()) t = in.q.front().due;
    if (in.dead) t = std::min(t, in.dead_since + silence_);
    if (state_[i] == State::Waiting && deadline_[i] - now_ <= forever_) t = std::min(t, deadline_[i]);
    return t;
  }
  void post(int from, control::MsgType type, const nlohmann::json& body) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      state_[from] = State::Running;
      errors_[from] += type == control::MsgType::Error;
      FaultSpec none;
      FaultSpec* f = &none;
      for (FaultSpec& x : faults_)
        if (f == &none && !x.hit && x.from == from && x.type == type) f = &x;
      f->hit = true;
      if (f->kind == Fault::Failed)
        throw Injected(ends_[from].me() + " failed before its " + control::to_string(type) + " (injected)");
      Inbox& to = box_[1 - from];
      if (to.dead) return;
      if (f->kind == Fault::Lost) {
        to.dead = true;
        to.dead_since = now_;
      } else {
        Time due = now_ + (f->kind == Fault::Late ? Time(f->delay) : Time{});
        if (!to.q.empty()) due = std::max(due, to.q.back().due);
        for (int copies = f->kind == Fault::Duplicated ? 2 : 1; copies > 0; --copies)
          to.q.push_back(Item{due, control::Message{type, body}});
      }
    }
    cv_.notify_all();
  }

  const Time silence_, forever_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  End ends_[2];
  Inbox box_[2];
  State state_[2] = {State::Running, State::Running};
  Time deadline_[2] = {};
  std::function<bool()> idle_[2];
  std::atomic<int> spinning_[2] = {0, 0};
  Time now_{};
  int errors_[2] = {0, 0};
  std::vector<FaultSpec> faults_;
  std::string cut_;
};

}  // namespace rdmasweep::testing
