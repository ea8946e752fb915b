// The results document and its reporters, fed known entries without a device: what
// the console reporter prints (client and mesh tables), what the file reporter writes
// (results, histograms, null for NaN, the incomplete flag), and the mesh's aggregates.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/config/config.hpp"
#include "core/config/knobs.hpp"
#include "core/measure/histogram.hpp"
#include "core/results/aggregates.hpp"
#include "core/results/model.hpp"
#include "core/results/report.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep {

using nlohmann::json;

namespace {

std::string printf_string(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* fmt, ...) {
  char b[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  return b;
}

TestConfig point(uint32_t qps) {
  TestConfig c;
  c.work.op = Op::Write;
  c.work.qps = qps;
  return c;
}

// A measured entry of `name` with the figures the tables show.
json measured(const std::string& name, int64_t rep, double bps, double lat_p50) {
  EntryPlace at;
  at.name = at.run_name = name;
  at.repetitions = 2;
  at.repetition = rep;
  json b = entry_head(at);
  b["iterations"] = 1;
  b["real_time"] = 1000.0;
  b["cpu_time"] = 500.0;
  b["time_unit"] = "ms";
  b["messages"] = 1000.0;
  b["bytes_per_second"] = bps;
  b["items_per_second"] = 2e6;
  b["lat_p50_us"] = lat_p50;
  b["config"] = point(1);
  return b;
}

json failed(const std::string& name, const std::string& why) {
  EntryPlace at;
  at.name = at.run_name = name;
  json b = entry_head(at);
  mark_failed(b, why);
  return b;
}

}  // namespace

// The client's table, as it has always been printed (the printf formats below).
TEST(ConsoleReporter, ClientTableRowsAggregatesAndErrors) {
  std::ostringstream out;
  ResultsDocument doc(test::make_temp_dir("rdmasweep-report") + "/r.json", json::object());
  ConsoleLayout layout = client_console_layout();
  layout.name_width = 12;
  ConsoleReporter console(layout, out);
  doc.add(measured("write/bw", 0, 1.25e9, NAN));
  json cv = measured("write/bw", 0, 0.05, 0.5);
  cv.erase("repetition_index");
  cv["name"] = "write/bw_cv";
  cv["run_type"] = "aggregate";
  cv["aggregate_name"] = "cv";
  cv["aggregate_unit"] = "percentage";
  doc.add(cv);
  doc.add(failed("read/lat", "not run: interrupted"));
  console.report_entries(doc, 0);

  std::string want = printf_string("%-*s %10s %9s %9s %9s %9s %9s %9s %9s\n", 12, "point", "messages", "Gb/s", "Mmsg/s",
                                   "min us", "p50 us", "p99 us", "p99.9 us", "max us");
  want += printf_string("%-*s %10.0f %9.3f %9.3f %9s %9s %9s %9s %9s\n", 12, "write/bw", 1000.0, 10.0, 2.0, "-", "-",
                        "-", "-", "-");
  // A cv row: rates as percentages, messages and latencies as the ratios they are.
  want += printf_string("%-*s %10.0f %9.3f %9.3f %9s %9.3f %9s %9s %9s  (%%)\n", 12, "write/bw_cv", 1000.0, 5.0,
                        2e8, "-", 0.5, "-", "-", "-");
  want += printf_string("%-*s ERROR: %s\n", 12, "read/lat", "not run: interrupted");
  EXPECT_EQ(out.str(), want);
}

// The mesh's table: its src->dst column comes from the entry's ranks ("total" without).
TEST(ConsoleReporter, MeshTableHasAFlowColumn) {
  std::ostringstream out;
  ResultsDocument doc(test::make_temp_dir("rdmasweep-report") + "/m.json", json::object());
  ConsoleLayout layout = mesh_console_layout();
  layout.name_width = 10;
  ConsoleReporter console(layout, out);
  json flow = measured("mesh/pairs/write/bw/src:0/dst:1", 0, 1e9, 3.0);
  flow["point"] = "write/bw";
  flow["src_rank"] = 0;
  flow["dst_rank"] = 1;
  json total = measured("mesh/incast/write/bw/total", 0, 2e9, NAN);
  total["point"] = "write/bw";
  json bad = failed("mesh/pairs/write/bw/src:2/dst:0", "rank 2: cannot connect");
  bad["point"] = "write/bw";
  bad["src_rank"] = 2;
  bad["dst_rank"] = 0;
  json sender = measured("mesh/multicast/send/bw/src:0", 0, 1e9, NAN);  // multicast's sender: no dst rank
  sender["point"] = "write/bw";
  sender["src_rank"] = 0;
  sender["dst_rank"] = -1;
  for (json* b : {&flow, &total, &bad, &sender}) doc.add(*b);
  console.report_entries(doc, 0);
  console.report_entries(doc, 4);  // nothing new: nothing printed

  std::string want = printf_string("%-*s %-12s %10s %9s %9s %9s %9s\n", 10, "point", "src->dst", "messages", "Gb/s",
                                   "Mmsg/s", "p50 us", "p99 us");
  want += printf_string("%-*s %-12s %10.0f %9.3f %9.3f %9.3f %9s\n", 10, "write/bw", "0->1", 1000.0, 8.0, 2.0, 3.0, "-");
  want += printf_string("%-*s %-12s %10.0f %9.3f %9.3f %9s %9s\n", 10, "write/bw", "total", 1000.0, 16.0, 2.0, "-", "-");
  want += printf_string("%-*s %-12s ERROR: %s\n", 10, "write/bw", "2->0", "rank 2: cannot connect");
  want += printf_string("%-*s %-12s %10.0f %9.3f %9.3f %9s %9s\n", 10, "write/bw", "0->group", 1000.0, 8.0, 2.0, "-", "-");
  EXPECT_EQ(out.str(), want);
}

// A UD row that lost datagrams says so in the row; a lossless one and an aggregate do not.
TEST(ConsoleReporter, UdRowFlagsLoss) {
  std::ostringstream out;
  ResultsDocument doc(test::make_temp_dir("rdmasweep-report") + "/u.json", json::object());
  ConsoleLayout layout = client_console_layout();
  layout.name_width = 8;
  ConsoleReporter console(layout, out);
  json lossy = measured("send/ud", 0, 1e6, NAN);
  lossy["messages_sent"] = 80400;
  lossy["messages_received"] = 9503;
  lossy["messages_lost"] = 70897;
  json clean = measured("send/ud", 1, 1e6, NAN);
  clean["messages_sent"] = clean["messages_received"] = 80400;
  clean["messages_lost"] = 0;
  json mean = lossy;
  mean.erase("repetition_index");
  mean["run_type"] = "aggregate";
  mean["aggregate_name"] = "mean";
  for (json* b : {&lossy, &clean, &mean}) doc.add(*b);
  console.report_entries(doc, 0);

  const std::string row = printf_string("%-*s %10.0f %9.3f %9.3f %9s %9s %9s %9s %9s", 8, "send/ud", 1000.0, 0.008, 2.0,
                                        "-", "-", "-", "-", "-");
  std::istringstream lines(out.str());
  std::string header, first, second, third;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, third);
  EXPECT_EQ(first, row + "  ! lost 70897 of 80400 (88%)");
  EXPECT_EQ(second, row);
  EXPECT_EQ(third, printf_string("%-*s", 8, "send/ud_mean") + row.substr(8));
}

