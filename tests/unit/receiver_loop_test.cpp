// The SEND bandwidth receiver's loop on the fake device (tests/support), with the
// test as its client: every message counted and its receive reposted, the end at the
// counts of the client's DONE, and its end under UD's losses.
#include <gtest/gtest.h>

#include "core/config/refusals.hpp"
#include "core/engine/loop_bw.hpp"
#include "tests/support/fake_device.hpp"
#include "tests/support/idle_timeout.hpp"

namespace rdmasweep {
namespace {

using detail::Clock;
using testing::FakeDevice;

// The receiver, with the test as the SEND client: each poll it sends into the
// receives posted, up to `sends` per QP. `on_idle` plays the client's DONE.
struct ReceiverRun {
  TestConfig cfg;
  FakeDevice fake;
  std::vector<uint64_t> sends, sent;
  Clock::time_point last_sent{};  // when the last message went in (its arrival is polled after)
  RunControl ctl;
  explicit ReceiverRun(const TestConfig& c, std::vector<uint64_t> n)
      : cfg(c), fake(options(c)), sends(std::move(n)), sent(sends.size(), 0) {
    ctl.idle_timeout = std::chrono::seconds(10);
    fake.on_poll = [this] {
      for (uint32_t q = 0; q < sends.size(); ++q)
        for (; sent[q] < sends[q] && fake.receives_posted(q) > 0; ++sent[q]) {
          fake.ping(q);
          last_sent = Clock::now();
        }
    };
  }
  static FakeDevice::Options options(const TestConfig& c) {
    FakeDevice::Options o;
    o.nqp = c.work.qps;
    o.rx_depth = c.knobs.rx_depth;
    o.cq_depth = cq_depth_for(c);
    o.peer = FakeDevice::Peer::SendBack;  // what ping() sends
    return o;
  }
  // `sender_done`: a lossy (UD) receiver, as run_bw_receiver sets one up.
  LoopStats run(std::vector<uint64_t>& expected, uint64_t warmup = 0, const bool* sender_done = nullptr) {
    detail::ReceiveCount count(expected, cfg.work.qps, sender_done);
    RunControl local = ctl;
    local.on_idle = [&] {
      if (ctl.on_idle) ctl.on_idle();
      count.idle();
    };
    detail::IdleWatch watch(local);
    return detail::bw_receiver_loop(fake, count, detail::bw_plan(cfg, 0, 0), warmup, watch);
  }
};

TestConfig receiver_config(uint32_t qps, uint32_t rx_depth) {
  TestConfig c;
  c.work.op = Op::Send;
  c.work.qps = qps;
  c.knobs.rx_depth = rx_depth;
  validate(c);
  return c;
}

TEST(BwReceiver, CountsEveryMessageAndRepostsEveryReceive) {
  ReceiverRun r(receiver_config(3, 16), {1000, 777, 1});
  std::vector<uint64_t> expected = r.sends;
  LoopStats st = r.run(expected, 10);
  EXPECT_EQ(st.per_qp, r.sends);
  EXPECT_EQ(r.fake.receives_reposted, 1778u);
  EXPECT_EQ(r.fake.missing_receives, 0u);
  EXPECT_EQ(r.fake.cq_overruns, 0u);
  EXPECT_LE(r.fake.cq_high_water, cq_depth_for(r.cfg));
}

// A device that completes the sender's WRs without moving data (a null device): the
// client's DONE counts messages that never arrive. Once DONE is in, the receiver waits
// --timeout with no completion, not its 24-hour wait for a leading end that is alive.
TEST(BwReceiver, MessagesThatNeverArriveAfterTheClientsDoneEndThePointWithinTheTimeout) {
  ReceiverRun r(receiver_config(2, 16), {40, 40});
  r.ctl.idle_timeout = std::chrono::hours(24);
  std::atomic<bool> done{false};
  r.ctl.settled = &done;
  r.ctl.settle_timeout = std::chrono::milliseconds(200);
  std::vector<uint64_t> expected(2, UINT64_MAX);
  r.ctl.on_idle = [&] {
    if (r.sent == r.sends && !done) {
      expected = {100, 40};  // the DONE of a sender whose device completed 60 SENDs on QP 0 it never sent
      done = true;
    }
  };
  try {
    r.run(expected);
    FAIL() << "the receiver waited on for messages that cannot come";
  } catch (const RunAborted& e) {
    EXPECT_NE(std::string(e.what()).find("no completion for 200 ms with the peer's DONE in"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(r.sent, r.sends);  // what did arrive was all taken first
}

// Before the DONE, silence is the leading end's to end (a link down it rides out):
// only idle_timeout applies.
TEST(BwReceiver, SilenceBeforeTheClientsDoneIsNotCutShortBySettling) {
  ReceiverRun r(receiver_config(1, 16), {10});
  r.ctl.idle_timeout = std::chrono::milliseconds(600);
  std::atomic<bool> done{false};
  r.ctl.settled = &done;
  r.ctl.settle_timeout = std::chrono::milliseconds(1);
  std::vector<uint64_t> expected(1, UINT64_MAX);
  try {
    r.run(expected);
    FAIL() << "a receiver with no DONE and no arrivals kept waiting past idle_timeout";
  } catch (const RunAborted& e) {
    EXPECT_NE(std::string(e.what()).find("no completion for 600 ms: "), std::string::npos) << e.what();
  }
}

TEST(BwReceiver, DurationModeEndsAtTheCountsOfTheClientsDone) {
  ReceiverRun r(receiver_config(2, 64), {5000, 4321});
  std::vector<uint64_t> expected(2, UINT64_MAX);
  r.ctl.on_idle = [&] {
    if (r.sent == r.sends) expected = r.sent;  // the client's DONE, once all has been sent
  };
  LoopStats st = r.run(expected);
  EXPECT_EQ(st.per_qp, r.sends);
}

// UD: datagrams are lost, so the client's DONE counts more than ever arrives and the
// receiver ends once nothing has arrived for kUdQuiet. That quiet runs from the last
// arrival, and waiting it out is no part of the receiver's window or CPU time.
TEST(BwReceiver, LossyReceiverEndsAtOnceWhenDoneComesLongAfterTheLastArrival) {
  ReceiverRun r(receiver_config(2, 64), {300, 200});
  std::vector<uint64_t> expected(2, UINT64_MAX);
  bool done = false;
  Clock::time_point all_sent{}, done_at{};
  const Clock::time_point t0 = Clock::now();
  r.ctl.on_idle = [&] {
    if (done || r.sent != r.sends) return;
    const Clock::time_point now = Clock::now();
    if (all_sent == Clock::time_point{}) all_sent = now;
    if (now - all_sent < detail::kUdQuiet + std::chrono::milliseconds(300)) return;
    done = true;  // the client's DONE, late: it sent 20 and 10 more, lost on the way
    done_at = now;
    expected = {320, 210};
  };
  LoopStats st = r.run(expected, 0, &done);
  const Clock::time_point end = Clock::now();
  EXPECT_EQ(st.per_qp, r.sends);
  // Longer than kUdQuiet has passed since the last arrival: no second quiet after DONE.
  EXPECT_LT(detail::seconds_between(done_at, end), 0.5) << "waited for a quiet again after DONE";
  const double to_last = detail::seconds_between(t0, all_sent);
  EXPECT_LE(st.seconds, to_last + 0.3) << "the window ran past the last arrival";
  EXPECT_LE(st.cpu_seconds, to_last + 0.3) << "the quiet wait counted as the receiver's CPU time";
}

TEST(BwReceiver, LossyReceiverCountsDatagramsThatArriveAfterDone) {
  ReceiverRun r(receiver_config(1, 64), {100});
  std::vector<uint64_t> expected(1, UINT64_MAX);
  bool done = false;
  Clock::time_point done_at{};
  const Clock::time_point t0 = Clock::now();
  r.ctl.on_idle = [&] {
    const Clock::time_point now = Clock::now();
    if (!done && r.sent == r.sends) {
      done = true;  // DONE: 150 sent, 20 of them lost, 30 still on their way
      done_at = now;
      expected = {150};
    } else if (done && r.sends[0] == 100 && now - done_at > std::chrono::milliseconds(300)) {
      r.sends[0] = 130;  // the late ones
    }
  };
  LoopStats st = r.run(expected, 0, &done);
  const Clock::time_point end = Clock::now();
  // The last arrival is polled after it went in, however late this thread runs: the
  // bounds below hold on a busy machine too.
  const Clock::time_point last = r.last_sent;
  EXPECT_EQ(st.per_qp, std::vector<uint64_t>{130});
  EXPECT_GE(end - last, detail::kUdQuiet) << "ended before a quiet since the last arrival";
  const double to_last = detail::seconds_between(t0, last);
  EXPECT_GE(st.seconds, 0.3);  // the window reaches the late ones
  EXPECT_LE(st.seconds, to_last + 0.3) << "the window ran past the last arrival";
  EXPECT_LE(st.cpu_seconds, to_last + 0.3) << "the quiet wait counted as the receiver's CPU time";
}

TEST(BwReceiver, IdleTimeoutFiresWhenTheClientStopsSending) {
  ReceiverRun r(receiver_config(2, 16), {100, 100});
  r.ctl.idle_timeout = std::chrono::milliseconds(200);
  std::vector<uint64_t> expected(2, 1000);
  testing::expect_idle_timeout([&] { r.run(expected); }, r.ctl.idle_timeout);
}

}  // namespace
}  // namespace rdmasweep
