// The initiator's measured run of one point on connected resources, shared by the
// client, every thread of a point (core/point/lanes.hpp) and every mesh flow.
#pragma once

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/setup/test_resources.hpp"
#include "core/engine/loop.hpp"
#include "core/results/context.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

// The interval a point samples throughput over time at: `asked` (--interval), or
// when negative kDefaultInterval (core/results/context.hpp) for duration points and
// none for counted ones.
double effective_interval(double asked, const Workload& w);

// The initiator's measured run of one point on connected resources: the warm-up
// (bandwidth: a loop of its own; latency: inside the loop), the measured loop and the
// point's figures. `sent` gets what was posted per QP, warm-up included (what the
// peer must have received). The client and every mesh flow run exactly this.
// `after_warmup`, when set, runs between the bandwidth warm-up and the measured loop
// (threads of one point meet there, core/point/lanes.hpp).
PointResult measure_point(TestResources& res, const RunControl& ctl, double interval, std::vector<uint64_t>& sent,
                          const std::function<void()>& after_warmup = {});

// Moves a paced loop's schedule, late posts and both latency histograms into a result.
void take_pacing(PointResult& out, PacedStats& st);

// Moves a latency loop's figures (histogram, per-QP min/mean/max) into a result.
void take_latency(PointResult& out, LatStats&& st);

}  // namespace rdmasweep