// Both files after every write, marked incomplete until the end; NaN written as null;
// a record's later repetitions merged into it.
TEST(FileReporter, WritesResultsAndHistogramsIncompleteUntilFinished) {
  const std::string dir = test::make_temp_dir("rdmasweep-report"), path = dir + "/sweep.json";
  std::ostringstream out, err;
  SweepReport report(path, {{"tool", "rdmasweep"}}, client_console_layout(), "rdmasweep", out, err);
  report.set_write_spacing(0);
  report.write(false);
  json doc = test::load_json(path);
  EXPECT_EQ(doc["context"]["incomplete"], true);
  EXPECT_EQ(doc["benchmarks"], json::array());
  EXPECT_EQ(test::load_json(dir + "/sweep.hist.json")["results_file"], path);

  Histogram h1, h2;
  h1.record(1000);
  h2.record(3000);
  json rec1 = {{"config", point(1)}, {"per_qp_messages", {{10}}}, {"histogram", histogram_json(h1)}};
  json rec2 = {{"config", point(1)}, {"per_qp_messages", {{20}}}, {"histogram", histogram_json(h2)}};
  report.add(measured("write/lat", 0, 1e9, NAN), rec1);
  report.add(measured("write/lat", 1, INFINITY, 1.0), rec2);
  report.write(false);
  doc = test::load_json(path);
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  EXPECT_TRUE(doc["benchmarks"][0]["lat_p50_us"].is_null());
  EXPECT_TRUE(doc["benchmarks"][1]["bytes_per_second"].is_null());
  EXPECT_EQ(doc["benchmarks"][0]["config"], json(point(1)));
  EXPECT_EQ(doc["context"]["incomplete"], true);
  const json hist = test::load_json(dir + "/sweep.hist.json")["points"]["write/lat"];
  EXPECT_EQ(hist["per_qp_messages"], json({{10}, {20}}));
  EXPECT_EQ(hist["histogram"]["count"], 2);
  EXPECT_EQ(hist["histogram"]["min"], 1000);
  EXPECT_EQ(hist["histogram"]["max"], 3000);

  report.add(failed("write/bw", "not run: interrupted"));
  report.write(true, "interrupted");
  doc = test::load_json(path);
  EXPECT_EQ(doc["context"]["incomplete"], true);
  EXPECT_EQ(doc["context"]["incomplete_reason"], "interrupted");
  EXPECT_EQ(doc["context"]["time_summary"].get<std::string>().rfind("wall ", 0), 0u);
  EXPECT_EQ(doc["benchmarks"].size(), 3u);
  EXPECT_EQ(report.failed(), 1u);
  EXPECT_EQ(report.write_error(), "");
  EXPECT_EQ(err.str(), "");
  const std::string shown = out.str();
  EXPECT_EQ(std::count(shown.begin(), shown.end(), '\n'), 4) << "the header and each entry once:\n" << shown;
}

