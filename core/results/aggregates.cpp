#include "core/results/aggregates.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "core/results/document.hpp"

namespace rdmasweep {

using nlohmann::json;

double median_of(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

// Sample statistics as Google Benchmark computes them (stddev with n - 1; cv = stddev / mean).
double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}
double cv_of(const std::vector<double>& v) {
  double m = mean_of(v);
  return v.size() < 2 || m == 0 ? 0 : stddev_of(v) / m;
}

struct Stat {
  const char* name;
  const char* unit;
  double (*fn)(const std::vector<double>&);
};
const Stat kStats[] = {{"mean", "time", mean_of},
                       {"median", "time", [](const std::vector<double>& v) { return median_of(v); }},
                       {"stddev", "time", stddev_of},
                       {"cv", "percentage", cv_of}};

// Fields that say where an entry sits or what it is, not what it measured.
bool is_figure(const std::string& k) {
  static const std::set<std::string> identity = {"family_index", "per_family_instance_index", "repetitions",
                                                  "repetition_index", "threads", "iterations", "src_rank",
                                                  "dst_rank", "flows"};
  return !identity.count(k);
}

json aggregate(const std::string& name, const std::vector<const json*>& rs, const Stat& st) {
  const json& first = *rs.front();
  EntryPlace at;
  at.name = name + "_" + st.name;
  at.run_name = name;
  at.family = first["family_index"].get<size_t>();
  at.instance = first["per_family_instance_index"].get<size_t>();
  at.repetitions = first["repetitions"].get<int64_t>();
  at.aggregate_name = st.name;
  at.aggregate_unit = st.unit;
  json a = entry_head(at);
  a["iterations"] = rs.size();
  for (const auto& [k, v] : first.items()) {
    if (a.contains(k) || k == "repetition_index") continue;
    if (!v.is_number() || !is_figure(k)) {
      a[k] = v;  // the same in every run
      continue;
    }
    std::vector<double> xs;
    for (const json* r : rs)
      if (r->contains(k) && (*r)[k].is_number()) xs.push_back((*r)[k].get<double>());
    a[k] = xs.empty() ? json(nullptr) : json(st.fn(xs));
  }
  return a;
}

}  // namespace

std::vector<json> aggregate_entries(const std::vector<json>& runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const json*>> ok;
  for (const json& r : runs) {
    const std::string name = r["name"];
    if (!ok.count(name)) order.push_back(name);
    auto& v = ok[name];
    if (!r.value("error_occurred", false)) v.push_back(&r);
  }
  std::vector<json> out;
  for (const std::string& name : order) {
    const std::vector<const json*>& rs = ok[name];
    if (rs.size() < 2) continue;
    for (const Stat& st : kStats) out.push_back(aggregate(name, rs, st));
  }
  return out;
}

}  // namespace rdmasweep
