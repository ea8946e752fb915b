#include "bench/client_beside.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "core/config/knobs.hpp"
#include "core/results/aggregates.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

std::string beside_name(const std::string& point) { return point + "/beside"; }

// The figures compared with alone: the rates, and the latency percentiles when there are.
static const char* const kCompared[] = {"items_per_second", "bytes_per_second", "lat_p50_us", "lat_p99_us",
                                        "lat_p999_us"};

Figures beside_figures(const PointResult& beside, const std::vector<PointResult>& alone, const PointResult& background) {
  std::map<std::string, std::vector<double>> before;
  for (const PointResult& r : alone)
    for (const auto& [k, v] : figures(r)) before[k].push_back(v);
  Figures out;
  for (const auto& [k, v] : figures(beside)) {
    if (std::find(std::begin(kCompared), std::end(kCompared), k) == std::end(kCompared)) continue;
    const double a = median_of(before[k]);
    if (a > 0) out.emplace_back(k + "_vs_alone", v / a);
  }
  for (const auto& [k, v] : figures(background))
    if (k == "items_per_second" || k == "bytes_per_second" || k == "lat_p50_us" || k == "lat_p99_us")
      out.emplace_back("background_" + k, v);
  return out;
}

PointResult run_point_beside(Background& bg, ClientSession& main, const TestConfig& cfg, uint64_t slot,
                             const std::vector<PointResult>& alone, Figures& extra) {
  if (alone.empty()) throw std::runtime_error("not run beside the background: the point alone did not run");
  std::vector<double> windows;
  for (const PointResult& r : alone) windows.push_back(r.seconds);
  TestConfig b = bg.cfg;
  b.work.duration = background_bound_seconds(median_of(windows));
  BesideRun run = run_beside(
      bg.session, bg.connect, b, [&] { return std::optional<PointResult>(main.run(cfg, slot)); }, bg.wind_up.get());
  if (!run.background)
    throw std::runtime_error("the background " + point_name(bg.cfg) + " failed: " + run.background_error);
  if (!run.point) throw std::runtime_error(run.point_error);
  if (!run.overlapped())
    throw std::runtime_error("the background's traffic (" + std::to_string(b.work.duration) +
                             " s, its bound) did not cover the point's window: it ran more than " +
                             std::to_string(kBesideBoundFactor) +
                             "x slower beside it than alone; pace the background (rate=...) or lighten it");
  extra = beside_figures(*run.point, alone, *run.background);
  return std::move(*run.point);
}

std::string beside_note(const std::string& background_point, const Figures& row) {
  std::string s = "  beside " + background_point + ":";
  char b[96];
  const std::pair<const char*, const char*> said[] = {{"items_per_second_vs_alone", "rate"},
                                                      {"lat_p50_us_vs_alone", "p50"},
                                                      {"lat_p99_us_vs_alone", "p99"},
                                                      {"lat_p999_us_vs_alone", "p99.9"}};
  for (const auto& [key, what] : said)
    for (const auto& [k, v] : row)
      if (k == key) {
        std::snprintf(b, sizeof b, " %s %.2fx", what, v);
        s += b;
      }
  s += " of alone";
  for (const auto& [k, v] : row)
    if (k == "background_bytes_per_second") {
      std::snprintf(b, sizeof b, "; the background's own %.3f Gb/s", v * 8 / 1e9);
      s += b;
    }
  return s;
}

}  // namespace rdmasweep
