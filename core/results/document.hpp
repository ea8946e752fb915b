// One sweep's results document, for the client and the mesh alike: the context, the
// entries (Google Benchmark JSON: one per run, failed run and aggregate) and a
// histogram record per run (FILE.hist.json beside FILE.json). Reporters
// (core/results/reporters.hpp) show it and write it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/results/knee.hpp"

namespace rdmasweep {

// FILE.hist.json for FILE.json (NAME.hist.json for any other NAME).
std::string hist_path_for(const std::string& results_path);

// Now, local time, as Google Benchmark writes the context's "date".
std::string results_date();

// Strict JSON has no NaN or Infinity: such a figure is written as null.
nlohmann::json json_number(double v);

// The fields that place an entry in Google Benchmark's terms: the family is the point,
// the instance the benchmark within it (a mesh flow), counted on in every repetition.
struct EntryPlace {
  std::string name, run_name;
  size_t family = 0, instance = 0;
  int64_t repetitions = 1, repetition = 0;  // repetition_index: iterations only
  int64_t threads = 1;
  std::string aggregate_name, aggregate_unit;  // aggregates only ("time" or "percentage")
};
nlohmann::json entry_head(const EntryPlace& at);

// Marks `b` failed with `message`, with the time fields Google Benchmark writes in
// every entry (its tools/compare.py reads them): iterations and times 0.
void mark_failed(nlohmann::json& b, const std::string& message);

class ResultsDocument {
 public:
  // Marked incomplete until finish().
  ResultsDocument(std::string path, nlohmann::json context);

  const std::string& path() const { return path_; }
  const std::string& hist_path() const { return hist_path_; }
  nlohmann::json& context() { return doc_["context"]; }
  const nlohmann::json& results() const { return doc_; }       // {"context", "benchmarks"[, "knees"]}
  const nlohmann::json& entries() const { return doc_["benchmarks"]; }
  const nlohmann::json& histograms() const { return hist_; }    // the .hist.json document
  size_t failed() const { return failed_; }

  // Adds an entry (a non-finite figure becomes null) and, when given, its histogram
  // record, kept under the entry's name: a later record of the same name (another
  // repetition) is merged into it, as one record per point or flow.
  void add(nlohmann::json entry, const nlohmann::json& record = nlohmann::json());
  bool has_record(const std::string& name) const;

  // Checks the clock once more, records the time summary and the knees of the
  // sweep's load–latency series ("knees", when it has any), and marks the results
  // complete, or incomplete with `incomplete_reason`.
  void finish(const std::string& incomplete_reason, const std::string& time_summary);
  // The knees of the entries so far, kept for knees() and written as "knees".
  void find_knees();
  const std::vector<LoadKnee>& knees() const { return knees_; }

 private:
  std::string path_, hist_path_;
  nlohmann::json doc_, hist_;
  size_t failed_ = 0;
  std::vector<LoadKnee> knees_;
};

}  // namespace rdmasweep
