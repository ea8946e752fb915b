// The latency initiator's loop on the fake device (tests/support), whose peer
// answers every ping: exact round trips for SEND, WRITE (pong seen in memory, or
// as a receive with --events) and READ, selective signaling with a queue that
// fills, sequence wraparound, completions routed by wr_id, the CQ never overrun,
// and how duration and the idle timeout end a point. Then the responder, with the
// fake (or the test) as its client.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>

#include "core/config/refusals.hpp"
#include "core/engine/loop_lat.hpp"
#include "tests/support/fake_device.hpp"
#include "tests/support/idle_timeout.hpp"

namespace rdmasweep {
namespace {

using detail::Clock;
using testing::FakeDevice;

TestConfig lat_config(Op op, uint32_t qps, uint32_t tx_depth = 128, uint32_t every = 32, bool events = false) {
  TestConfig c;
  c.work.op = op;
  c.work.mode = Mode::Lat;
  c.work.qps = qps;
  c.knobs.tx_depth = tx_depth;
  c.knobs.signal_every = every;
  c.knobs.events = events;
  validate(c);
  return c;
}

// One point's loop as run_lat_initiator sets it up, with the fake in place of the
// device and its peer: the fake's CQ is as deep as the point's own (cq_depth_for).
struct LatFixture {
  TestConfig cfg;
  detail::LatPlan p;
  std::vector<SendQueue> sq;
  detail::SendWrs wrs;
  std::vector<char> tx, rx;  // each QP's tag byte
  RunControl ctl;
  FakeDevice::Options dev;

