// A multicast receiver's rate: the arrivals its window holds over that window.
#include <gtest/gtest.h>

#include "core/engine/multicast.hpp"

namespace rdmasweep {
namespace {

// Five arrivals 1 ms apart: a 4 ms window from the first to the last, holding the
// four that came after the first, 1000 per second (five over it said 1250).
TEST(MulticastWindow, CountsTheArrivalsAfterTheFirstOverFirstToLast) {
  ArrivalWindow w;
  for (uint64_t i = 0; i < 5; ++i) w.add(1'000'000'000 + i * 1'000'000);
  EXPECT_EQ(w.arrivals, 5u);
  EXPECT_EQ(w.counted(), 4u);
  EXPECT_DOUBLE_EQ(w.seconds(), 0.004);
  EXPECT_DOUBLE_EQ(static_cast<double>(w.counted()) / w.seconds(), 1000.0);

  ArrivalWindow one;  // one arrival: no window, nothing counted
  one.add(5);
  EXPECT_EQ(one.counted(), 0u);
  EXPECT_EQ(one.seconds(), 0.0);
}


// The multicast sender's completions carry their point's tag: a late completion of an
// aborted earlier point neither counts as sent nor pushes `done` past what was posted.
TEST(McastWrId, ALateCompletionOfAnEarlierPointIsNotThisPointsCount) {
  uint64_t done = 0;
  EXPECT_TRUE(McastWrId::take(McastWrId::encode(4, 16), 4, done));
  EXPECT_EQ(done, 16u);
  EXPECT_FALSE(McastWrId::take(McastWrId::encode(3, 500), 4, done));  // point 3's, after point 4 began
  EXPECT_EQ(done, 16u);
  EXPECT_TRUE(McastWrId::take(McastWrId::encode(4, 8), 4, done));  // an older one of this point: no step back
  EXPECT_EQ(done, 16u);
  EXPECT_TRUE(McastWrId::take(McastWrId::encode(0x1000004, 17), 4, done)) << "tags compare on their low 24 bits";
  EXPECT_EQ(done, 17u);
  EXPECT_EQ(McastWrId::encode(1, (uint64_t{1} << 40) - 1) & McastWrId::kCountMask, (uint64_t{1} << 40) - 1);
}

}  // namespace
}  // namespace rdmasweep
