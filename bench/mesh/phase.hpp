// The plan of `rdmasweep mesh`: a pattern is a list of phases, each a set of flows
// (src rank -> dst rank) that run at the same time.
#pragma once

#include <vector>

#include "bench/mesh/options.hpp"

namespace rdmasweep::mesh_detail {

struct Flow {
  int src, dst;
};

// Which flows run together: pairs is one phase per ordered pair, incast and
// all-to-all one phase with all their flows.
std::vector<std::vector<Flow>> phases_of(Pattern p, int n);

}  // namespace rdmasweep::mesh_detail
