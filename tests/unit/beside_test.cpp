// client --beside: a NAME/beside row's own figures (each one's ratio to the point's
// median alone, the background's rates) and the line under it.
#include "bench/client_beside.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/config/sweep.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

static PointResult lat_point(uint64_t p50_ns) {
  PointResult r;
  r.cfg = background_point("op=write,mode=lat,size=64");
  r.latency = true;
  r.seconds = 1;
  r.messages = 1000;
  r.bytes = 64000;
  for (int i = 0; i < 1000; ++i) r.hist.record(p50_ns);
  return r;
}

static PointResult bw_point(double seconds) {
  PointResult r;
  r.cfg = background_point("op=write,mode=bw,qps=8,size=64k");
  r.seconds = seconds;
  r.messages = 1000;
  r.bytes = 1000 * 65536;
  return r;
}

TEST(Beside, EachFigureIsARatioToTheMedianAloneAndTheBackgroundHasItsRates) {
  const std::vector<PointResult> alone{lat_point(2000), lat_point(3000), lat_point(10000)};
  std::map<std::string, double> f;
  for (const auto& [k, v] : beside_figures(lat_point(6000), alone, bw_point(2.0))) f[k] = v;
  ASSERT_TRUE(f.count("lat_p50_us_vs_alone"));
  EXPECT_NEAR(f["lat_p50_us_vs_alone"], 2.0, 0.02);   // 6 us beside, 3 us the median alone
  EXPECT_NEAR(f["lat_p99_us_vs_alone"], 2.0, 0.02);
  EXPECT_NEAR(f["items_per_second_vs_alone"], 1.0, 1e-9);  // the same round trips in the same time
  EXPECT_NEAR(f["background_items_per_second"], 500, 1e-9);
  EXPECT_NEAR(f["background_bytes_per_second"], 500 * 65536.0, 1e-6);
  EXPECT_FALSE(f.count("background_lat_p50_us"));  // a bandwidth background has no latency
  EXPECT_FALSE(f.count("cpu_seconds_vs_alone"));   // only the headline figures are compared
}

TEST(Beside, TheLineUnderTheRowSaysTheRatiosAndTheBackgroundsRate) {
  const std::vector<PointResult> alone{lat_point(3000)};
  const std::string line =
      beside_note("write/bw/qps:8/size:65536", beside_figures(lat_point(6000), alone, bw_point(2.0)));
  EXPECT_EQ(line.rfind("  beside write/bw/qps:8/size:65536:", 0), 0u) << line;
  EXPECT_NE(line.find("p50 2.00x"), std::string::npos) << line;
  EXPECT_NE(line.find("rate 1.00x"), std::string::npos) << line;
  EXPECT_NE(line.find("of alone; the background's own 0.262 Gb/s"), std::string::npos) << line;
}

}  // namespace rdmasweep
