#include "core/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace rdmasweep {

// Whatever the source, ticks convert to real elapsed nanoseconds (wide bounds: this
// checks the calibration and the unit, not the machine's speed).
static void expect_measures_a_sleep(ticks::Source s) {
  ticks::init(s);
  uint64_t a = ticks::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  uint64_t b = ticks::now();
  ASSERT_GT(b, a);
  double ms = static_cast<double>(ticks::to_ns(b - a)) / 1e6;
  EXPECT_GT(ms, 45.0) << ticks::source_name();
  EXPECT_LT(ms, 2000.0) << ticks::source_name();
}

TEST(Ticks, SystemClock) {
  expect_measures_a_sleep(ticks::Source::System);
  EXPECT_STREQ(ticks::source_name(), "system");
}

#ifdef RDMASWEEP_HAVE_TSC
TEST(Ticks, TimeStampCounter) {
  expect_measures_a_sleep(ticks::Source::Tsc);
  EXPECT_STREQ(ticks::source_name(), "tsc");
}
#endif

TEST(Ticks, ParsesSourceNames) {
  EXPECT_EQ(ticks::parse("tsc"), ticks::Source::Tsc);
  EXPECT_EQ(ticks::parse("auto"), ticks::Source::Auto);
  EXPECT_THROW(ticks::parse("rdtsc"), std::invalid_argument);
}

}  // namespace rdmasweep
