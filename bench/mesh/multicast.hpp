// `rdmasweep mesh --pattern multicast`: rank 0 sends UD datagrams to a group that
// every other rank joined (core/engine/multicast.hpp); after each point rank 0 tells each
// receiver how many it sent, each receiver says what arrived, and rank 0 reports the
// sender's row and one row per receiver (received, lost, rates, and one-way latency:
// on the sender's host against one clock, on another against the receiver's clock
// offset, estimated from MPI round trips before the first point).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/mesh/options.hpp"
#include "bench/mesh/world.hpp"
#include "core/config/config.hpp"
#include "core/point/session.hpp"

namespace rdmasweep::mesh_detail {

class MeshReport;

struct McastRun {
  World w;
  const MeshOptions& o;
  const LocalFabric& fabric;
  const std::vector<std::string>& hosts;
  MeshReport* report;  // rank 0 only
};

// Joins the group on every rank, then runs every point's repetitions. Returns false
// when interrupted; `setup_error` (the first rank's) when a rank could not join.
// Throws RanksGone when a rank stopped answering.
bool run_multicast(const McastRun& run, const std::vector<TestConfig>& points, uint32_t reps,
                   std::string* setup_error);

}  // namespace rdmasweep::mesh_detail