  LatFixture(const TestConfig& c, uint64_t warmup, uint64_t iters, double duration = 0)
      : cfg(c),
        p(detail::lat_plan(c, warmup, iters, duration)),
        sq(c.work.qps),
        wrs(c.work.qps, 1, write_with_imm(c) ? IBV_WR_RDMA_WRITE_WITH_IMM : detail::opcode_of(c.work.op), 0),
        tx(c.work.qps, 0),
        rx(c.work.qps, 0) {
    for (SendQueue& s : sq) s.until_signal = p.every;
    ctl.idle_timeout = std::chrono::seconds(10);
    dev.nqp = c.work.qps;
    dev.sq_depth = c.knobs.tx_depth;
    dev.cq_depth = cq_depth_for(c);
    if (c.work.op == Op::Send || write_with_imm(c)) {
      dev.peer = FakeDevice::Peer::SendBack;
      dev.rx_depth = c.knobs.rx_depth;
    } else if (c.work.op == Op::Write) {
      dev.peer = FakeDevice::Peer::WriteBack;
    }
    for (uint32_t q = 0; q < c.work.qps; ++q) {
      p.tx_tag.push_back(&tx[q]);
      p.rx_tag.push_back(&rx[q]);
      dev.tx_tag.push_back(&tx[q]);
      dev.rx_tag.push_back(&rx[q]);
    }
  }
  LatStats run(FakeDevice& fake) {
    detail::IdleWatch watch(ctl);
    return detail::lat_initiator_loop(fake, wrs, sq, p, watch);
  }
  LoopStats respond(FakeDevice& fake, const bool* finished) {
    detail::IdleWatch watch(ctl);
    return detail::lat_responder_loop(fake, wrs, sq, p, finished, watch);
  }
  void expect_clean(const FakeDevice& fake) {
    EXPECT_EQ(fake.cq_overruns, 0u) << "CQ high water " << fake.cq_high_water << " > " << dev.cq_depth;
    EXPECT_LE(fake.cq_high_water, dev.cq_depth);
    EXPECT_EQ(fake.refused_posts, 0u);
    EXPECT_EQ(fake.missing_receives, 0u);
  }
};

// Exact round trips per QP and the samples behind them.
void expect_round_trips(LatFixture& f, const FakeDevice& fake, const LatStats& st, uint64_t warmup, uint64_t iters) {
  const uint32_t nqp = f.p.nqp;
  ASSERT_EQ(st.per_qp.size(), nqp);
  for (uint32_t q = 0; q < nqp; ++q) {
    EXPECT_EQ(st.per_qp[q], iters) << "QP " << q;
    EXPECT_EQ(fake.posted(q), warmup + iters) << "QP " << q;
    // Pings are never "last": every `every`-th is signaled, the tail waits for the next point.
    EXPECT_EQ(fake.signaled(q), (warmup + iters) / f.p.every) << "QP " << q;
    EXPECT_LE(st.qp_min_ns[q], st.qp_max_ns[q]);
  }
  EXPECT_EQ(st.hist.count(), nqp * iters);
  f.expect_clean(fake);
}

TEST(LatLoop, SendExactRoundTripsUnderSelectiveSignaling) {
  for (uint32_t every : {1u, 7u, 32u}) {
    SCOPED_TRACE("signal_every " + std::to_string(every));
    LatFixture f(lat_config(Op::Send, 3, 128, every), 10, 1001);
    FakeDevice fake(f.dev);
    LatStats st = f.run(fake);
    expect_round_trips(f, fake, st, 10, 1001);
    EXPECT_EQ(fake.receives_reposted, 3u * 1011);
  }
}

TEST(LatLoop, WritePongSeenInMemory) {
  LatFixture f(lat_config(Op::Write, 2, 64, 7), 5, 999);
  ASSERT_TRUE(f.p.in_memory);
  FakeDevice fake(f.dev);
  LatStats st = f.run(fake);
  expect_round_trips(f, fake, st, 5, 999);
  EXPECT_EQ(fake.receives_reposted, 0u);
}

TEST(LatLoop, WriteWithImmediatePongIsAReceive) {
  LatFixture f(lat_config(Op::Write, 2, 64, 7, /*events=*/true), 5, 999);
  ASSERT_FALSE(f.p.in_memory);
  FakeDevice fake(f.dev);
  LatStats st = f.run(fake);
  expect_round_trips(f, fake, st, 5, 999);
  EXPECT_EQ(fake.receives_reposted, 2u * 1004);
}

TEST(LatLoop, ReadSignalsEveryPing) {
  LatFixture f(lat_config(Op::Read, 2, 128, 32), 3, 500);
  EXPECT_EQ(f.p.every, 1u);  // its own completion is the pong
  FakeDevice fake(f.dev);
  LatStats st = f.run(fake);
  expect_round_trips(f, fake, st, 3, 500);
}

TEST(LatLoop, FullSendQueueWaitsForTheSignaledCompletion) {
  // signal_every == tx_depth: the queue is full after every `every` pings, and
  // the pong arrives before the completion that frees it, in a poll of its own
  // (poll_batch 1). Started just below 2^32 WRs so the wr_id's 32-bit sequence wraps.
  TestConfig c = lat_config(Op::Send, 2, 4, 4);
  c.knobs.poll_batch = 1;
  LatFixture f(c, 0, 10000);
  for (SendQueue& s : f.sq) s.posted = s.completed = (uint64_t{1} << 32) - 100;
  f.dev.pong_first = true;
  FakeDevice fake(f.dev);
  LatStats st = f.run(fake);
  expect_round_trips(f, fake, st, 0, 10000);
}

TEST(LatLoop, CompletionsOfManyQpsAreRoutedByWrId) {
  LatFixture f(lat_config(Op::Send, 9, 16, 3), 2, 2000);
  f.dev.scramble = true;
  FakeDevice fake(f.dev);
  LatStats st = f.run(fake);
  expect_round_trips(f, fake, st, 2, 2000);
}

// Two QPs whose pongs one poll returns together; QP 0's post takes 2 ms. QP 1's
// latency ends when that poll returned, before QP 0's ping is posted again: a
// completion's end time never includes the posts made for those before it.
TEST(LatLoop, APollsCompletionsShareOneEndTimeTakenBeforeAnyRepost) {
  using std::chrono::milliseconds;
  for (Op op : {Op::Send, Op::Write, Op::Read}) {
    LatFixture f(lat_config(op, 2), 0, 12);
    f.dev.post_cost = {milliseconds(2), milliseconds(0)};
    FakeDevice fake(f.dev);
    LatStats s = f.run(fake);
    ASSERT_EQ(s.per_qp, (std::vector<uint64_t>{12, 12})) << to_string(op);
    // QP 0's ping includes its own 2 ms post (one-way: half a round trip for SEND and WRITE).
    const uint64_t own = fetches(op) ? 2'000'000 : 1'000'000;
    EXPECT_GE(s.qp_min_ns[0], own) << to_string(op);
    // QP 1's holds no post of QP 0's (before the fix: every one of them did).
    EXPECT_LT(s.qp_sum_ns[1] / 12, own / 4) << to_string(op);
  }
}

TEST(LatLoop, DurationPointLastsItsDuration) {
  LatFixture f(lat_config(Op::Send, 2), 10, 0, 0.2);
  f.dev.delay = std::chrono::microseconds(50);
  FakeDevice fake(f.dev);
  LatStats st = f.run(fake);
  EXPECT_GE(st.seconds, 0.2);
  EXPECT_LT(st.seconds, 0.2 + 1.0);  // generous: a shared, noisy machine
  for (uint32_t q = 0; q < 2; ++q) {
    EXPECT_GT(st.per_qp[q], 0u);
    EXPECT_EQ(st.per_qp[q] + 10, fake.posted(q));
  }
  f.expect_clean(fake);
}

// A duration-mode ping-pong ends once wound up (client --beside's background), each QP
// at its next round trip.
TEST(LatLoop, AWoundUpDurationPointEndsAtEachQpsNextRoundTrip) {
  LatFixture f(lat_config(Op::Send, 2), 10, 0, 30.0);
  std::atomic<bool> wind_up{false};
  f.ctl.wind_up = &wind_up;
  FakeDevice fake(f.dev);
  fake.raise_after(2000, wind_up);
  LatStats st = f.run(fake);
  EXPECT_LT(st.seconds, 30.0);
  for (uint32_t q = 0; q < 2; ++q) {
    EXPECT_GT(st.per_qp[q], 0u);
    EXPECT_EQ(st.per_qp[q] + 10, fake.posted(q));
  }
  EXPECT_GE(fake.posts, 2000u);
  f.expect_clean(fake);
}

// The measured window opens (RunControl::on_window: --progress-file's `measuring`) once,
// as the first QP's first measured ping goes: every warm-up ping of that QP before it.
TEST(LatLoop, TheWindowOpensOnceAfterTheWarmUp) {
  for (uint32_t nqp : {1u, 3u}) {
    SCOPED_TRACE(nqp);
    LatFixture f(lat_config(Op::Send, nqp), 10, 20);
    FakeDevice fake(f.dev);
    std::vector<uint64_t> posted_then;
    f.ctl.on_window = [&] {
      uint64_t most = 0;
      for (uint32_t q = 0; q < nqp; ++q) most = std::max(most, fake.posted(q));
      posted_then.push_back(most);
    };
    LatStats st = f.run(fake);
    ASSERT_EQ(posted_then.size(), 1u);
    EXPECT_EQ(posted_then[0], 10u) << "the QP that opened it had sent its warm-up, and nothing measured";
    EXPECT_EQ(st.messages(), 20u * nqp);
  }
}

TEST(LatLoop, TimelineCountsMeasuredRoundTripsOnly) {
  LatFixture f(lat_config(Op::Send, 2), 10, 0, 0.25);
  f.p.interval = 0.05;
  f.dev.delay = std::chrono::microseconds(50);
  FakeDevice fake(f.dev);
  LatStats st = f.run(fake);
  const Timeline& tl = st.timeline;
  ASSERT_EQ(tl.interval, 0.05);
  // A sample within the window and the end's; at most one per boundary (a descheduled
  // loop's missed boundaries are one longer interval, so no more is asked of a busy host).
  ASSERT_GE(tl.t.size(), 2u);
  EXPECT_LE(tl.t.size(), static_cast<size_t>(st.seconds / 0.05) + 1);
  EXPECT_EQ(tl.messages.back(), st.messages());  // warm-up round trips excluded
  EXPECT_NEAR(tl.t.back(), st.seconds, 0.01);
  for (size_t i = 0; i + 1 < tl.t.size(); ++i) {
    EXPECT_GE(tl.t[i], static_cast<double>(i + 1) * 0.05 - 1e-9);
    EXPECT_LE(tl.messages[i], tl.messages[i + 1]);
  }
}

TEST(LatLoop, IdleTimeoutFiresWhenThePeerStopsAnswering) {
  LatFixture f(lat_config(Op::Write, 2), 0, 100000);
  f.ctl.idle_timeout = std::chrono::milliseconds(200);
  FakeDevice fake(f.dev);
  fake.stall_after(3000);
  const std::string what = testing::expect_idle_timeout([&] { f.run(fake); }, f.ctl.idle_timeout);
  EXPECT_NE(what.find("no completion for"), std::string::npos) << what;
}

// The responder, with the fake as the client: every pong brings the next ping
// (SendBack), until `pongs` were sent in all; then *finished, as the client's DONE.
LoopStats respond_until(LatFixture& f, FakeDevice& fake, uint64_t pongs) {
  bool finished = false;
  fake.on_poll = [&] { finished = fake.posts >= pongs; };
  for (uint32_t q = 0; q < f.p.nqp; ++q) fake.ping(q);
  return f.respond(fake, &finished);
}

TEST(LatResponder, SendAnswersEveryPingUnderSelectiveSignaling) {
  for (uint32_t every : {1u, 7u, 32u}) {
    SCOPED_TRACE("signal_every " + std::to_string(every));
    LatFixture f(lat_config(Op::Send, 3, 128, every), 0, 0);
    FakeDevice fake(f.dev);
    LoopStats st = respond_until(f, fake, 3000);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t q = 0; q < 3; ++q) {
      EXPECT_EQ(st.per_qp[q], fake.posted(q)) << "QP " << q;
      EXPECT_EQ(fake.signaled(q), fake.posted(q) / every) << "QP " << q;
      lo = std::min(lo, st.per_qp[q]);
      hi = std::max(hi, st.per_qp[q]);
    }
    EXPECT_GE(st.messages(), 3000u);
    EXPECT_LE(hi - lo, 1u) << "one ping in flight per QP: the QPs keep pace";
    f.expect_clean(fake);
  }
}

TEST(LatResponder, FullSendQueueHoldsThePongUntilACompletion) {
  // The next ping arrives before the pong's completion, alone in its poll: with
  // signal_every == tx_depth the pong waits for the completion. The 32-bit
  // sequence wraps on the way.
  TestConfig c = lat_config(Op::Send, 2, 4, 4);
  c.knobs.poll_batch = 1;
  LatFixture f(c, 0, 0);
  for (SendQueue& s : f.sq) s.posted = s.completed = (uint64_t{1} << 32) - 100;
  f.dev.pong_first = true;
  FakeDevice fake(f.dev);
  LoopStats st = respond_until(f, fake, 5000);
  for (uint32_t q = 0; q < 2; ++q) EXPECT_EQ(st.per_qp[q], fake.posted(q));
  EXPECT_GE(st.messages(), 5000u);
  f.expect_clean(fake);
}

// A WRITE latency responder with the test as its client: while `pinging()`, each QP's
// next ping tag goes into the responder's memory once its last ping was answered
// (`pings`: how many each QP got); `done()` plays the client's DONE.
LoopStats respond_to_writes(LatFixture& f, FakeDevice& fake, std::vector<uint64_t>& pings,
                            const std::function<bool()>& pinging, const std::function<bool()>& done) {
  pings.assign(f.p.nqp, 0);
  bool finished = false;
  fake.on_poll = [&] {
    finished = done();
    for (uint32_t q = 0; q < pings.size() && !finished && pinging(); ++q)
      if (fake.posted(q) == pings[q]) f.rx[q] = detail::tag_of(pings[q]++);
  };
  return f.respond(fake, &finished);
}

TEST(LatResponder, WritePingSeenInMemory) {
  LatFixture f(lat_config(Op::Write, 3, 64, 7), 0, 0);
  f.dev.peer = FakeDevice::Peer::None;
  FakeDevice fake(f.dev);
  std::vector<uint64_t> pings;
  LoopStats st = respond_to_writes(f, fake, pings, [] { return true; }, [&] { return fake.posts >= 2000; });
  for (uint32_t q = 0; q < 3; ++q) {
    EXPECT_EQ(st.per_qp[q], pings[q]) << "QP " << q;
    EXPECT_EQ(fake.signaled(q), pings[q] / 7) << "QP " << q;
  }
  EXPECT_GE(st.messages(), 2000u);
  f.expect_clean(fake);
}

// The responder's CPU window ends at its last pong, not at the DONE that ends its loop:
// the client stops pinging, the responder busy-polls 0.2 s of its own CPU time, then
// DONE. Judged in this thread's CPU time, so a busy machine cannot move the verdict.
TEST(LatResponder, CpuWindowEndsAtTheLastPongNotAtDone) {
  LatFixture f(lat_config(Op::Write, 2, 64, 1), 0, 0);
  f.dev.peer = FakeDevice::Peer::None;
  FakeDevice fake(f.dev);
  std::vector<uint64_t> pings;
  double cpu_last = -1;  // when the last pong was out: from there the wait for DONE
  const double cpu_start = loop_cpu_seconds();
  const auto pinging = [&] { return fake.posts < 1000; };
  const auto done = [&] {
    if (fake.posts < 1000) return false;
    if (cpu_last < 0) cpu_last = loop_cpu_seconds();
    return loop_cpu_seconds() - cpu_last >= 0.2;
  };
  LoopStats st = respond_to_writes(f, fake, pings, pinging, done);
  EXPECT_EQ(st.messages(), 1000u);
  EXPECT_GT(st.cpu_seconds, 0);
  EXPECT_LT(st.cpu_seconds, cpu_last - cpu_start + 0.05) << "the wait for DONE counted as the window's CPU";
}

TEST(LatResponder, IdleTimeoutFiresWhenTheClientStopsPinging) {
  LatFixture f(lat_config(Op::Send, 2), 0, 0);
  f.ctl.idle_timeout = std::chrono::milliseconds(200);
  FakeDevice fake(f.dev);
  fake.stall_after(1000);
  testing::expect_idle_timeout([&] { respond_until(f, fake, UINT64_MAX); }, f.ctl.idle_timeout);
}

}  // namespace
}  // namespace rdmasweep
