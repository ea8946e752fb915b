// The plan of `rdmasweep mesh`: see phase.hpp.
#include "bench/mesh/phase.hpp"

#include <vector>

namespace rdmasweep::mesh_detail {

std::vector<std::vector<Flow>> phases_of(Pattern p, int n) {
  std::vector<std::vector<Flow>> out;
  if (p == Pattern::Pairs) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j) out.push_back({{i, j}});
  } else if (p == Pattern::Incast) {
    std::vector<Flow> f;
    for (int i = 1; i < n; ++i) f.push_back({i, 0});
    out.push_back(f);
  } else {
    std::vector<Flow> f;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j) f.push_back({i, j});
    out.push_back(f);
  }
  return out;
}

}  // namespace rdmasweep::mesh_detail
