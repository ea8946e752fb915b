// The knee of a load–latency curve: the points of a sweep that differ only in --rate
// form one series, and its knee is the lowest offered load at which p99 latency (from
// when each message was due) exceeds twice its value at the series' lowest load.
// Found from the results' entries alone, so the client's table and its JSON say the
// same, and a reader of an older file can find it again.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rdmasweep {

constexpr double kKneeFactor = 2;  // p99 over this times the lowest load's

struct LoadKnee {
  std::string series;  // the points' name without its rate component
  size_t loads = 0;    // offered loads measured (each the median of its repetitions)
  double base_offered = 0, base_p99_us = 0;  // the lowest load: messages/s offered, p99
  double top_offered = 0;                    // the highest load measured
  // The knee: the lowest load whose p99 is over kKneeFactor × base_p99_us (found: there is one).
  double knee_offered = 0, knee_p99_us = 0;
  bool found = false;
};

// Every series of two or more offered loads among `entries` (a results document's
// "benchmarks"): successful iteration entries with a rate, an offered rate and a p99.
std::vector<LoadKnee> load_knees(const nlohmann::json& entries);
nlohmann::json to_json(const std::vector<LoadKnee>& knees);
// One line for under the table: where the knee is, or that there is none up to the top load.
std::string knee_line(const LoadKnee& k);

}  // namespace rdmasweep
