// `rdmasweep client --beside KNOBS`: each point's second row, NAME/beside, the point
// measured again beside a background workload (core/point/beside.hpp) right after its
// run alone; the row carries the ratio of each figure to alone and the background's
// own rates.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/point/beside.hpp"

namespace rdmasweep {

using Figures = std::vector<std::pair<std::string, double>>;

struct Background {
  TestConfig cfg;           // its knobs; its duration is set per run
  BesideConnect connect;    // opens its session (SessionOptions::wind_up = wind_up)
  std::unique_ptr<ClientSession> session;  // kept across points, replaced when broken
  // Set once the point beside it has run: the background's window ends with the point's.
  std::shared_ptr<std::atomic<bool>> wind_up = std::make_shared<std::atomic<bool>>(false);
};

// The name of `point`'s row beside the background.
std::string beside_name(const std::string& point);

// Runs `cfg` on `main` beside the background; `alone` holds the point's runs alone so
// far (their windows size the background; their figures, the ratios). Returns the
// point's result and adds the row's own figures to `extra`. Throws the point's error,
// the background's, or why the two did not overlap.
PointResult run_point_beside(Background& bg, ClientSession& main, const TestConfig& cfg, uint64_t slot,
                             const std::vector<PointResult>& alone, Figures& extra);

// The row's figures: each of the point's headline figures as a ratio to its median
// alone (`K_vs_alone`), and the background's rates (`background_*`).
Figures beside_figures(const PointResult& beside, const std::vector<PointResult>& alone, const PointResult& background);

// The line under a NAME/beside row: the ratios to alone and the background's rate.
std::string beside_note(const std::string& background_point, const Figures& row);

}  // namespace rdmasweep
