#include "core/config/knobs.hpp"
#include "core/config/sweep.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace rdmasweep {

TEST(Sweep, ParsesListsAndRanges) {
  EXPECT_EQ(parse_axis("qps", "1,2,4,16"), (std::vector<uint64_t>{1, 2, 4, 16}));
  EXPECT_EQ(parse_axis("size", "64:1k:x2"), (std::vector<uint64_t>{64, 128, 256, 512, 1024}));
  EXPECT_EQ(parse_axis("size", "64:65536:x4").back(), 65536u);
  EXPECT_EQ(parse_axis("qps", "1:4:+1"), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(parse_axis("qps", "1,8:32:x2"), (std::vector<uint64_t>{1, 8, 16, 32}));
}

TEST(Sweep, RejectsBadRangesNamingTheKey) {
  for (const char* bad : {"", "x", "4:1:x2", "1:8:x1", "1:8:/2", "1:8"}) {
    try {
      parse_axis("qps", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("qps"), std::string::npos) << e.what();
    }
  }
}

TEST(Sweep, InlineAutoAndOutstandingReadsAreAxes) {
  SweepSpec s;
  EXPECT_EQ(expand(s).at(0).knobs.inline_size, kInlineAuto);
  apply_override(s, "inline_size", "auto,0,64");
  apply_override(s, "outs", "0,16");
  apply_override(s, "op", "read");
  EXPECT_EQ(s.inline_size, (std::vector<uint64_t>{kInlineAuto, 0, 64}));
  EXPECT_EQ(expand(s).size(), 6u);
  EXPECT_EQ(sweep_json(s)["inline_size"], nlohmann::json::parse(R"(["auto", 0, 64])"));
  apply_json(s, nlohmann::json::parse(R"({"inline_size": "auto", "outs": 8})"));
  EXPECT_EQ(s.inline_size, (std::vector<uint64_t>{kInlineAuto}));
  EXPECT_EQ(expand(s).at(0).knobs.outs, 8u);
  EXPECT_THROW(apply_override(s, "outs", "auto"), ConfigError);
}

TEST(Sweep, AtomicsMoveEightBytesWhateverTheSizeAxisSays) {
  SweepSpec s;
  apply_override(s, "op", "send,faa,cas");
  apply_override(s, "size", "64,4096");
  std::vector<TestConfig> pts = expand(s);
  ASSERT_EQ(pts.size(), 4u);  // send at both sizes, then one 8-byte point per atomic
  EXPECT_EQ(point_name(pts[0]).substr(0, 18), "send/bw/qps:1/size");
  EXPECT_EQ(pts[1].work.size, 4096u);
  EXPECT_EQ(pts[2].work.op, Op::Faa);
  EXPECT_EQ(pts[3].work.op, Op::Cas);
  EXPECT_EQ(pts[2].work.size, 8u);
  EXPECT_EQ(pts[3].work.size, 8u);
  EXPECT_EQ(point_name(pts[2]).substr(0, 19), "faa/bw/qps:1/size:8");
}

// perftest's ib_*_lat measure 2 B unless told; its ib_*_bw 64 KiB. A sweep without a
// size does the same per point, and any size given (file or command line) is used as is.
TEST(Sweep, LatencyWithoutASizeIsPerftestsTwoBytes) {
  SweepSpec s;
  apply_override(s, "mode", "bw,lat");
  std::vector<TestConfig> points = expand(s);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].work.mode, Mode::Bw);
  EXPECT_EQ(points[0].work.size, 65536u);
  EXPECT_EQ(points[1].work.mode, Mode::Lat);
  EXPECT_EQ(points[1].work.size, kLatDefaultBytes);
  EXPECT_EQ(kLatDefaultBytes, 2u);
  apply_override(s, "size", "65536");
  points = expand(s);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].work.size, 65536u);  // given, even at the default's value
  SweepSpec atomic;
  apply_override(atomic, "op", "faa");
  apply_override(atomic, "mode", "lat");
  EXPECT_EQ(expand(atomic).at(0).work.size, kAtomicBytes);
  SweepSpec file;
  apply_json(file, nlohmann::json::parse(R"({"mode": "lat", "size": [64, 128]})"));
  ASSERT_EQ(expand(file).size(), 2u);
  EXPECT_EQ(expand(file).at(0).work.size, 64u);
}

TEST(Sweep, FileKeysAndCommandLineOverrides) {
  SweepSpec s;
  apply_json(s, nlohmann::json::parse(R"({"op": ["write", "read"], "mode": "lat", "qps": [1, 4],
                                          "size": {"from": 64, "to": 4096, "mul": 4}, "iters": 50})"));
  EXPECT_EQ(s.op, (std::vector<std::string>{"write", "read"}));
  EXPECT_EQ(s.size, (std::vector<uint64_t>{64, 256, 1024, 4096}));
  apply_override(s, "qps", "2");
  apply_override(s, "op", "send");
  std::vector<TestConfig> pts = expand(s);
  ASSERT_EQ(pts.size(), 4u);  // send x lat x qps 2 x four sizes
  EXPECT_EQ(point_name(pts[0]), "send/lat/qps:2/size:64/cq:" + std::to_string(cq_depth_for(pts[0])));
  EXPECT_EQ(pts[3].work.size, 4096u);
  EXPECT_EQ(pts[0].work.iters, 50u);
}

