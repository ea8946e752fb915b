// `rdmasweep mesh --plan N`: what a run on N ranks would do, computed from the
// options alone (no MPI, no device), so a cluster run can be sized before it starts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/mesh/options.hpp"

namespace rdmasweep::mesh_detail {

// The estimate's assumptions, printed with it: a cluster's NICs, not the lab's
// Soft-RoCE (bench/sweep_plan.hpp's time model, with these rates).
constexpr double kPlanSetupSeconds = 0.05;      // per phase: barrier, QP creation, endpoint swap
constexpr double kPlanMessageSeconds = 10e-6;   // per message, when --iters sets the length ...
constexpr double kPlanLinkBytesPerSecond = 12.5e9;  // ... plus its payload at 100 Gb/s
constexpr double kPlanRoundTrip = 2;            // a latency round trip, in messages

nlohmann::json mesh_plan(const MeshOptions& o, int ranks);
std::string plan_text(const nlohmann::json& plan);

}  // namespace rdmasweep::mesh_detail
