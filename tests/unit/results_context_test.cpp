// The results context's one builder (core/results/context.hpp): this side's end as
// every command names it, the sweep's keys only for a sweep, each command's note.
#include "core/results/context.hpp"

#include <gtest/gtest.h>

#include "core/results/model.hpp"

namespace rdmasweep {
namespace {

// An end as a peer's HELLO says it.
control::Hello an_end() {
  return control::hello_from_json({{"protocol", control::kProtocolVersion},
                                   {"tool_version", "0.1.0"},
                                   {"host", "a"},
                                   {"device", "mlx5_0"},
                                   {"firmware", "22.31.1014"},
                                   {"link_layer", "Ethernet"},
                                   {"kernel", "Linux 6.1.0"},
                                   {"active_mtu", 4096u},
                                   {"rate_gbps", 100},
                                   {"max_qp", 1024u},
                                   {"max_cqe", 4096u},
                                   {"gid", "::ffff:192.0.2.1"},
                                   {"gid_index", 3u},
                                   {"gid_type", "RoCE v2"},
                                   {"capabilities", {{"transport", "RoCE"}}}});
}

TEST(ResultsContext, ThisSidesEndAndTheRunsKeys) {
  const nlohmann::json c = results_context(RunContext{"hunt", an_end(), 1, {{"ci", "nightly"}}, 0});
  EXPECT_EQ(c["command"], "hunt");
  EXPECT_EQ(c["tool"], "rdmasweep");
  EXPECT_EQ(c["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(c["host_name"], "a");
  EXPECT_EQ(c["device"], "mlx5_0");
  EXPECT_EQ(c["firmware"], "22.31.1014");
  EXPECT_EQ(c["mtu"], 4096);
  EXPECT_EQ(c["rate_gbps"], 100.0);
  EXPECT_EQ(c["port"], 1);
  EXPECT_EQ(c["gid"], "::ffff:192.0.2.1");
  EXPECT_EQ(c["gid_index"], 3);
  EXPECT_EQ(c["transport"], "RoCE");
  EXPECT_EQ(c["labels"]["ci"], "nightly");
  EXPECT_EQ(c["interval"], (nlohmann::json{{"seconds", 0.0}, {"points", "all"}}));
  EXPECT_EQ(c["latency_note"], kLatencyNote);
  EXPECT_TRUE(c.contains("clock"));
  for (const char* k : {"sweep", "sweep_file", "points", "clock_choice", "cq_policy"}) EXPECT_FALSE(c.contains(k)) << k;
}

TEST(ResultsContext, ASweepAddsItsKeysAndACommandItsNote) {
  RunContext run{"multicast", an_end(), 1, {}, -1};
  run.latency_note = "one-way";
  const SweepContext sw{"s.json", {{"op", {"write"}}}, 4, "tsc", true};
  const nlohmann::json c = results_context(run, &sw);
  EXPECT_EQ(c["latency_note"], "one-way");
  EXPECT_EQ(c["interval"], (nlohmann::json{{"seconds", kDefaultInterval}, {"points", "duration"}}));
  EXPECT_EQ(c["sweep_file"], "s.json");
  EXPECT_EQ(c["sweep"]["op"][0], "write");
  EXPECT_EQ(c["points"], 4);
  EXPECT_EQ(c["clock_choice"], "tsc");
  EXPECT_EQ(c["cq_policy"], "cap");
}

TEST(ResultsContext, AnEndIsNamedTheSameForEveryCommand) {
  const nlohmann::json e = end_context(an_end());
  EXPECT_EQ(e["host"], "a");
  EXPECT_EQ(e["mtu"], 4096);
  EXPECT_EQ(e["gid_type"], "RoCE v2");
  EXPECT_EQ(e["capabilities"]["transport"], "RoCE");
}

}  // namespace
}  // namespace rdmasweep
