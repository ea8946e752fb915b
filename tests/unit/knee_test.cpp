// The knee of a load–latency series (core/results/knee.hpp): which points form a
// series, the lowest load whose p99 is over twice the lowest load's, repetitions as
// medians, and the line and JSON the client's table and results file carry.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/results/document.hpp"
#include "core/results/knee.hpp"
#include "core/results/reporters.hpp"

namespace rdmasweep {

using nlohmann::json;

namespace {

json paced(const std::string& name, double offered, double p99, int repetition = 0) {
  return {{"name", name},           {"run_name", name}, {"run_type", "iteration"}, {"repetition_index", repetition},
          {"offered_items_per_second", offered}, {"lat_p99_us", p99}};
}

std::string at_rate(const char* rate, const char* size = "64") {
  return std::string("write/bw/qps:1/size:") + size + "/rate:" + rate + "/arrivals:poisson";
}

}  // namespace

TEST(LoadKnee, LowestLoadWhoseP99IsOverTwiceTheLowestLoads) {
  // Entries in any order: the curve is ordered by offered load.
  json e = json::array({paced(at_rate("4mpps"), 4e6, 90), paced(at_rate("1mpps"), 1e6, 10),
                        paced(at_rate("3mpps"), 3e6, 21), paced(at_rate("2mpps"), 2e6, 20)});
  const std::vector<LoadKnee> k = load_knees(e);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].series, "write/bw/qps:1/size:64/arrivals:poisson");
  EXPECT_EQ(k[0].loads, 4u);
  EXPECT_DOUBLE_EQ(k[0].base_offered, 1e6);
  EXPECT_DOUBLE_EQ(k[0].base_p99_us, 10);
  EXPECT_DOUBLE_EQ(k[0].top_offered, 4e6);
  ASSERT_TRUE(k[0].found);
  EXPECT_DOUBLE_EQ(k[0].knee_offered, 3e6);  // 20 is exactly twice 10: not over it
  EXPECT_DOUBLE_EQ(k[0].knee_p99_us, 21);
}

TEST(LoadKnee, NoneWhenP99StaysWithinTwiceTheLowestLoads) {
  json e = json::array({paced(at_rate("1mpps"), 1e6, 10), paced(at_rate("2mpps"), 2e6, 19.9)});
  const std::vector<LoadKnee> k = load_knees(e);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_FALSE(k[0].found);
  EXPECT_EQ(knee_line(k[0]),
            "no knee write/bw/qps:1/size:64/arrivals:poisson: p99 within 2 x the 10.000 us at 1 Mmsg/s up to 2 "
            "Mmsg/s offered");
}

TEST(LoadKnee, SeriesAreThePointsThatDifferOnlyInRate) {
  json e = json::array({paced(at_rate("1mpps"), 1e6, 10), paced(at_rate("1mpps", "4096"), 1e6, 30),
                        paced(at_rate("2mpps"), 2e6, 50), paced(at_rate("2mpps", "4096"), 2e6, 40),
                        paced(at_rate("3mpps", "65536"), 3e6, 99),  // one load: no curve
                        paced("write/bw/qps:1/size:64", 5e6, 999)});  // no rate: not paced
  const std::vector<LoadKnee> k = load_knees(e);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].series, "write/bw/qps:1/size:64/arrivals:poisson");  // in the order of their first points
  EXPECT_TRUE(k[0].found);
  EXPECT_EQ(k[1].series, "write/bw/qps:1/size:4096/arrivals:poisson");
  EXPECT_FALSE(k[1].found);
}

TEST(LoadKnee, RepetitionsCountAsTheirMedianAndFailedRunsAndAggregatesNot) {
  json e = json::array({paced(at_rate("1mpps"), 1e6, 10, 0), paced(at_rate("1mpps"), 1e6, 12, 1),
                        paced(at_rate("1mpps"), 1e6, 500, 2),  // one stalled repetition: the median is 12
                        paced(at_rate("2mpps"), 2e6, 23, 0), paced(at_rate("2mpps"), 2e6, 25, 1),
                        paced(at_rate("2mpps"), 2e6, 26, 2)});
  json failed = paced(at_rate("3mpps"), 3e6, 1000);
  failed["error_occurred"] = true;
  e.push_back(failed);
  json aggregate = paced(at_rate("2mpps"), 2e6, 1000);
  aggregate["run_type"] = "aggregate";
  e.push_back(aggregate);
  const std::vector<LoadKnee> k = load_knees(e);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].loads, 2u);
  EXPECT_DOUBLE_EQ(k[0].base_p99_us, 12);
  EXPECT_TRUE(k[0].found);  // 25 over 2 x 12
  EXPECT_DOUBLE_EQ(k[0].knee_p99_us, 25);
}

// The client's table ends with the knee line; its results file holds the same as "knees".
TEST(LoadKnee, TableAndResultsFileSayTheSame) {
  char tmpl[] = "/tmp/rdmasweep-knee-XXXXXX";
  ResultsDocument doc(std::string(mkdtemp(tmpl)) + "/r.json", json::object());
  doc.add(paced(at_rate("200kpps"), 2e5, 10));
  doc.add(paced(at_rate("400kpps"), 4e5, 30));
  std::ostringstream out;
  ConsoleReporter console(client_console_layout(), out);
  doc.finish("", "wall 1 s");
  console.finalize(doc);
  EXPECT_EQ(out.str(),
            "knee write/bw/qps:1/size:64/arrivals:poisson: p99 30.000 us at 0.4 Mmsg/s offered, over 2 x the "
            "10.000 us at 0.2 Mmsg/s\n");
  const json& j = doc.results().at("knees");
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["series"], "write/bw/qps:1/size:64/arrivals:poisson");
  EXPECT_EQ(j[0]["knee_offered_items_per_second"], 4e5);
  EXPECT_EQ(j[0]["knee_lat_p99_us"], 30.0);
  EXPECT_EQ(j[0]["lowest_lat_p99_us"], 10.0);
}

TEST(LoadKnee, NoKneesKeyWithoutASeries) {
  char tmpl[] = "/tmp/rdmasweep-knee-XXXXXX";
  ResultsDocument doc(std::string(mkdtemp(tmpl)) + "/r.json", json::object());
  doc.add(paced(at_rate("200kpps"), 2e5, 10));
  doc.finish("", "wall 1 s");
  EXPECT_FALSE(doc.results().contains("knees"));
}

}  // namespace rdmasweep
