// perftest's console layout, a sibling of the console table (reporters.hpp): the
// client's --format perftest prints each point as perftest 4.5's ib_*_bw or ib_*_lat
// prints its result, so scripts written to parse perftest keep working. Which figure
// fills each column, and why, is in docs/results.md; the layout is held against real
// perftest 4.5 output in tests/tools/data/perftest-4.5/.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "core/results/reporters.hpp"

namespace rdmasweep {

// perftest's own lines (its perftest_parameters.h: RESULT_LINE, RESULT_FMT, RESULT_FMT_LAT).
inline constexpr const char* kPerftestLine =
    "---------------------------------------------------------------------------------------";
inline constexpr const char* kPerftestBwTitles =
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
inline constexpr const char* kPerftestLatTitles =
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% "
    "percentile[usec]   99.9% percentile[usec] ";

// The test's name in perftest's banner, e.g. "RDMA_Write BW Test", from an entry's config.
std::string perftest_test_name(const nlohmann::json& config);

// One table per run of consecutive points that differ only in size, as perftest -a
// prints its sizes under one header: the dashed line, the test's name and the points'
// name (size:*), the dashed line, the column titles, a row per run, the closing dashed
// line. Aggregates get no row (perftest has no repetitions); a failed point, or one
// without the figures a row needs, is said on `err`, as perftest says its failures on
// stderr, and leaves the table open.
class PerftestReporter : public ResultsReporter {
 public:
  // `who` starts each line on `err` ("rdmasweep").
  PerftestReporter(std::string who, std::ostream& out, std::ostream& err);

  void report_context(const ResultsDocument&) override {}
  void report_entries(const ResultsDocument& doc, size_t first) override;
  void finalize(const ResultsDocument&) override;  // closes the last table

 private:
  void print(const nlohmann::json& b);
  void close_table();

  std::string who_;
  std::ostream &out_, &err_;
  std::string table_;  // the open table's points (the name with size:*); "" when none is open
};

}  // namespace rdmasweep
