// The point protocol's abort paths (core/point/point_protocol.hpp): a leading end
// (lead_connect, lead_end) and a following end (follow_connect, follow_end), each on a
// thread of its own, over two in-memory links (fake_peer_link.hpp) with one fault on
// one message: lost, late (within the leading end's wait, and beyond it), duplicated,
// or its sender failing at that step. Their lanes are stood in for (LaneStandIn,
// core/point/lanes.hpp) by core's own bandwidth loops on tests/support's fake device,
// so no RDMA device is needed. Each case checks that both ends finish, each failing
// end with one one-line error naming its peer or step, the peer of a failed end with
// PeerFailed (PeerAbandoned for ABANDON), and, where both sessions go on to the next
// point, that nothing is left unread and nothing left posted.
//
// No reordering: each message of a point waits for the other end's previous one, so
// two messages of one direction are never in flight together to swap.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <thread>

#include "core/engine/loop_bw.hpp"
#include "core/point/point_protocol.hpp"
#include "tests/support/fake_device.hpp"
#include "tests/unit/fake_peer_link.hpp"

namespace rdmasweep {
namespace {

using namespace std::chrono_literals;
using control::MsgType;
using testing::FakeDevice;
using testing::Injected;
using testing::LinkPair;
using Clock = std::chrono::steady_clock;

// On the links' clock (fake_peer_link.hpp), which moves only when both ends wait:
constexpr auto kWait = 300ms;        // the leading end's waits for SETUP_OK and READY (lead_connect's timeout)
constexpr auto kSilence = 100ms;     // a link whose heartbeat stopped is given up after this
constexpr auto kLateWithin = 50ms;   // late, but within kWait
constexpr auto kLateBeyond = 2 * kWait;
constexpr auto kForever = 1min;      // longer waits (the point's DONE, RESULT: 24 h) never time out here
// Real time:
constexpr auto kLoopIdle = 10s;      // the leading end's loop with no completion (EndOptions::timeout)
constexpr auto kWatchdog = 10s;      // an end still running then has hung
constexpr auto kPostGap = 10us;      // the leading end's completions: its loop runs 2 x 1000 x 10 us

// ---- the table: every message of a point, who sends it, every fault ----

enum class Msg : uint8_t { None, SetupOk, Connect, Ready, Done, Result, Error, Abandon, Loops };
enum class Fault : uint8_t { None, Lost, LateWithin, LateBeyond, Duplicated, Failed };
enum class Side : uint8_t { Lead, Follow };

struct PointMessage {
  Msg msg;
  MsgType type;
  Side sender;  // ERROR and the loops' failures: either end (a row for each)
};
// What the two ends exchange in a point (point_protocol.cpp): ABANDON is the leading
// end's answer to SETUP_OK when its own side failed to set up (ClientSession::set_up).
constexpr PointMessage kPointMessages[] = {
    {Msg::SetupOk, MsgType::SetupOk, Side::Follow}, {Msg::Connect, MsgType::Connect, Side::Lead},
    {Msg::Ready, MsgType::Ready, Side::Follow},     {Msg::Done, MsgType::Done, Side::Lead},
    {Msg::Result, MsgType::Result, Side::Follow},   {Msg::Error, MsgType::Error, Side::Lead},
    {Msg::Error, MsgType::Error, Side::Follow},     {Msg::Abandon, MsgType::Abandon, Side::Lead},
};
// The session's and the channel's, never sent within a point.
constexpr MsgType kOutsideAPoint[] = {MsgType::Hello, MsgType::Setup, MsgType::Bye, MsgType::Tick, MsgType::Probe,
                                      MsgType::McastStart, MsgType::McastPoint, MsgType::McastSent, MsgType::McastResult};

struct Case {
  Op op;  // WRITE: a passive target that only waits for DONE; SEND: a receiver whose loop reads the link
  Msg msg;
  Fault fault;
  Side by;  // the end that sends `msg` (or whose loop fails)
  bool spin = false;  // --target-spin: the passive target's wait for DONE polls (PeerLink::recv_spinning)
};

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (Op op : {Op::Write, Op::Send}) {
    out.push_back({op, Msg::None, Fault::None, Side::Lead});
    for (const PointMessage& m : kPointMessages) {
      std::vector<Fault> faults = {Fault::Lost, Fault::LateWithin, Fault::LateBeyond, Fault::Duplicated};
      if (m.msg == Msg::Abandon) faults.insert(faults.begin(), Fault::None);  // delivered: the sender's failure itself
      if (m.msg != Msg::Error && m.msg != Msg::Abandon) faults.push_back(Fault::Failed);
      for (Fault f : faults) out.push_back({op, m.msg, f, m.sender});
    }
    out.push_back({op, Msg::Loops, Fault::Failed, Side::Lead});
    if (op == Op::Send) out.push_back({op, Msg::Loops, Fault::Failed, Side::Follow});
  }
  // A spinning passive target ends each way its DONE can come as a sleeping one does.
  out.push_back({Op::Write, Msg::None, Fault::None, Side::Lead, true});
  for (Fault f : {Fault::Lost, Fault::LateWithin, Fault::LateBeyond, Fault::Duplicated, Fault::Failed})
    out.push_back({Op::Write, Msg::Done, f, Side::Lead, true});
  out.push_back({Op::Write, Msg::Error, Fault::Lost, Side::Lead, true});
  return out;
}

MsgType type_of(Msg m) {
  for (const PointMessage& p : kPointMessages)
    if (p.msg == m) return p.type;
  return MsgType::Hello;
}

std::string name_of(const Case& c) {
  static const char* const msgs[] = {"Baseline", "SetupOk", "Connect", "Ready", "Done", "Result", "Error", "Abandon", "Loops"};
  static const char* const faults[] = {"Delivered", "Lost", "LateWithinTimeout", "LateBeyondTimeout", "Duplicated", "SenderFailed"};
  std::string n = std::string(c.op == Op::Write ? (c.spin ? "WriteBwSpinning_" : "WriteBw_") : "SendBw_") +
                  msgs[static_cast<int>(c.msg)];
  if (c.msg == Msg::None) return n;
  return n + "_" + faults[static_cast<int>(c.fault)] + (c.by == Side::Lead ? "_ByLead" : "_ByFollower");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return name_of(info.param); }
void PrintTo(const Case& c, std::ostream* os) { *os << name_of(c); }

// ---- what each case must end with ----

enum class Kind : uint8_t { Ok, Injected, PeerFailed, PeerAbandoned, Timeout, Silent, Protocol, Other };
const char* const kKindName[] = {"ok", "its own (injected) failure", "PeerFailed", "PeerAbandoned",
                                 "Timeout", "Silent", "ProtocolError", "another exception"};

struct Expected { Kind lead, follow; };

Expected expected(const Case& c) {
  // (what the sender ends with, what the receiver ends with) as (lead, follow)
  auto from_sender = [&c](Kind sender, Kind receiver) {
    return c.by == Side::Lead ? Expected{sender, receiver} : Expected{receiver, sender};
  };
  const bool lost = c.fault == Fault::Lost;
  switch (c.msg) {
    case Msg::None: return {Kind::Ok, Kind::Ok};
    case Msg::Abandon: return {Kind::Injected, lost ? Kind::Silent : Kind::PeerAbandoned};
    case Msg::Error: return from_sender(Kind::Injected, lost ? Kind::Silent : Kind::PeerFailed);  // (DONE or RESULT failed)
    case Msg::Loops: return from_sender(Kind::Injected, Kind::PeerFailed);
    default: break;
  }
  // Only the leading end's waits for SETUP_OK and READY are bounded (kWait); CONNECT
  // late makes its READY late. The following end's, and the wait for RESULT, are
  // bounded by the link alone (silence, a peer gone).
  const bool bounded = c.msg == Msg::SetupOk || c.msg == Msg::Connect || c.msg == Msg::Ready;
  switch (c.fault) {
    case Fault::Failed: return from_sender(Kind::Injected, Kind::PeerFailed);
    case Fault::LateWithin: return {Kind::Ok, Kind::Ok};
    case Fault::LateBeyond: return bounded ? Expected{Kind::Timeout, Kind::PeerFailed} : Expected{Kind::Ok, Kind::Ok};
    // The receiver hears silence and tells the sender, which then stops too (PeerFailed)
    // unless RESULT, its last message, was what was lost.
    case Fault::Lost: return c.msg == Msg::Result ? Expected{Kind::Silent, Kind::Ok} : from_sender(Kind::PeerFailed, Kind::Silent);
    // A copy where the peer's next message should be fails its receiver; after the
    // point's last reads (DONE, RESULT) it is left unread.
    case Fault::Duplicated:
      return c.msg == Msg::Done || c.msg == Msg::Result ? Expected{Kind::Ok, Kind::Ok}
                                                        : from_sender(Kind::PeerFailed, Kind::Protocol);
    case Fault::None: break;
  }
  return {Kind::Other, Kind::Other};
}

// ---- the stand-in lanes: core's loops on the fake device ----

// The data path between the ends: what the leading end's fake has posted per QP, which
// the following end's fake receives (SEND) as fast as its posted receives allow.
struct Wire {
  explicit Wire(uint32_t n) : posted(n) {}
  std::vector<std::atomic<uint64_t>> posted;
  std::atomic<bool> lead_looping{false};
};

// One end's lanes (one thread). The leading end runs core's bandwidth initiator loop,
// its completions kPostGap apart; a SEND point's following end runs core's receiver
// loop on what the leader posted. Each looks at the link once before it starts, as a
// real loop does within its first 4096 polls, so that a message waiting already is
// read at the same step every run. `fail_half_way`: the loop fails half-way. idle():
// the following end's loop has taken all that was sent and no more is coming.
class FakeLanes final : public LaneStandIn {
 public:
  FakeLanes(const TestConfig& cfg, Wire& wire, bool fail_half_way) : cfg_(cfg), wire_(wire), fail_(fail_half_way) {}

