#include "core/results/document.hpp"

#include <cmath>
#include <ctime>
#include <utility>

#include "core/measure/clock.hpp"
#include "core/measure/clock_context.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

using nlohmann::json;

std::string hist_path_for(const std::string& out) {
  const std::string ext = ".json";
  std::string base = out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0
                         ? out.substr(0, out.size() - ext.size())
                         : out;
  return base + ".hist.json";
}

std::string results_date() {
  char date[64];
  std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  return date;
}

json json_number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json entry_head(const EntryPlace& at) {
  const bool aggregate = !at.aggregate_name.empty();
  json b = {{"name", at.name},
            {"family_index", at.family},
            {"per_family_instance_index", at.instance},
            {"run_name", at.run_name},
            {"run_type", aggregate ? "aggregate" : "iteration"},
            {"repetitions", at.repetitions},
            {"threads", at.threads}};
  if (aggregate) {
    b["aggregate_name"] = at.aggregate_name;
    b["aggregate_unit"] = at.aggregate_unit;
  } else {
    b["repetition_index"] = at.repetition;
  }
  return b;
}

void mark_failed(json& b, const std::string& message) {
  b["error_occurred"] = true;
  b["error_message"] = message;
  b["iterations"] = 0;
  b["real_time"] = 0.0;
  b["cpu_time"] = 0.0;
  b["time_unit"] = "ms";
}

ResultsDocument::ResultsDocument(std::string path, json context)
    : path_(std::move(path)), hist_path_(hist_path_for(path_)) {
  doc_["context"] = std::move(context);
  doc_["context"]["incomplete"] = true;
  doc_["benchmarks"] = json::array();
  hist_ = {{"schema_version", kResultsSchemaVersion}, {"results_file", path_}, {"points", json::object()}};
}

void ResultsDocument::add(json entry, const json& record) {
  for (auto& [k, v] : entry.items())
    if (v.is_number_float() && !std::isfinite(v.get<double>())) v = nullptr;
  if (!record.is_null()) {
    json& points = hist_["points"];
    const std::string name = entry["name"];
    if (!points.contains(name)) {
      points[name] = record;
    } else {  // another repetition: its per-QP figures appended, its histogram merged
      json& p = points[name];
      for (const char* k : {"per_qp_messages", "per_qp_latency"})
        if (record.contains(k))
          for (const json& v : record[k]) p[k].push_back(v);
      if (record.contains("histogram")) merge_histogram_json(p["histogram"], record["histogram"]);
    }
  }
  if (entry.value("error_occurred", false)) ++failed_;
  doc_["benchmarks"].push_back(std::move(entry));
}

bool ResultsDocument::has_record(const std::string& name) const { return hist_["points"].contains(name); }

void ResultsDocument::finish(const std::string& incomplete_reason, const std::string& time_summary) {
  json& c = doc_["context"];
  ticks::check_at_end(c);
  c["time_summary"] = time_summary;
  c["incomplete"] = !incomplete_reason.empty();
  if (!incomplete_reason.empty()) c["incomplete_reason"] = incomplete_reason;
  find_knees();
}

void ResultsDocument::find_knees() {
  knees_ = load_knees(doc_["benchmarks"]);
  if (!knees_.empty()) doc_["knees"] = to_json(knees_);
}

}  // namespace rdmasweep
