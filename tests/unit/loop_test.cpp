// The bandwidth initiator's loop on a fake device whose completions arrive a set
// time after the post: what `seconds` spans, how long a duration point lasts, and
// how an interrupt ends a point that keeps completing.
#include <gtest/gtest.h>

#include <atomic>
#include <deque>

#include "core/loop_bw.hpp"

namespace rdmasweep {
namespace {

using detail::Clock;

// Completes every WR `delay` after its post, in order (one wire per device).
struct DelayedOps {
  explicit DelayedOps(std::chrono::microseconds d) : delay(d) {}
  std::chrono::microseconds delay;
  std::deque<std::pair<Clock::time_point, ibv_wc>> wire;
  uint64_t posts = 0;
  std::function<void()> on_poll;  // the test's hook: raise a signal, count polls
  Clock::time_point first_post{}, last_completion{};

  int post(uint32_t, ibv_send_wr* w) {
    Clock::time_point t = Clock::now();
    if (posts == 0) first_post = t;
    Clock::time_point at = wire.empty() ? t + delay : std::max(wire.back().first, t) + delay;
    for (; w; w = w->next, ++posts) {
      if (!(w->send_flags & IBV_SEND_SIGNALED)) continue;
      ibv_wc wc{};
      wc.wr_id = w->wr_id;
      wc.status = IBV_WC_SUCCESS;
      wire.emplace_back(at, wc);
    }
    return 0;
  }
  int poll(int n, ibv_wc* wc) {
    if (on_poll) on_poll();
    int got = 0;
    Clock::time_point now = Clock::now();
    while (got < n && !wire.empty() && wire.front().first <= now) {
      wc[got++] = wire.front().second;
      wire.pop_front();
      last_completion = now;
    }
    return got;
  }
};

struct Fixture {
  detail::BwPlan p;
  std::vector<SendQueue> sq;
  detail::SendWrs wrs;
  RunControl ctl;
  Fixture(uint32_t nqp, uint32_t depth, uint32_t every)
      : sq(nqp), wrs(nqp, 1, IBV_WR_RDMA_WRITE, 0) {
    p.nqp = nqp;
    p.depth = depth;
    p.every = every;
    p.batch = 16;
    for (SendQueue& s : sq) s.until_signal = every;
    ctl.idle_timeout = std::chrono::seconds(10);
  }
  LoopStats run(DelayedOps& ops) {
    detail::IdleWatch watch(ctl);
    return detail::bw_initiator_loop(ops, wrs, sq, p, watch);
  }
};

TEST(BwLoop, SecondsSpanFirstPostToLastCompletion) {
  Fixture f(1, 1, 1);  // one operation in flight: 5 of them take at least 5 delays
  f.p.per_qp = 5;
  DelayedOps ops(std::chrono::milliseconds(20));
  LoopStats st = f.run(ops);
  EXPECT_EQ(st.messages(), 5u);
  double span = std::chrono::duration<double>(ops.last_completion - ops.first_post).count();
  EXPECT_GE(span, 0.1);
  EXPECT_GE(st.seconds, span);
  EXPECT_LT(st.seconds, span + 0.05);
  EXPECT_GE(st.cpu_seconds, 0);
  EXPECT_LE(st.cpu_seconds, st.seconds + 0.05);  // busy polling: at most the wall time
}

TEST(BwLoop, DurationPointLastsItsDurationWhenEveryTurnIsSlow) {
  // Completions every 5 ms: a loop that read its clock every 64 turns would
  // overshoot by a third of a second.
  Fixture f(2, 4, 2);
  f.p.duration = 0.3;
  DelayedOps ops(std::chrono::milliseconds(5));
  LoopStats st = f.run(ops);
  EXPECT_GE(st.seconds, 0.3);
  EXPECT_LT(st.seconds, 0.3 + 0.1);
  EXPECT_GT(st.messages(), 0u);
}

TEST(BwLoop, InterruptStopsPostingDrainsAndThrows) {
  Fixture f(4, 64, 8);
  f.p.duration = 30;
  std::atomic<bool> flag{false};
  f.ctl.interrupted = &flag;
  DelayedOps ops(std::chrono::microseconds(200));
  Clock::time_point raised{};
  uint64_t posts_at_raise = 0;
  ops.on_poll = [&] {
    if (!flag && ops.posts >= 2000) {
      flag = true;
      raised = Clock::now();
      posts_at_raise = ops.posts;
    }
  };
  std::string what;
  try {
    f.run(ops);
  } catch (const RunAborted& e) {
    what = e.what();
  }
  EXPECT_EQ(what, "interrupted");
  Clock::time_point end = Clock::now();
  EXPECT_LT(end - raised, detail::kInterruptDrain + std::chrono::milliseconds(200));
  EXPECT_EQ(ops.posts, posts_at_raise) << "posted after the interrupt";
}

TEST(BwLoop, InterruptDrainIsBounded) {
  Fixture f(1, 8, 1);
  f.p.per_qp = 1000;
  std::atomic<bool> flag{false};
  f.ctl.interrupted = &flag;
  DelayedOps ops(std::chrono::seconds(5));  // nothing completes within the drain
  ops.on_poll = [&] { flag = ops.posts > 0; };
  Clock::time_point t0 = Clock::now();
  EXPECT_THROW(f.run(ops), RunAborted);
  EXPECT_LT(Clock::now() - t0, detail::kInterruptDrain + std::chrono::milliseconds(300));
}

}  // namespace
}  // namespace rdmasweep