// Writes are spaced by a multiple of their own time: new entries wait for the next
// due write (the table shows them at once), and the end writes everything.
TEST(FileReporter, WritesAreSpacedAndTheEndWritesEverything) {
  const std::string path = test::make_temp_dir("rdmasweep-report") + "/spaced.json";
  std::ostringstream out, err;
  SweepReport report(path, json::object(), client_console_layout(), "rdmasweep", out, err);
  report.set_write_spacing(1000000);  // no write is due before the end
  report.write(false);
  report.add(measured("write/bw", 0, 1e9, NAN));
  report.write(false);
  EXPECT_EQ(test::load_json(path)["benchmarks"].size(), 0u) << "written before it was due";
  EXPECT_NE(out.str().find("write/bw"), std::string::npos) << "the table waits for nothing:\n" << out.str();
  report.add(measured("write/lat", 0, 1e9, NAN));
  report.write(true, "interrupted");
  const json doc = test::load_json(path);
  EXPECT_EQ(doc["benchmarks"].size(), 2u);
  EXPECT_EQ(doc["context"]["incomplete_reason"], "interrupted");
  EXPECT_EQ(FileReporter::kWriteSpacing, 20) << "docs/usage.md and docs/performance.md say 1/20 of the wall time";
}

TEST(FileReporter, CompleteWhenFinishedWithoutAReason) {
  const std::string path = test::make_temp_dir("rdmasweep-report") + "/done.json";
  std::ostringstream out, err;
  SweepReport report(path, json::object(), client_console_layout(), "rdmasweep", out, err);
  report.add(measured("write/bw", 0, 1e9, NAN));
  report.set_time_summary("wall 1.0 s: setup");
  report.write(true);
  json doc = test::load_json(path);
  EXPECT_EQ(doc["context"]["incomplete"], false);
  EXPECT_FALSE(doc["context"].contains("incomplete_reason"));
  EXPECT_EQ(doc["context"]["time_summary"], "wall 1.0 s: setup");
}

