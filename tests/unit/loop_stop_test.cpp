// How a bandwidth point ends on the fake device (tests/support): the idle timeout when
// completions stop, what `seconds` spans, a duration kept when every turn is slow,
// client --beside's wind-up, and an interrupt: no more posts, a bounded drain, an
// exception. The loop's counts and routing: tests/unit/loop_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "tests/support/bw_fixture.hpp"
#include "tests/support/idle_timeout.hpp"

namespace rdmasweep {
namespace {

using detail::Clock;
using testing::bw_config;
using testing::BwFixture;
using testing::FakeDevice;

TEST(BwLoop, IdleTimeoutFiresWhenCompletionsStop) {
  BwFixture f(bw_config(2, 64, 8), 100000);
  f.ctl.idle_timeout = std::chrono::milliseconds(200);
  FakeDevice fake(f.dev);
  fake.stall_after(5000);  // the peer dies mid-point
  const std::string what = testing::expect_idle_timeout([&] { f.run(fake); }, f.ctl.idle_timeout);
  EXPECT_NE(what.find("no completion for"), std::string::npos) << what;
}

TEST(BwLoop, SecondsSpanFirstPostToLastCompletion) {
  BwFixture f(bw_config(1, 1, 1), 5);  // one operation in flight: 5 of them take at least 5 delays
  f.dev.delay = std::chrono::milliseconds(20);
  FakeDevice fake(f.dev);
  LoopStats st = f.run(fake);
  EXPECT_EQ(st.messages(), 5u);
  double span = std::chrono::duration<double>(fake.last_completion - fake.first_post).count();
  EXPECT_GE(span, 0.1);
  EXPECT_GE(st.seconds, span);
  EXPECT_LT(st.seconds, span + 0.05);
  EXPECT_GE(st.cpu_seconds, 0);
  EXPECT_LE(st.cpu_seconds, st.seconds + 0.05);  // busy polling: at most the wall time
}

TEST(BwLoop, DurationPointLastsItsDurationWhenEveryTurnIsSlow) {
  // Completions every 5 ms: a loop that read its clock every 64 turns would
  // overshoot by a third of a second.
  BwFixture f(bw_config(2, 4, 2), 0, 0.3);
  f.dev.delay = std::chrono::milliseconds(5);
  FakeDevice fake(f.dev);
  LoopStats st = f.run(fake);
  EXPECT_GE(st.seconds, 0.3);
  EXPECT_LT(st.seconds, 0.3 + 0.1);
  EXPECT_GT(st.messages(), 0u);
}

// client --beside ends its background's window when the point beside it has run: a
// duration-mode loop whose wind-up flag is set stops as at its deadline, every posted
// WR accounted for.
TEST(BwLoop, AWoundUpDurationPointEndsAsAtItsDeadline) {
  BwFixture f(bw_config(4, 64, 8), 0, 30.0);
  std::atomic<bool> wind_up{false};
  f.ctl.wind_up = &wind_up;
  FakeDevice fake(f.dev);
  fake.raise_after(20000, wind_up);
  LoopStats st = f.run(fake);
  EXPECT_LT(st.seconds, 30.0);
  EXPECT_GE(st.messages(), 20000u);
  EXPECT_EQ(st.messages(), fake.posts);
  f.expect_clean(fake);
}

TEST(BwLoop, InterruptStopsPostingDrainsAndThrows) {
  BwFixture f(bw_config(4, 64, 8), 0, 30);
  std::atomic<bool> flag{false};
  f.ctl.interrupted = &flag;
  f.dev.delay = std::chrono::microseconds(200);
  FakeDevice fake(f.dev);
  Clock::time_point raised{};
  uint64_t posts_at_raise = 0;
  fake.on_poll = [&] {
    if (!flag && fake.posts >= 2000) {
      flag = true;
      raised = Clock::now();
      posts_at_raise = fake.posts;
    }
  };
  std::string what;
  try {
    f.run(fake);
  } catch (const RunAborted& e) {
    what = e.what();
  }
  EXPECT_EQ(what, "interrupted");
  Clock::time_point end = Clock::now();
  EXPECT_LT(end - raised, detail::kInterruptDrain + std::chrono::milliseconds(200));
  EXPECT_EQ(fake.posts, posts_at_raise) << "posted after the interrupt";
}

TEST(BwLoop, InterruptDrainIsBounded) {
  BwFixture f(bw_config(1, 8, 1), 1000);
  std::atomic<bool> flag{false};
  f.ctl.interrupted = &flag;
  f.dev.delay = std::chrono::seconds(5);  // nothing completes within the drain
  FakeDevice fake(f.dev);
  fake.on_poll = [&] { flag = fake.posts > 0; };
  Clock::time_point t0 = Clock::now();
  EXPECT_THROW(f.run(fake), RunAborted);
  EXPECT_LT(Clock::now() - t0, detail::kInterruptDrain + std::chrono::milliseconds(300));
}

}  // namespace
}  // namespace rdmasweep