TEST(Sweep, UnknownKeyAndImpossibleValueAreRejectedWithTheKey) {
  SweepSpec s;
  try {
    apply_json(s, nlohmann::json::parse(R"({"qp": 4})"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'qp'"), std::string::npos);
  }
  apply_json(s, nlohmann::json::parse(R"({"size": 0})"));
  try {
    expand(s);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("size"), std::string::npos);
  }
  EXPECT_THROW(apply_json(s, nlohmann::json::parse(R"({"op": "atomic"})")), ConfigError);
  EXPECT_THROW(apply_json(s, nlohmann::json::parse(R"({"repetitions": 0})")), ConfigError);
}

// Results contexts record the sweep through sweep_json: every key a sweep file takes
// must be there, and reading it back must give the same spec. A knob added to the
// sweep's keys but not to sweep_json (or read back wrongly) fails here.
TEST(Sweep, JsonRecordsEveryKnobAndReadsBack) {
  SweepSpec s;
  // Every knob away from its default, so a key that is dropped or read back into the
  // wrong field shows.
  apply_json(s, nlohmann::json::parse(R"({"op": ["write", "read"], "mode": ["lat"], "qps": [2, 3], "cq_depth": [5],
      "tx_depth": [6], "rx_depth": [7], "post_list": [8], "signal_every": [9], "inline_size": [10],
      "poll_batch": [11], "srq": [0, 1], "events": [1], "outs": [4], "threads": [2, 3], "cq_scope": ["process"], "tclass": [96], "sl": [3], "flow_label": [7, 8], "mtu": [512], "qp_timeout": [18], "retry_count": [5], "hugepages": [1], "bidir": [1], "mr_per_qp": [1], "transport": ["rc", "ud"], "validate": [1], "rate": ["1gbps", "2mpps"], "arrivals": ["poisson"], "target_spin": [1],
      "size": [12, 13], "iters": 14, "duration": 1.5,
      "warmup": 15, "repetitions": 16, "description": "every knob"})"));
  nlohmann::json j = sweep_json(s);
  std::set<std::string> written, keys(sweep_keys().begin(), sweep_keys().end());
  for (const auto& [k, v] : j.items()) written.insert(k);
  EXPECT_EQ(written, keys);
  for (const std::string& axis : sweep_axes()) {
    EXPECT_TRUE(j[axis].is_array()) << axis;
    EXPECT_NE(j[axis], sweep_json(SweepSpec{})[axis]) << axis << " still has its default";
  }
  SweepSpec back;
  apply_json(back, j);
  EXPECT_EQ(sweep_json(back), j);
  EXPECT_EQ(back.srq, s.srq);
  EXPECT_EQ(back.events, s.events);
  EXPECT_EQ(back.duration, 1.5);
  EXPECT_EQ(back.repetitions, 16u);
}

TEST(Sweep, ShippedConfigsParse) {
  for (const char* f : {"quick.json", "full.json", "rxe-vs-mlx5.json", "qp-scaling.json", "threads.json"}) {
    SweepSpec s = load_sweep_file(std::string(RDMASWEEP_SOURCE_DIR) + "/configs/" + f);
    EXPECT_GT(expand(s).size(), 0u) << f;
  }
}

TEST(Beside, TheBackgroundIsOnePointOfTheKnobsGivenTheRestTheirDefaults) {
  TestConfig bg = background_point("op=write,mode=bw,qps=8,size=64k");
  EXPECT_EQ(bg.work.op, Op::Write);
  EXPECT_EQ(bg.work.mode, Mode::Bw);
  EXPECT_EQ(bg.work.qps, 8u);
  EXPECT_EQ(bg.work.size, 65536u);
  EXPECT_EQ(bg.knobs.tx_depth, expand(SweepSpec{}).at(0).knobs.tx_depth);
  EXPECT_EQ(background_point("op=send,bidir=1,rate=1mpps").knobs.rate, expand([] {
              SweepSpec s;
              apply_override(s, "rate", "1mpps");
              return s;
            }()).at(0).knobs.rate);
}

TEST(Beside, RefusesWhatIsNotOneBackgroundPointSayingHow) {
  const std::pair<const char*, const char*> bad[] = {
      {"", "KEY=VALUE"},
      {"op=write,qps", "'qps' is not KEY=VALUE"},
      {"qps=1,2", "'2' is not KEY=VALUE"},
      {"qps=1:4:+1", "one background point"},
      {"rate=50%", "absolute --rate"},
      {"duration=3", "runs as long as the point beside it needs"},
      {"colour=red", "colour"},
  };
  for (const auto& [text, why] : bad) {
    try {
      background_point(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
    }
  }
}

}  // namespace rdmasweep