// An unwritable results file: said once, kept in memory, tried again at every write,
// printed to stdout at the end.
TEST(FileReporter, WriteFailureIsReportedOnceAndKeptInMemory) {
  const std::string path = test::make_temp_dir("rdmasweep-report") + "/missing/r.json";
  std::ostringstream out, err;
  SweepReport report(path, json::object(), mesh_console_layout(), "rdmasweep mesh", out, err);
  report.write(false);
  report.add(measured("mesh/pairs/write/bw/src:0/dst:1", 0, 1e9, NAN));
  report.write(false);
  EXPECT_NE(report.write_error().find("cannot write " + path), std::string::npos) << report.write_error();
  EXPECT_EQ(err.str(), "rdmasweep mesh: " + report.write_error() +
                           " (results kept in memory; trying again after the next point)\n");
  EXPECT_EQ(report.doc()["benchmarks"].size(), 1u);

  report.write(true);
  EXPECT_TRUE(report.print_if_unwritten());
  EXPECT_NE(err.str().find("rdmasweep mesh: could not write the results (" + report.write_error() +
                           "); printing them to stdout instead\n"),
            std::string::npos);
  const std::string shown = out.str();
  EXPECT_EQ(json::parse(shown.substr(shown.find('{'))), report.doc()) << "the table, then the results";
}

// Google Benchmark's mean, median, stddev (n - 1) and cv of each figure over the runs
// that did not fail; what an entry is (point, config) copied.
TEST(Aggregates, MeanMedianStddevCvOfTheRunsThatDidNotFail) {
  std::vector<json> runs = {measured("p", 0, 1.0, 2.0), measured("p", 1, 3.0, 4.0), measured("q", 0, 1.0, 1.0)};
  json f = failed("p", "rank 1: lost");
  runs.push_back(f);
  std::vector<json> agg = aggregate_entries(runs);
  ASSERT_EQ(agg.size(), 4u) << "q ran once: no aggregates";
  const char* names[] = {"mean", "median", "stddev", "cv"};
  const double bps[] = {2.0, 2.0, std::sqrt(2.0), std::sqrt(2.0) / 2};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(agg[i].dump());
    EXPECT_EQ(agg[i]["name"], std::string("p_") + names[i]);
    EXPECT_EQ(agg[i]["run_name"], "p");
    EXPECT_EQ(agg[i]["run_type"], "aggregate");
    EXPECT_EQ(agg[i]["aggregate_unit"], i == 3 ? "percentage" : "time");
    EXPECT_EQ(agg[i]["iterations"], 2);
    EXPECT_FALSE(agg[i].contains("repetition_index"));
    EXPECT_DOUBLE_EQ(agg[i]["bytes_per_second"].get<double>(), bps[i]);
    EXPECT_EQ(agg[i]["config"], json(point(1)));
    EXPECT_EQ(agg[i]["time_unit"], "ms");
  }
}

TEST(ResultsDocument, HistogramFileBesideTheResults) {
  EXPECT_EQ(hist_path_for("out/sweep.json"), "out/sweep.hist.json");
  EXPECT_EQ(hist_path_for("sweep"), "sweep.hist.json");
  EXPECT_TRUE(json_number(NAN).is_null());
  EXPECT_TRUE(json_number(-INFINITY).is_null());
  EXPECT_EQ(json_number(1.5), 1.5);
}

}  // namespace rdmasweep
