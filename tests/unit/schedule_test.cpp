// The mesh's schedules and --plan, without MPI or a device.
#include "bench/mesh/schedule.hpp"

#include <set>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include "bench/mesh/plan.hpp"

namespace rdmasweep::mesh_detail {
namespace {

// Every ordered pair exactly once, no rank twice in a phase, the phase count.
void check_matching(int n) {
  auto phases = phases_of(Pattern::Pairs, n, Schedule::Matching);
  const size_t want = n % 2 ? 2 * static_cast<size_t>(n) : 2 * static_cast<size_t>(n - 1);
  ASSERT_EQ(phases.size(), want) << n << " ranks";
  EXPECT_EQ(phase_count(Pattern::Pairs, n, Schedule::Matching), want) << n;
  std::set<std::pair<int, int>> seen;
  for (size_t p = 0; p < phases.size(); ++p) {
    std::set<int> busy;
    for (Flow f : phases[p]) {
      ASSERT_TRUE(f.src >= 0 && f.src < n && f.dst >= 0 && f.dst < n && f.src != f.dst) << n;
      EXPECT_TRUE(busy.insert(f.src).second) << "rank " << f.src << " twice in phase " << p << " of " << n;
      EXPECT_TRUE(busy.insert(f.dst).second) << "rank " << f.dst << " twice in phase " << p << " of " << n;
      EXPECT_TRUE(seen.insert({f.src, f.dst}).second) << f.src << "->" << f.dst << " twice, " << n << " ranks";
    }
    // A perfect matching: everyone busy (one rank sits out when n is odd).
    EXPECT_EQ(busy.size(), static_cast<size_t>(n - n % 2)) << "phase " << p << " of " << n;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n) * (n - 1)) << n;
}

TEST(MeshSchedule, MatchingCoversEveryOrderedPairOnceFrom2To64Ranks) {
  for (int n = 2; n <= 64; ++n) check_matching(n);
}

TEST(MeshSchedule, MatchingOn1024Ranks) { check_matching(1024); }

TEST(MeshSchedule, SequentialIsOneOrderedPairPerPhase) {
  for (int n : {2, 3, 7}) {
    auto phases = phases_of(Pattern::Pairs, n, Schedule::Sequential);
    EXPECT_EQ(phases.size(), static_cast<size_t>(n * (n - 1)));
    for (const auto& p : phases) EXPECT_EQ(p.size(), 1u);
  }
  EXPECT_EQ(phase_count(Pattern::Pairs, 1024, Schedule::Sequential), 1047552u);
}

TEST(MeshSchedule, DefaultIsMatchingAboveTwoRanksUnlessAsked) {
  MeshOptions o;
  EXPECT_EQ(effective_schedule(o, 2), Schedule::Sequential);
  EXPECT_EQ(effective_schedule(o, 3), Schedule::Matching);
  o.schedule_given = true;
  o.schedule = Schedule::Sequential;
  EXPECT_EQ(effective_schedule(o, 64), Schedule::Sequential);
}

TEST(MeshSchedule, MulticastIsOneSenderToEveryOtherRankInOnePhase) {
  for (int n : {2, 3, 17}) {
    auto phases = phases_of(Pattern::Multicast, n, Schedule::Matching);
    ASSERT_EQ(phases.size(), 1u) << n;
    ASSERT_EQ(phases[0].size(), static_cast<size_t>(n - 1)) << n;
    for (size_t i = 0; i < phases[0].size(); ++i) {
      EXPECT_EQ(phases[0][i].src, 0);
      EXPECT_EQ(phases[0][i].dst, static_cast<int>(i) + 1);
    }
    EXPECT_EQ(phase_count(Pattern::Multicast, n, Schedule::Matching), 1u);
  }
}

TEST(MeshSchedule, VictimIsOnePairAloneThenBesideEveryOtherRanksBackgroundOntoItsHost) {
  for (int n : {3, 4, 9}) {
    auto phases = phases_of(Pattern::Victim, n, Schedule::Matching);
    ASSERT_EQ(phases.size(), 2u) << n;
    ASSERT_EQ(phases[0].size(), 1u);
    EXPECT_EQ(std::make_tuple(phases[0][0].src, phases[0][0].dst, phases[0][0].background), std::make_tuple(1, 0, false));
    ASSERT_EQ(phases[1].size(), static_cast<size_t>(n - 1)) << n;
    EXPECT_EQ(std::make_tuple(phases[1][0].src, phases[1][0].dst, phases[1][0].background), std::make_tuple(1, 0, false));
    for (size_t i = 1; i < phases[1].size(); ++i)
      EXPECT_EQ(std::make_tuple(phases[1][i].src, phases[1][i].dst, phases[1][i].background),
                std::make_tuple(static_cast<int>(i) + 1, 0, true));
    EXPECT_EQ(phase_count(Pattern::Victim, n, Schedule::Matching), 2u);
  }
}

TEST(MeshPlan, OnThousandRanksWithoutMpi) {
  MeshOptions o;
  o.spec.iters = 100;
  o.spec.warmup = 10;
  o.spec.size = {4096};
  o.spec.size_given = true;
  nlohmann::json m = mesh_plan(o, 1024);
  EXPECT_EQ(m["schedule"], "matching");
  EXPECT_EQ(m["phases_per_point"], 2046);
  EXPECT_EQ(m["max_flows_per_phase"], 512);
  EXPECT_EQ(m["max_qps_per_rank"], 1);
  EXPECT_EQ(m["max_buffer_bytes_per_rank"], 2 * 4096);
  EXPECT_NE(plan_text(m).find("2046 phase(s)"), std::string::npos);
  o.schedule_given = true;
  o.schedule = Schedule::Sequential;
  nlohmann::json s = mesh_plan(o, 1024);
  EXPECT_EQ(s["phases_per_point"], 1047552);
  // Same work per flow, 512x the phases one at a time: the estimate grows with them.
  EXPECT_GT(s["estimated_seconds"].get<double>(), 400 * m["estimated_seconds"].get<double>());
  o.pattern = Pattern::AllToAll;
  o.schedule_given = false;
  nlohmann::json a = mesh_plan(o, 4);
  EXPECT_EQ(a["phases_per_point"], 1);
  EXPECT_EQ(a["max_qps_per_rank"], 6);  // a sender and a receiver end per other rank
}

}  // namespace
}  // namespace rdmasweep::mesh_detail
