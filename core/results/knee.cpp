#include "core/results/knee.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/results/aggregates.hpp"

namespace rdmasweep {

using nlohmann::json;

namespace {

// The run name without its "rate:…" component: the series the point belongs to.
std::string series_of(const std::string& name) {
  const size_t at = name.find("/rate:");
  if (at == std::string::npos) return "";
  const size_t end = name.find('/', at + 1);
  return name.substr(0, at) + (end == std::string::npos ? "" : name.substr(end));
}

struct Load {
  std::vector<double> offered, p99;
};

bool usable(const json& b) {
  if (b.value("run_type", "") != "iteration" || b.value("error_occurred", false)) return false;
  for (const char* k : {"offered_items_per_second", "lat_p99_us"}) {
    auto it = b.find(k);
    if (it == b.end() || !it->is_number()) return false;
  }
  return b.value("offered_items_per_second", 0.0) > 0;
}

LoadKnee knee_of(const std::string& series, const std::map<std::string, Load>& by_rate) {
  std::vector<std::pair<double, double>> curve;  // (offered, p99), each the median of its repetitions
  for (const auto& [rate, l] : by_rate) curve.emplace_back(median_of(l.offered), median_of(l.p99));
  std::sort(curve.begin(), curve.end());
  LoadKnee k;
  k.series = series;
  k.loads = curve.size();
  k.base_offered = curve.front().first;
  k.base_p99_us = curve.front().second;
  k.top_offered = curve.back().first;
  for (const auto& [offered, p99] : curve)
    if (p99 > kKneeFactor * k.base_p99_us) {
      k.found = true;
      k.knee_offered = offered;
      k.knee_p99_us = p99;
      break;
    }
  return k;
}

}  // namespace

std::vector<LoadKnee> load_knees(const json& entries) {
  std::map<std::string, std::map<std::string, Load>> series;  // series → rate component → its runs
  std::vector<std::string> order;                             // series in the order of their first point
  for (const json& b : entries) {
    if (!usable(b)) continue;
    const std::string name = b.value("run_name", "");
    const std::string s = series_of(name);
    if (s.empty()) continue;
    if (!series.count(s)) order.push_back(s);
    Load& l = series[s][name];
    l.offered.push_back(b["offered_items_per_second"].get<double>());
    l.p99.push_back(b["lat_p99_us"].get<double>());
  }
  std::vector<LoadKnee> knees;
  for (const std::string& s : order)
    if (series[s].size() >= 2) knees.push_back(knee_of(s, series[s]));
  return knees;
}

json to_json(const std::vector<LoadKnee>& knees) {
  json a = json::array();
  for (const LoadKnee& k : knees) {
    json j = {{"series", k.series},
              {"loads", k.loads},
              {"knee_factor", kKneeFactor},
              {"lowest_offered_items_per_second", k.base_offered},
              {"lowest_lat_p99_us", k.base_p99_us},
              {"highest_offered_items_per_second", k.top_offered},
              {"knee_offered_items_per_second", nullptr},
              {"knee_lat_p99_us", nullptr}};
    if (k.found) {
      j["knee_offered_items_per_second"] = k.knee_offered;
      j["knee_lat_p99_us"] = k.knee_p99_us;
    }
    a.push_back(std::move(j));
  }
  return a;
}

std::string knee_line(const LoadKnee& k) {
  char b[512];
  if (k.found)
    std::snprintf(b, sizeof b, "knee %s: p99 %.3f us at %.4g Mmsg/s offered, over %g x the %.3f us at %.4g Mmsg/s",
                  k.series.c_str(), k.knee_p99_us, k.knee_offered / 1e6, kKneeFactor, k.base_p99_us,
                  k.base_offered / 1e6);
  else
    std::snprintf(b, sizeof b, "no knee %s: p99 within %g x the %.3f us at %.4g Mmsg/s up to %.4g Mmsg/s offered",
                  k.series.c_str(), kKneeFactor, k.base_p99_us, k.base_offered / 1e6, k.top_offered / 1e6);
  return b;
}

}  // namespace rdmasweep