  Endpoint endpoint(uint32_t) const override {
    Endpoint e;
    e.gid = "::1";
    e.rkey = 1;
    e.slot_bytes = cfg_.work.size;
    e.regions = 1;
    for (uint32_t q = 0; q < cfg_.work.qps; ++q) {
      e.qpn.push_back(0x100 + q);
      e.psn.push_back(q);
    }
    return e;
  }

  PointResult measure(uint32_t, const RunControl& ctl, std::vector<uint64_t>& sent) override {
    const uint32_t nqp = cfg_.work.qps;
    FakeDevice::Options o = options();
    o.delay = kPostGap;
    FakeDevice dev(o);
    wire_.lead_looping = true;
    dev.on_poll = [&] {
      for (uint32_t q = 0; q < nqp; ++q) wire_.posted[q].store(dev.posted(q));
      if (fail_ && dev.posts * 2 >= nqp * cfg_.work.iters) throw Injected("the leading end's loop failed half-way (injected)");
    };
    detail::BwPlan p = detail::bw_plan(cfg_, cfg_.work.iters, 0);
    std::vector<SendQueue> sq(nqp);
    for (SendQueue& s : sq) s.until_signal = p.every;
    detail::SendWrs wrs(nqp, p.post_list, detail::opcode_of(cfg_.work.op), 0);
    detail::IdleWatch watch(ctl);
    OnExit note{[&] {  // however the loop ended
      wire_.lead_looping = false;
      for (const SendQueue& s : sq) left_posted += s.outstanding();
      device_faults = dev.refused_posts + dev.cq_overruns;
    }};
    if (ctl.on_idle) ctl.on_idle();
    LoopStats st = detail::bw_initiator_loop(dev, wrs, sq, p, watch);
    PointResult out;
    out.cfg = cfg_;
    out.per_qp = sent = st.per_qp;
    out.seconds = st.seconds;
    out.began = st.began;
    out.ended = st.ended;
    for (uint64_t n : st.per_qp) out.messages += n;
    return out;
  }

