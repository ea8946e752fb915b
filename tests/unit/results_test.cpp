#include "core/results/model.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include "tests/support/process.hpp"

namespace rdmasweep {

TEST(Results, FiguresOfALatencyPoint) {
  PointResult r;
  r.cfg.work.mode = Mode::Lat;
  r.seconds = 2.0;
  r.messages = 1000;
  r.bytes = 64000;
  r.per_qp = {400, 600};
  r.latency = true;
  for (uint64_t ns = 1000; ns <= 100000; ns += 100) r.hist.record(ns);
  std::map<std::string, double> f;
  for (auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_DOUBLE_EQ(f["bytes_per_second"], 32000);
  EXPECT_DOUBLE_EQ(f["items_per_second"], 500);
  EXPECT_DOUBLE_EQ(f["qp_messages_min"], 400);
  EXPECT_DOUBLE_EQ(f["qp_messages_max"], 600);
  EXPECT_LE(f["lat_min_us"], f["lat_p50_us"]);
  EXPECT_LE(f["lat_p50_us"], f["lat_p90_us"]);
  EXPECT_LE(f["lat_p90_us"], f["lat_p99_us"]);
  EXPECT_LE(f["lat_p99_us"], f["lat_p999_us"]);
  EXPECT_LE(f["lat_p999_us"], f["lat_max_us"]);
  EXPECT_NEAR(f["lat_p50_us"], 50.5, 0.1);
  EXPECT_NEAR(f["lat_mean_us"], 50.5, 1e-9);
  // 991 samples 0.1 us apart: sqrt((n^2 - 1) / 12) steps.
  EXPECT_NEAR(f["lat_stddev_us"], 0.1 * std::sqrt((991.0 * 991.0 - 1) / 12), 1e-9);
  EXPECT_DOUBLE_EQ(f["qp_max_min_ratio"], 1.5);
  EXPECT_NEAR(f["qp_jain_index"], 1000.0 * 1000 / (2 * (400.0 * 400 + 600.0 * 600)), 1e-12);
}

static void expect_rates(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "interval " << i;
}

TEST(Results, IntervalFiguresAreTheSlowestAndFastestFullInterval) {
  PointResult r;
  r.seconds = 0.32;
  r.messages = r.bytes = 360;
  r.timeline.interval = 0.1;
  r.timeline.t = {0.1, 0.2, 0.3, 0.32};  // the last 20 ms (the drain) is too short to count
  r.timeline.messages = {100, 150, 350, 360};
  expect_rates(interval_rates(r.timeline), {1000, 500, 2000});
  std::map<std::string, double> f;
  for (const auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_NEAR(f.at("interval_min"), 500, 1e-6);
  EXPECT_NEAR(f.at("interval_max"), 2000, 1e-6);
  const nlohmann::json j = timeline_json(r.timeline);
  EXPECT_EQ(j["interval_s"], 0.1);
  EXPECT_EQ(j["messages"].back(), 360);
  r.timeline = Timeline{};
  f.clear();
  for (const auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_EQ(f.count("interval_min"), 0u);
}

TEST(Results, ALoopThatSleptThroughBoundariesGivesOneLongInterval) {
  Timeline tl;
  tl.interval = 0.1;
  tl.t = {0.1, 0.5, 0.6};  // a stall from 0.1 to 0.5 s
  tl.messages = {100, 120, 220};
  expect_rates(interval_rates(tl), {1000, 50, 1000});
}

// A mesh flow's window on the phase's clock is the one its loops measured (its
// threads' first start to last end), however long after it the flow's thread got
// back from joining them: here 10 s after the phase's zero.
TEST(Results, AWindowOnAnotherClockIsTheMeasuredOne) {
  using namespace std::chrono;
  const steady_clock::time_point zero = steady_clock::now() - seconds(10);
  PointResult r;
  r.began = zero + milliseconds(1500);
  r.ended = zero + milliseconds(2250);
  r.seconds = 0.75;
  const auto [start, end] = window_since(r, zero);
  EXPECT_NEAR(start, 1.5, 1e-9);
  EXPECT_NEAR(end, 2.25, 1e-9);
}

TEST(Results, JainIndexBounds) {
  EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({8, 0, 0, 0}), 0.25);
  EXPECT_TRUE(std::isnan(jain_index({0, 0})));
}

TEST(Results, BandwidthPointHasNoLatencyFigures) {
  PointResult r;
  r.seconds = 1;
  r.messages = 10;
  for (auto& [k, v] : figures(r)) EXPECT_EQ(k.rfind("lat_", 0), std::string::npos) << k;
}

TEST(Results, UdPointCountsSentReceivedAndLost) {
  PointResult r;
  r.seconds = 1;
  r.messages = 10;
  auto has = [](const PointResult& p, const std::string& key) {
    for (auto& [k, v] : figures(p))
      if (k == key) return true;
    return false;
  };
  EXPECT_FALSE(has(r, "messages_lost"));  // RC: no loss to count
  r.datagram = true;
  r.sent = 110;
  r.received = 107;
  std::map<std::string, double> f;
  for (auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_EQ(f.at("messages_sent"), 110);
  EXPECT_EQ(f.at("messages_received"), 107);
  EXPECT_EQ(f.at("messages_lost"), 3);
}

// The lab's case (-T 2 -q 2 -n 20000, 100 warm-up per QP, --rx-depth 16): 80,400 sent,
// 9,503 arrived. The headline is what arrived over the window, not what was posted.
TEST(Results, UdBandwidthHeadlineIsWhatArrived) {
  PointResult r;
  r.cfg.work.size = 64;
  r.datagram = true;
  r.seconds = 2;
  r.messages = 80000;  // posted in the window
  r.bytes = r.messages * 64;
  r.sent = 80400;      // warm-up included
  r.received = 9503;
  std::map<std::string, double> f;
  for (auto& [k, v] : figures(r)) f[k] = v;
  const double arrived = std::round(80000.0 * 9503 / 80400);  // the window's share of the arrivals
  EXPECT_EQ(arrived_in_window(r), 9456u);
  EXPECT_DOUBLE_EQ(f.at("items_per_second"), arrived / 2);
  EXPECT_DOUBLE_EQ(f.at("bytes_per_second"), arrived * 64 / 2);
  EXPECT_DOUBLE_EQ(f.at("messages"), arrived);
  EXPECT_DOUBLE_EQ(f.at("sent_items_per_second"), 40000);
  EXPECT_EQ(f.at("messages_lost"), 70897);
  EXPECT_EQ(loss_summary(f.at("messages_sent"), f.at("messages_lost")), "lost 70897 of 80400 (88%)");

  r.sent = r.messages;  // no warm-up: exactly received / seconds
  f.clear();
  for (auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_DOUBLE_EQ(f.at("items_per_second"), 9503.0 / 2);

  r.received = r.sent;  // nothing lost: the posted rate, and nothing to flag
  f.clear();
  for (auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_DOUBLE_EQ(f.at("items_per_second"), 40000);
  EXPECT_EQ(loss_summary(f.at("messages_sent"), f.at("messages_lost")), "");
  EXPECT_EQ(loss_summary(100000, 1), "lost 1 of 100000 (0.001%)");
}

TEST(Results, AtomicWriteReplacesTheFileByRename) {
  std::string dir = test::make_temp_dir("rdmasweep-test");
  std::string path = dir + "/r.json";
  write_json_atomic(path, {{"n", 1}});
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  write_json_atomic(path, {{"n", 2}, {"more", std::string(100000, 'x')}});
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  // A new inode means the old file was never truncated or rewritten in place: a
  // reader (or a crash) sees the old complete file or the new complete one.
  EXPECT_NE(before.st_ino, after.st_ino);
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in)["n"], 2);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(Results, UnwritableDirectoryIsReportedUpFront) {
  EXPECT_THROW(check_writable("/nonexistent-dir-xyz/r.json"), std::runtime_error);
  std::string dir = test::make_temp_dir("rdmasweep-test");
  EXPECT_NO_THROW(check_writable(dir + "/r.json"));
}

TEST(Results, HistogramJsonListsNonEmptyBucketsWithBounds) {
  Histogram h;
  h.record(500);
  h.record(500);
  h.record(1'000'000);
  nlohmann::json j = histogram_json(h);
  ASSERT_EQ(j["buckets"].size(), 2u);
  EXPECT_EQ(j["buckets"][0][0], 500);
  EXPECT_EQ(j["buckets"][0][2], 2);
  uint64_t lo = j["buckets"][1][0], hi = j["buckets"][1][1];
  EXPECT_LE(lo, 1'000'000u);
  EXPECT_GE(hi, 1'000'000u);
  EXPECT_EQ(j["count"], 3);
}

// Merging two histograms' JSON gives the JSON of one histogram that recorded both.
TEST(Results, MergedHistogramJsonEqualsOneHistogramOfBoth) {
  Histogram a, b, both;
  for (uint64_t v : {700u, 700u, 5'000u, 123'456u}) {
    a.record(v);
    both.record(v);
  }
  for (uint64_t v : {300u, 5'001u, 9'000'000u}) {
    b.record(v);
    both.record(v);
  }
  nlohmann::json j = histogram_json(a);
  merge_histogram_json(j, histogram_json(b));
  nlohmann::json want = histogram_json(both);
  EXPECT_EQ(j["buckets"], want["buckets"]);
  EXPECT_EQ(j["count"], want["count"]);
  EXPECT_EQ(j["min"], want["min"]);
  EXPECT_EQ(j["max"], want["max"]);
  EXPECT_NEAR(j["mean"].get<double>(), want["mean"].get<double>(), 1e-6);

  nlohmann::json empty = histogram_json(Histogram());  // merging nothing changes nothing, either way
  merge_histogram_json(j, empty);
  EXPECT_EQ(j["count"], want["count"]);
  merge_histogram_json(empty, histogram_json(a));
  EXPECT_EQ(empty, histogram_json(a));
}

}  // namespace rdmasweep
