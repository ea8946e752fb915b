// Which flows of `rdmasweep mesh` run together: a pattern is a list of phases, each a
// set of flows (src rank -> dst rank) measured at the same time. Pure and MPI-free,
// so `mesh --plan` and the unit tests use it without a cluster.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/mesh/options.hpp"

namespace rdmasweep::mesh_detail {

struct Flow {
  int src, dst;
  bool background = false;  // --pattern victim: a flow of the background, not of the sweep's point
};

// pairs, sequential: one phase per ordered pair, N(N-1) phases.
// pairs, matching: a round-robin tournament (the circle method) played twice, once
// each way: every phase a perfect matching (with N odd, one rank sits out each
// round), every ordered pair exactly once, 2(N-1) phases for N even, 2N for N odd.
// incast, all-to-all and multicast (0 -> each other rank): one phase with all their flows.
// victim: 1 -> 0 alone, then 1 -> 0 with each other rank's background flow onto 0.
std::vector<std::vector<Flow>> phases_of(Pattern p, int n, Schedule s);

// The same count without building the phases (for --plan on very many ranks).
uint64_t phase_count(Pattern p, int n, Schedule s);

// The schedule a run uses: --schedule when given, else matching for pairs on more
// than 2 ranks (2 ranks: the two are the same).
Schedule effective_schedule(const MeshOptions& o, int n);

}  // namespace rdmasweep::mesh_detail