  LoopStats follow(uint32_t, std::vector<uint64_t>& expected, const RunControl& ctl, const bool*) override {
    const uint32_t nqp = cfg_.work.qps;
    FakeDevice::Options o = options();
    o.peer = FakeDevice::Peer::SendBack;  // what ping() delivers: a receive completion
    FakeDevice dev(o);
    uint64_t fed_total = 0;
    std::vector<uint64_t> fed(nqp, 0);
    dev.on_poll = [&] {
      bool all = !fail_ && !wire_.lead_looping;  // (read first: then `posted` is final)
      for (uint32_t q = 0; q < nqp; ++q) {
        const uint64_t n = wire_.posted[q].load();
        for (; fed[q] < n && dev.receives_posted(q) > 0; ++fed[q], ++fed_total) dev.ping(q);
        all = all && fed[q] == n;
      }
      idle_ = all;
      if (fail_ && fed_total * 2 >= nqp * cfg_.work.iters) throw Injected("the following end's loop failed half-way (injected)");
    };
    detail::ReceiveCount count(expected, nqp);
    RunControl local = ctl;  // as run_bw_receiver: DONE may set the targets
    local.on_idle = [&] {
      if (ctl.on_idle) ctl.on_idle();
      count.idle();
    };
    detail::IdleWatch watch(local);
    OnExit note{[&] {
      idle_ = false;
      device_faults = dev.missing_receives + dev.cq_overruns;
    }};
    local.on_idle();
    return detail::bw_receiver_loop(dev, count, detail::bw_plan(cfg_, 0, 0), cfg_.work.warmup, watch);
  }

