#include "core/measure/wall_time.hpp"

#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rdmasweep {
namespace {

WallTime some_parts() {
  WallTime w;
  w.setup = 0.25;
  w.warmup = 0.5;
  w.measured = 1.0;
  w.counters = 0.125;
  w.control = 0.0625;
  w.writing = 0.03125;
  return w;
}

TEST(WallTime, SummaryLineNamesEveryPartAndWhatIsLeft) {
  EXPECT_EQ(wall_summary(some_parts(), 2.0),
            "wall 2.0 s: setup 0.25 s (12.5%), warm-up 0.50 s (25.0%), measured 1.00 s (50.0%), counters 0.12 s "
            "(6.2%), control 0.06 s (3.1%), writing 0.03 s (1.6%), other 0.03 s (1.6%)");
}

// The shares printed add up to the whole wall time, "other" included.
TEST(WallTime, PartsAndOtherAddUpToTheWall) {
  const WallTime w = some_parts();
  const double wall = 3.7;
  nlohmann::json j = wall_json(w, wall);
  double sum = 0;
  for (const char* k : {"setup_seconds", "warmup_seconds", "measured_seconds", "counters_seconds", "control_seconds",
                        "writing_seconds", "other_seconds"})
    sum += j.at(k).get<double>();
  EXPECT_DOUBLE_EQ(sum, wall);
  EXPECT_DOUBLE_EQ(j["wall_seconds"].get<double>(), wall);
  EXPECT_DOUBLE_EQ(j["other_seconds"].get<double>(), wall - w.sum());

  double percent = 0;
  const std::string line = wall_summary(w, wall);
  std::regex share(R"(([0-9.]+)%\))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), share); it != std::sregex_iterator(); ++it)
    percent += std::stod((*it)[1].str());
  EXPECT_NEAR(percent, 100.0, 0.35) << line;  // seven shares, each rounded to 0.05
}

TEST(WallTime, SumsAddPartByPart) {
  WallTime a = some_parts();
  a += some_parts();
  EXPECT_DOUBLE_EQ(a.measured, 2.0);
  EXPECT_DOUBLE_EQ(a.writing, 0.0625);
  EXPECT_DOUBLE_EQ(a.sum(), 2 * some_parts().sum());
}

// A lap's split never gives a part more than the lap took: the parts still add up.
TEST(WallTime, SplitGivesAtMostTheLap) {
  WallTime w;
  const auto start = std::chrono::steady_clock::now() - std::chrono::milliseconds(100);
  Laps laps(w, start);
  laps.split(&WallTime::measured, 1000.0, &WallTime::warmup);  // more than the lap: all of it
  EXPECT_EQ(w.warmup, 0.0);
  EXPECT_GE(w.measured, 0.1);
  EXPECT_LT(w.measured, 100.0);
  Laps more(w, std::chrono::steady_clock::now() - std::chrono::milliseconds(200));
  more.split(&WallTime::counters, 0.05, &WallTime::control);
  EXPECT_DOUBLE_EQ(w.counters, 0.05);
  EXPECT_GE(w.control, 0.15 - 1e-9);
}

}  // namespace
}  // namespace rdmasweep
