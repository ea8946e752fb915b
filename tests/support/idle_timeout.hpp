// The loops' idle timeout as their tests see it (tests/unit/loop_stop_test.cpp,
// lat_loop_test.cpp, receiver_loop_test.cpp): a stalled loop gives up with RunAborted
// no sooner than its limit and well before 2 s past it, however busy the machine.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/engine/loop.hpp"

namespace rdmasweep::testing {

// Runs `run`, which must throw RunAborted after at least `limit`; returns what it said.
template <class Run>
std::string expect_idle_timeout(Run&& run, std::chrono::milliseconds limit) {
  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::string what;
  bool aborted = false;
  try {
    run();
  } catch (const RunAborted& e) {
    what = e.what();
    aborted = true;
  }
  const std::chrono::steady_clock::duration took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(aborted) << "the loop ended without RunAborted";
  EXPECT_GE(took, limit);
  EXPECT_LT(took, limit + std::chrono::seconds(2));
  return what;
}

}  // namespace rdmasweep::testing