  bool idle() const { return idle_; }
  uint64_t left_posted = 0;    // send WRs posted and never completed, when the loop ended
  uint64_t device_faults = 0;  // posts refused, CQ overruns, SENDs that found no receive

 private:
  struct OnExit {
    std::function<void()> f;
    ~OnExit() { f(); }
  };
  FakeDevice::Options options() const {
    FakeDevice::Options o;
    o.nqp = cfg_.work.qps;
    o.sq_depth = cfg_.knobs.tx_depth;
    o.rx_depth = cfg_.knobs.rx_depth;
    o.cq_depth = cq_depth_for(cfg_);
    return o;
  }
  const TestConfig cfg_;
  Wire& wire_;
  const bool fail_;
  std::atomic<bool> idle_{false};
};

// ---- one case, run ----

struct EndRun {
  Kind kind = Kind::Other;
  std::string what;
  LinkPair::Time at{};  // when it ended, on the links' clock
};

// Runs one end's half, recording how it ended: as the callers (session.cpp, serve.cpp,
// bench/mesh/phase.cpp) tell the endings apart.
void run_end(EndRun& r, LinkPair& links, int end, const std::function<void()>& body) {
  try {
    body();
    r.kind = Kind::Ok;
  } catch (const control::PeerFailed& e) {
    r = {Kind::PeerFailed, e.what()};
  } catch (const PeerAbandoned& a) {
    r = {Kind::PeerAbandoned, a.why};
  } catch (const control::Silent& e) {
    r = {Kind::Silent, e.what()};
  } catch (const control::Timeout& e) {
    r = {Kind::Timeout, e.what()};
  } catch (const control::ProtocolError& e) {
    r = {Kind::Protocol, e.what()};
  } catch (const Injected& e) {
    r = {Kind::Injected, e.what()};
  } catch (const std::exception& e) {
    r = {Kind::Other, e.what()};
  }
  r.at = links.now();
  links.finish(end);
}

// The leading end whose own side failed to set up, as ClientSession::set_up answers:
// SETUP_OK, then ABANDON, and its own failure (no ERROR: the peer frees its side).
[[noreturn]] void abandon(control::PeerLink& link) {
  control::Message m = link.recv(kWait);
  if (m.type != MsgType::SetupOk) unexpected_message(link, m, MsgType::SetupOk);
  const std::string why = "the leading end could not set up its side (injected)";
  link.send(MsgType::Abandon, {{"message", why}});
  throw Injected(why);
}

std::string listed(const std::vector<MsgType>& types) {
  std::string out;
  for (MsgType t : types) out += (out.empty() ? "" : ", ") + std::string(control::to_string(t));
  return out;
}

TestConfig point_config(Op op, bool spin) {  // bandwidth, 2 QPs x 1000 messages of 64 bytes, no warm-up
  TestConfig c;
  c.knobs.target_spin = spin;
  c.work.op = op;
  c.work.mode = Mode::Bw;
  c.work.qps = 2;
  c.work.iters = 1000;
  c.work.warmup = 0;
  c.work.size = 64;
  return c;
}

class AbortPaths : public ::testing::TestWithParam<Case> {};

TEST_P(AbortPaths, BothEndsFinishAsTheProtocolSays) {
  const Case& c = GetParam();
  const Expected want = expected(c);
  const TestConfig cfg = point_config(c.op, c.spin);
  Wire wire(cfg.work.qps);
  FakeLanes lead_lanes(cfg, wire, c.msg == Msg::Loops && c.by == Side::Lead);
  FakeLanes follow_lanes(cfg, wire, c.msg == Msg::Loops && c.by == Side::Follow);
  PointResources lead_res(cfg, lead_lanes), follow_res(cfg, follow_lanes);
  LinkPair links(kSilence, kForever);
  links.set_idle(LinkPair::kFollow, [&follow_lanes] { return follow_lanes.idle(); });
  using F = LinkPair::Fault;  // by Fault: None, Lost, LateWithin, LateBeyond, Duplicated, Failed
  constexpr F kOnLink[] = {F::None, F::Lost, F::Late, F::Late, F::Duplicated, F::Failed};
  if (c.msg != Msg::None && c.msg != Msg::Loops)
    links.add_fault(c.by == Side::Lead ? LinkPair::kLead : LinkPair::kFollow, type_of(c.msg),
                    kOnLink[static_cast<int>(c.fault)], c.fault == Fault::LateBeyond ? kLateBeyond : kLateWithin);
  // ERROR's rows: its sender fails at its last step (DONE, RESULT), where the peer's
  // wait is bounded by the link alone; the fault above is on the ERROR that follows.
  if (c.msg == Msg::Error && c.by == Side::Lead) links.add_fault(LinkPair::kLead, MsgType::Done, F::Failed);
  if (c.msg == Msg::Error && c.by == Side::Follow) links.add_fault(LinkPair::kFollow, MsgType::Result, F::Failed);
  std::atomic<bool> stop{false};
  EndOptions eo;
  eo.timeout = kLoopIdle;
  eo.interrupted = &stop;

  EndRun lead, follow;
  std::atomic<int> running{2};
  Connector lead_qps, follow_qps;  // PointResources::connect: nothing to connect on stand-in lanes
  std::thread lead_thread([&] {
    run_end(lead, links, LinkPair::kLead, [&] {
      if (c.msg == Msg::Abandon) abandon(links.end(LinkPair::kLead));
      lead_connect(lead_res, links.end(LinkPair::kLead), lead_qps, {}, kWait);
      lead_end(lead_res, links.end(LinkPair::kLead), eo);
    });
    --running;
  });
  std::thread follow_thread([&] {
    run_end(follow, links, LinkPair::kFollow, [&] {
      follow_connect(follow_res, links.end(LinkPair::kFollow), follow_qps, {});
      follow_end(follow_res, links.end(LinkPair::kFollow), eo);
    });
    --running;
  });
  // The links' clock moves while the ends run; an end still running after kWatchdog
  // (real time) has hung: both are cut loose so that the threads can be joined.
  const Clock::time_point t0 = Clock::now();
  while (running > 0 && Clock::now() - t0 < kWatchdog) {
    links.tick();
    std::this_thread::sleep_for(50us);
  }
  const bool hung = running > 0;
  if (hung) {
    stop = true;
    links.cut("cut by the test's watchdog");
  }
  lead_thread.join();
  follow_thread.join();
  ASSERT_FALSE(hung) << "an end hung (still running after " << kWatchdog.count() << " s)";
  EXPECT_TRUE(links.faults_hit()) << "a faulted message was never sent";

  std::printf("  leading end: %s %s\n  following end: %s %s\n", kKindName[static_cast<int>(lead.kind)],
              lead.what.c_str(), kKindName[static_cast<int>(follow.kind)], follow.what.c_str());
  const bool abandoning = c.msg == Msg::Abandon;
  auto check = [&](const char* name, const EndRun& r, Kind want_kind, int end, bool own_abandon) {
    SCOPED_TRACE(std::string("the ") + name + " end: " + r.what);
    EXPECT_EQ(kKindName[static_cast<int>(r.kind)], std::string(kKindName[static_cast<int>(want_kind)]));
    EXPECT_LE(r.at, kLateBeyond + kWait) << "finished, but late";
    if (r.kind == Kind::Ok) {
      EXPECT_EQ(links.errors_sent(end), 0);
      return;
    }
    // One error, one line, naming the peer or the step; a timeout or silence no sooner than due.
    EXPECT_FALSE(r.what.empty());
    EXPECT_EQ(r.what.find('\n'), std::string::npos);
    const std::string peer = links.end(end).who();
    std::vector<std::string> names;
    LinkPair::Time at_least{};
    switch (r.kind) {
      case Kind::PeerFailed: names = {peer + " reported: "}; break;
      case Kind::Protocol: names = {peer, control::to_string(type_of(c.msg))}; break;
      case Kind::Timeout: names = {peer, "waiting for "}, at_least = kWait; break;  // and what it awaited
      case Kind::Silent: names = {peer}, at_least = kSilence; break;
      case Kind::Injected: names = {c.msg == Msg::Loops ? "loop" : own_abandon ? "set up" : "before its "}; break;
      default: break;
    }
    for (const std::string& n : names) EXPECT_NE(r.what.find(n), std::string::npos) << "does not name " << n;
    EXPECT_GE(r.at, at_least);
    // An end that failed on its own tells its peer once; one the peer stopped tells nothing,
    // nor does a leading end that abandons (its ABANDON says it).
    const bool own = r.kind != Kind::PeerFailed && r.kind != Kind::PeerAbandoned && !own_abandon;
    EXPECT_EQ(links.errors_sent(end), own ? 1 : 0);
  };
  check("leading", lead, want.lead, LinkPair::kLead, abandoning);
  check("following", follow, want.follow, LinkPair::kFollow, false);
  // The target's wait for DONE spins exactly when asked to (every spinning row gets there).
  EXPECT_EQ(links.spinning_waits(LinkPair::kFollow), c.spin ? 1 : 0);
  EXPECT_EQ(links.spinning_waits(LinkPair::kLead), 0);

  // Nothing left posted by a loop that ended, and nothing the fake device saw go wrong.
  EXPECT_TRUE(lead.kind != Kind::Ok || lead_lanes.left_posted == 0) << lead_lanes.left_posted << " WRs left posted";
  EXPECT_EQ(lead_lanes.device_faults + follow_lanes.device_faults, 0u);

  // Both sessions go on to the next point (both ends done, or the follower freed its
  // side on ABANDON): nothing of this point may be left for it to read, but the copy of
  // a duplicated DONE, RESULT or ABANDON (which neither TCP nor MPI ever makes).
  const bool go_on = (lead.kind == Kind::Ok || abandoning) && (follow.kind == Kind::Ok || follow.kind == Kind::PeerAbandoned);
  if (go_on) {
    const bool dup = c.fault == Fault::Duplicated;
    const std::string lead_may = dup && c.msg == Msg::Result ? "RESULT" : "";
    const std::string follow_may = dup && c.msg == Msg::Done ? "DONE" : dup && c.msg == Msg::Abandon ? "ABANDON" : "";
    EXPECT_EQ(listed(links.unread(LinkPair::kLead)), lead_may) << "left unread by the leading end";
    const std::string follow_left = listed(links.unread(LinkPair::kFollow));
    if (dup && c.msg == Msg::Done && follow_left.empty()) return;  // SEND: the receiver's loop may read both
    EXPECT_EQ(follow_left, follow_may) << "left unread by the following end";
  }
}

INSTANTIATE_TEST_SUITE_P(Table, AbortPaths, ::testing::ValuesIn(all_cases()), case_name);

// The table covers every message type a point can carry: a new one fails here until
// it has its rows (or is listed as outside a point).
TEST(AbortPathsTable, EveryMessageTypeIsInAPointOrOutside) {
  for (auto t = static_cast<uint16_t>(MsgType::Hello); t <= static_cast<uint16_t>(control::kLastMsgType); ++t) {
    const auto type = static_cast<MsgType>(t);
    int in = 0;
    for (const PointMessage& m : kPointMessages) in += m.type == type;
    for (MsgType o : kOutsideAPoint) in += o == type;
    EXPECT_GE(in, 1) << control::to_string(type) << " is in no row of the table";
  }
}

}  // namespace
}  // namespace rdmasweep
