// The bandwidth initiator's loop on the fake device (tests/support): exact counts
// under selective signaling and post lists, send-queue and sequence wraparound,
// completions routed by wr_id, the CQ never overrun, where a duration point stops,
// --bidir's timeline and its following end. How a point ends (idle timeout, interrupt,
// what `seconds` spans): tests/unit/loop_stop_test.cpp. The SEND receiver's loop:
// tests/unit/receiver_loop_test.cpp.
#include <gtest/gtest.h>


#include "tests/support/bw_fixture.hpp"
#include "tests/support/late_peer.hpp"

namespace rdmasweep {
namespace {

using detail::Clock;
using testing::bw_config;
using testing::BwFixture;
using testing::FakeDevice;
using testing::LatePeer;
using testing::LaterPeer;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

TEST(BwLoop, ExactCountsUnderSelectiveSignaling) {
  for (uint32_t every : {1u, 7u, 32u}) {
    for (uint64_t n : {1ull, 31ull, 1000ull, 12345ull}) {
      SCOPED_TRACE("signal_every " + std::to_string(every) + ", " + std::to_string(n) + " per QP");
      BwFixture f(bw_config(3, 128, every), n);
      FakeDevice fake(f.dev);
      LoopStats st = f.run(fake);
      ASSERT_EQ(st.per_qp.size(), 3u);
      for (uint32_t q = 0; q < 3; ++q) {
        EXPECT_EQ(st.per_qp[q], n);
        EXPECT_EQ(fake.posted(q), n);
        EXPECT_EQ(fake.signaled(q), ceil_div(n, every));  // every `every`-th, and the last
        EXPECT_EQ(f.sq[q].posted, n);
      }
      EXPECT_EQ(st.messages(), 3 * n);
      f.expect_clean(fake);
    }
  }
}

TEST(SendQueueAccounting, ACompletionThatRetiresNothingNewIsIgnored) {
  SendQueue s;
  s.posted = 100;
  EXPECT_TRUE(s.retire(63));
  EXPECT_EQ(s.completed, 64u);
  EXPECT_FALSE(s.retire(31));  // handed over late by another thread (--cq-scope process)
  EXPECT_FALSE(s.retire(63));
  EXPECT_EQ(s.completed, 64u);
  s.posted = s.completed = (uint64_t{1} << 32) - 10;  // across the 32-bit sequence's wrap
  EXPECT_TRUE(s.retire(static_cast<uint32_t>((uint64_t{1} << 32) + 5)));
  EXPECT_EQ(s.completed, (uint64_t{1} << 32) + 6);
  EXPECT_FALSE(s.retire(static_cast<uint32_t>((uint64_t{1} << 32) - 20)));
  EXPECT_EQ(s.completed, (uint64_t{1} << 32) + 6);
}

// The fake device, but every signaled completion is delivered again one poll later:
// what a thread sees when another thread of a shared CQ hands a completion over after
// this thread polled a later one of the same QP.
struct LateCopies {
  FakeDevice& fake;
  std::vector<ibv_wc> late;
  int post(uint32_t q, ibv_send_wr* w) { return fake.post(q, w); }
  uint32_t recv(const ibv_wc& wc) { return fake.recv(wc); }
  int poll(int n, ibv_wc* wc) {
    int got = static_cast<int>(std::min<size_t>(late.size(), static_cast<size_t>(n)));
    std::copy(late.begin(), late.begin() + got, wc);
    late.erase(late.begin(), late.begin() + got);
    int fresh = fake.poll(n - got, wc + got);
    late.insert(late.end(), wc + got, wc + got + fresh);
    return got + fresh;
  }
};

TEST(BwLoop, LateCopiesOfCompletionsChangeNoCount) {
  BwFixture f(bw_config(3, 64, 8), 1000);
  FakeDevice fake(f.dev);
  LateCopies ops{fake, {}};
  detail::IdleWatch watch(f.ctl);
  LoopStats st = detail::bw_initiator_loop(ops, f.wrs, f.sq, f.p, watch);
  for (uint32_t q = 0; q < 3; ++q) {
    EXPECT_EQ(st.per_qp[q], 1000u);  // not 2^32 more, and no QP ended twice
    EXPECT_EQ(f.sq[q].completed, 1000u);
  }
}

TEST(BwLoop, PostListsFillTheQueueInWholeChains) {
  // tx_depth 30 is no multiple of the post list: the loop must not overfill the
  // queue with the chain that does not fit.
  for (uint32_t pl : {2u, 4u, 16u}) {
    SCOPED_TRACE("post_list " + std::to_string(pl));
    const uint64_t n = 1001;
    BwFixture f(bw_config(2, 30, 7, pl), n);
    FakeDevice fake(f.dev);
    LoopStats st = f.run(fake);
    EXPECT_EQ(st.messages(), 2 * n);
    EXPECT_EQ(fake.longest_chain, pl);
    EXPECT_EQ(fake.post_calls, 2 * ceil_div(n, pl));  // whole chains, a short last one
    for (uint32_t q = 0; q < 2; ++q) EXPECT_EQ(fake.signaled(q), ceil_div(n, 7));
    f.expect_clean(fake);
  }
}

// The fake device, checking each chain as it is posted: every signaled WR (with
// `every_wr`, every WR) carries its QP and its sequence on that QP, and the signaled
// ones are exactly every `every`-th WR of the QP and its last.
template <bool EveryWr>
struct ChainCheck {
  static constexpr bool kReadsEveryWrId = EveryWr;
  FakeDevice& fake;
  uint32_t every;
  uint64_t n;
  std::vector<uint64_t> seq;
  uint64_t wrong = 0;
  int post(uint32_t q, ibv_send_wr* w) {
    for (ibv_send_wr* x = w; x != nullptr; x = x->next, ++seq[q]) {
      const bool sig = (x->send_flags & IBV_SEND_SIGNALED) != 0;
      wrong += sig != ((seq[q] + 1) % every == 0 || seq[q] + 1 == n);
      if (sig || EveryWr) wrong += x->wr_id != WrId::encode(q, static_cast<uint32_t>(seq[q]));
    }
    return fake.post(q, w);
  }
  int poll(int k, ibv_wc* wc) { return fake.poll(k, wc); }
  uint32_t recv(const ibv_wc& wc) { return fake.recv(wc); }
};

template <bool EveryWr>
void check_chains() {
  for (uint32_t pl : {1u, 4u, 16u}) {
    for (uint32_t every : {1u, 4u, 7u, 16u, 32u}) {
      if (every + pl > 65) continue;  // tx_depth 64: the signaling rule (validate)
      SCOPED_TRACE("post_list " + std::to_string(pl) + ", signal every " + std::to_string(every));
      const uint64_t n = 1003;
      BwFixture f(bw_config(3, 64, every, pl), n);
      FakeDevice fake(f.dev);
      ChainCheck<EveryWr> ops{fake, every, n, std::vector<uint64_t>(3, 0)};
      detail::IdleWatch watch(f.ctl);
      LoopStats st = detail::bw_initiator_loop(ops, f.wrs, f.sq, f.p, watch);
      EXPECT_EQ(st.messages(), 3 * n);
      EXPECT_EQ(ops.wrong, 0u);
      for (uint32_t q = 0; q < 3; ++q) EXPECT_EQ(fake.signaled(q), ceil_div(n, every));
      f.expect_clean(fake);
    }
  }
}

// A whole chain that starts as the last one did has the same WRs signaled: the loop
// then writes only their wr_ids. What the completions and a flushed WR read stays right.
TEST(BwLoop, WholeChainsKeepEverySignaledWrsSequence) { check_chains<false>(); }
// --validate's post fills each message by its sequence: there every WR's is written.
TEST(BwLoop, OpsThatReadEveryWrIdGetEveryWrsSequence) { check_chains<true>(); }

TEST(BwLoop, SendQueueWrapsAroundAndCarriesOverPoints) {
  // Many times the queue depth, starting just below 2^32 WRs so the 32-bit
  // sequence in the wr_id wraps during the point; then a second point on the same
  // QPs, as a sweep does.
  BwFixture f(bw_config(2, 16, 5, 3), 100000);
  for (SendQueue& s : f.sq) s.posted = s.completed = (uint64_t{1} << 32) - 1000;
  FakeDevice fake(f.dev);
  LoopStats st = f.run(fake);
  EXPECT_EQ(st.messages(), 200000u);
  f.expect_clean(fake);
  f.p.per_qp = 777;
  st = f.run(fake);
  EXPECT_EQ(st.messages(), 2 * 777u);
  for (uint32_t q = 0; q < 2; ++q) EXPECT_EQ(f.sq[q].posted, (uint64_t{1} << 32) - 1000 + 100000 + 777);
  f.expect_clean(fake);
}

TEST(BwLoop, CompletionsOfManyQpsAreRoutedByWrId) {
  // Each poll returns the QPs' completions in another order, as a shared CQ may.
  BwFixture f(bw_config(7, 64, 8, 2, Op::Send), 5001);
  f.dev.scramble = true;
  FakeDevice fake(f.dev);
  LoopStats st = f.run(fake);
  for (uint32_t q = 0; q < 7; ++q) EXPECT_EQ(st.per_qp[q], 5001u) << "QP " << q;
  f.expect_clean(fake);
}

TEST(BwLoop, CqDepthOfTheConfigIsNeverExceeded) {
  // The fake counts every completion owed to the loop against cq_depth_for(): the
  // loop may never have more signaled WRs in flight than the CQ holds.
  for (uint32_t every : {1u, 3u, 32u}) {
    BwFixture f(bw_config(16, 32, every), 4000);
    FakeDevice fake(f.dev);
    f.run(fake);
    f.expect_clean(fake);
    EXPECT_GT(fake.cq_high_water, 0u);
  }
}

// The fake device, remembering when each of a QP's last kKept posts was made: enough
// to count the WRs a QP posted after a time, as long as they were fewer than that.
struct PostTimes {
  static constexpr size_t kKept = 512;
  FakeDevice& fake;
  std::vector<std::vector<std::pair<Clock::time_point, uint32_t>>> last;  // per QP, a ring
  std::vector<uint64_t> calls;
  PostTimes(FakeDevice& f, uint32_t nqp) : fake(f), last(nqp, decltype(last)::value_type(kKept)), calls(nqp) {}
  int post(uint32_t q, ibv_send_wr* w) {
    const int rc = fake.post(q, w);
    if (rc != 0) return rc;
    uint32_t n = 0;
    for (const ibv_send_wr* x = w; x; x = x->next) ++n;
    last[q][calls[q]++ % kKept] = {Clock::now(), n};
    return rc;
  }
  int poll(int n, ibv_wc* wc) { return fake.poll(n, wc); }
  uint32_t recv(const ibv_wc& wc) { return fake.recv(wc); }
  // WRs QP q posted at or after t; UINT64_MAX when more posts than kept were.
  uint64_t posted_since(uint32_t q, Clock::time_point t) const {
    uint64_t wrs = 0;
    const uint64_t kept = std::min<uint64_t>(calls[q], kKept);
    for (uint64_t i = 0; i < kept; ++i) {
      const auto& [at, n] = last[q][(calls[q] - 1 - i) % kKept];
      if (at < t) return wrs;
      wrs += n;
    }
    return kept < kKept ? wrs : UINT64_MAX;
  }
};

TEST(BwLoop, DurationPointStopsAtASignaledWrWithEveryWrAccountedFor) {
  // Judged by what was posted, not by how long it took: on a busy machine the loop
  // may be descheduled for any time past its deadline, but once it reads the clock
  // past it, a QP posts only up to its next signaled WR.
  const uint32_t depth = 64, every = 7;
  BwFixture f(bw_config(3, depth, every, 4), 0, 0.2);
  FakeDevice fake(f.dev);
  PostTimes ops(fake, 3);
  detail::IdleWatch watch(f.ctl);
  LoopStats st = detail::bw_initiator_loop(ops, f.wrs, f.sq, f.p, watch);
  EXPECT_GE(st.seconds, 0.2);
  const Clock::time_point deadline = st.began + std::chrono::milliseconds(200);
  for (uint32_t q = 0; q < 3; ++q) {
    EXPECT_GT(st.per_qp[q], 0u);
    EXPECT_EQ(st.per_qp[q], fake.posted(q));
    EXPECT_EQ(fake.posted(q) % every, 0u) << "QP " << q << " did not stop at a signaled WR";
    EXPECT_EQ(fake.signaled(q), fake.posted(q) / every);
    // At most the queue's worth posted before the loop saw the time, then fewer
    // than `every` up to the signaled WR it stops at.
    EXPECT_LE(ops.posted_since(q, deadline), depth + every - 1) << "QP " << q;
  }
  f.expect_clean(fake);
}

// The timeline's convention: sample i is taken past boundary i+1 of the window, the
// last at the window's end with the point's total; its rates account for every message.
void expect_timeline(const Timeline& tl, double interval, uint64_t total, double seconds) {
  ASSERT_EQ(tl.interval, interval);
  ASSERT_EQ(tl.t.size(), tl.messages.size());
  // A sample within the window and the end's: a loop that runs for several intervals
  // reads the clock past at least one boundary, however busy the machine.
  ASSERT_GE(tl.t.size(), 2u);
  for (size_t i = 0; i + 1 < tl.t.size(); ++i) {
    EXPECT_GE(tl.t[i], static_cast<double>(i + 1) * interval - 1e-9) << "sample " << i << " before its boundary";
    EXPECT_LT(tl.t[i], tl.t[i + 1]);
    EXPECT_LE(tl.messages[i], tl.messages[i + 1]);
  }
  EXPECT_EQ(tl.messages.back(), total);
  EXPECT_NEAR(tl.t.back(), seconds, 0.01);
  const std::vector<double> rates = interval_rates(tl);
  EXPECT_GE(rates.size(), tl.t.size() - 1);
  for (double r : rates) EXPECT_GE(r, 0);
}

TEST(BwLoop, TimelineSamplesEveryIntervalUpToThePointsTotal) {
  BwFixture f(bw_config(2, 16, 4), 0, 0.3);
  f.p.interval = 0.05;
  f.dev.delay = std::chrono::microseconds(100);
  FakeDevice fake(f.dev);
  LoopStats st = f.run(fake);
  expect_timeline(st.timeline, 0.05, st.messages(), st.seconds);
  // At most one sample per boundary and the end: boundaries a descheduled loop slept
  // through are one longer interval, so fewer is not a fault (a busy machine gives 3-5).
  EXPECT_LE(st.timeline.t.size(), static_cast<size_t>(st.seconds / 0.05) + 1);
  f.expect_clean(fake);
}

TEST(BwLoop, NoTimelineWithoutAnInterval) {
  BwFixture f(bw_config(2, 16, 4), 0, 0.1);
  FakeDevice fake(f.dev);
  LoopStats st = f.run(fake);
  EXPECT_EQ(st.timeline.interval, 0);
  EXPECT_TRUE(st.timeline.t.empty());
}

TEST(BwLoop, CountedPointRecordsATimelineWhenAsked) {
  BwFixture f(bw_config(1, 1, 1), 40);  // one in flight, 5 ms each: about 0.2 s
  f.p.interval = 0.05;
  f.dev.delay = std::chrono::milliseconds(5);
  FakeDevice fake(f.dev);
  LoopStats st = f.run(fake);
  expect_timeline(st.timeline, 0.05, 40, st.seconds);
}

TEST(BwLoop, BidirTimelineEndsWithTheWindowWhileThePeersMessagesAreAwaited) {
  // The loop outlasts its window (its last send's completion) by 0.15 s, waiting for
  // the peer's messages: no sample may fall there (a timeline past `seconds`). Not
  // "no zero-rate interval": a test thread descheduled for a whole 20 ms interval on a
  // busy machine records one inside the window, as a stalled device would.
  BwFixture f(bw_config(1, 16, 4, 1, Op::Send), 200);  // 200 sends, 0.5 ms each: about 0.1 s
  f.p.interval = 0.02;
  f.dev.delay = std::chrono::microseconds(500);
  FakeDevice fake(f.dev);
  LatePeer ops{fake, f.sq, 200, 10, std::chrono::milliseconds(150)};
  Arrivals in = testing::awaiting(10);
  detail::IdleWatch watch(f.ctl);
  LoopStats st = detail::bw_initiator_loop(ops, f.wrs, f.sq, f.p, watch, &in);
  EXPECT_EQ(in.got[0], 10u);
  EXPECT_EQ(st.messages(), 200u);
  const Timeline& tl = st.timeline;
  expect_timeline(tl, 0.02, 200, st.seconds);
  for (size_t i = 0; i < tl.t.size(); ++i)
    EXPECT_LE(tl.t[i], st.seconds + 1e-9) << "sample " << i << " after the window";
}

// --bidir SEND's following end (await_peer) posts nothing until the leading end's
// first message is in, and opens its window at its first post; without it the loop
// posts at once (what let a server use up the client's receives before the client's
// loop had started: receiver-not-ready, the window resent).
TEST(BwLoop, BidirFollowerPostsNothingBeforeThePeersFirstMessage) {
  for (bool await : {false, true}) {
    SCOPED_TRACE(await ? "await_peer" : "leading");
    BwFixture f(bw_config(1, 16, 4, 1, Op::Send), 40);
    f.p.await_peer = await;
    f.dev.delay = std::chrono::microseconds(100);
    FakeDevice fake(f.dev);
    LaterPeer ops{fake, 10, std::chrono::milliseconds(50)};
    Arrivals in = testing::awaiting(10);
    detail::IdleWatch watch(f.ctl);
    LoopStats st = detail::bw_initiator_loop(ops, f.wrs, f.sq, f.p, watch, &in);
    EXPECT_EQ(in.got[0], 10u);
    EXPECT_EQ(st.messages(), 40u);
    if (await) {
      EXPECT_EQ(ops.posts_before_first, 0u);
      EXPECT_GE(st.began, ops.first_arrival);
      EXPECT_GE(fake.first_post, ops.first_arrival);
    } else {
      EXPECT_GT(ops.posts_before_first, 0u);
      EXPECT_LT(st.began, ops.first_arrival);
    }
    f.expect_clean(fake);
  }
}

// A following end whose peer never sends is not stuck: the idle timeout ends it.
TEST(BwLoop, BidirFollowerWhosePeerNeverSendsTimesOut) {
  BwFixture f(bw_config(1, 16, 4, 1, Op::Send), 40);
  f.p.await_peer = true;
  f.ctl.idle_timeout = std::chrono::milliseconds(200);
  FakeDevice fake(f.dev);
  LaterPeer ops{fake, 0, std::chrono::milliseconds(0)};
  Arrivals in = testing::awaiting(10);
  detail::IdleWatch watch(f.ctl);
  std::string what;
  try {
    detail::bw_initiator_loop(ops, f.wrs, f.sq, f.p, watch, &in);
  } catch (const RunAborted& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("no completion for"), std::string::npos) << what;
  EXPECT_EQ(fake.posts, 0u);
}

}  // namespace
}  // namespace rdmasweep
