// Google Benchmark's aggregates over repetitions (mean, median, stddev, cv), for
// results whose runs are not Google Benchmark's own (the mesh's entries).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace rdmasweep {

// The aggregates of each entry name among `runs` (one point's iteration entries over
// its repetitions), for every name with at least two runs that did not fail, in the
// order the names first appear. Figures are aggregated; fields that say what an entry
// is (point, label, config, hosts, ranks, time_unit) are copied from its first run.
std::vector<nlohmann::json> aggregate_entries(const std::vector<nlohmann::json>& runs);

// The median of `v` (the mean of the middle two when even); NaN when empty.
double median_of(std::vector<double> v);

}  // namespace rdmasweep
