// The fields Google Benchmark's JSON reporter writes in each entry of "benchmarks"
// (src/json_reporter.cc, PrintRunData), for tests that check our result files are
// read by its tools (tools/compare.py reads real_time, cpu_time and time_unit of
// every entry, failed ones included). One list, used by the client and mesh tests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rdmasweep::test {

// Which of Google Benchmark's fields `b` lacks or has with the wrong type; empty when
// none. Every entry: name, family_index, per_family_instance_index, run_name,
// run_type, repetitions, threads, iterations, real_time, cpu_time, time_unit;
// iterations also repetition_index; aggregates aggregate_name and aggregate_unit;
// failed ones error_occurred and error_message.
inline std::vector<std::string> gbench_field_problems(const nlohmann::json& b) {
  using nlohmann::json;
  std::vector<std::string> bad;
  auto need = [&](const char* k, bool (json::*is)() const noexcept) {
    if (!b.contains(k)) bad.push_back(std::string(k) + " missing");
    else if (!(b[k].*is)()) bad.push_back(std::string(k) + " has the wrong type: " + b[k].dump());
  };
  for (const char* k : {"name", "run_name", "run_type", "time_unit"}) need(k, &json::is_string);
  for (const char* k : {"family_index", "per_family_instance_index", "repetitions", "threads", "iterations"})
    need(k, &json::is_number_integer);
  for (const char* k : {"real_time", "cpu_time"}) need(k, &json::is_number);  // never null: readers do arithmetic
  const std::string type = b.value("run_type", "");
  if (type == "iteration") {
    need("repetition_index", &json::is_number_integer);
  } else if (type == "aggregate") {
    need("aggregate_name", &json::is_string);
    need("aggregate_unit", &json::is_string);
  } else {
    bad.push_back("run_type is neither iteration nor aggregate");
  }
  if (b.value("error_occurred", false)) need("error_message", &json::is_string);
  if (b.contains("time_unit") && b["time_unit"].is_string()) {
    const std::string u = b["time_unit"];
    if (u != "ns" && u != "us" && u != "ms" && u != "s") bad.push_back("time_unit '" + u + "' is not ns, us, ms or s");
  }
  return bad;
}

}  // namespace rdmasweep::test
