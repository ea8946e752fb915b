#include "bench/mesh/schedule.hpp"

namespace rdmasweep::mesh_detail {

// Round r of the circle method on m (even) players: m-1 stays put, the others turn.
static std::vector<Flow> round_robin(int m, int r) {
  std::vector<Flow> round;
  round.push_back({m - 1, r});
  for (int i = 1; i < m / 2; ++i) round.push_back({(r + i) % (m - 1), (r - i + (m - 1)) % (m - 1)});
  return round;
}

static std::vector<std::vector<Flow>> matching(int n) {
  const int m = n % 2 ? n + 1 : n;  // an odd count plays a dummy: its partner sits out
  std::vector<std::vector<Flow>> once;
  for (int r = 0; r < m - 1; ++r) {
    std::vector<Flow> phase;
    for (Flow f : round_robin(m, r))
      if (f.src < n && f.dst < n) phase.push_back(f);
    once.push_back(phase);
  }
  std::vector<std::vector<Flow>> out = once;  // every pair one way, then the other
  for (const auto& phase : once) {
    std::vector<Flow> back;
    for (Flow f : phase) back.push_back({f.dst, f.src});
    out.push_back(back);
  }
  return out;
}

std::vector<std::vector<Flow>> phases_of(Pattern p, int n, Schedule s) {
  std::vector<std::vector<Flow>> out;
  if (p == Pattern::Pairs && s == Schedule::Matching && n > 1) return matching(n);
  if (p == Pattern::Pairs) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j) out.push_back({{i, j}});
  } else if (p == Pattern::Incast) {
    std::vector<Flow> f;
    for (int i = 1; i < n; ++i) f.push_back({i, 0});
    out.push_back(f);
  } else if (p == Pattern::Victim) {
    out.push_back({{1, 0}});
    std::vector<Flow> beside{{1, 0}};
    for (int i = 2; i < n; ++i) beside.push_back({i, 0, true});
    out.push_back(beside);
  } else if (p == Pattern::Multicast) {  // one datagram stream, every other rank receiving it
    std::vector<Flow> f;
    for (int i = 1; i < n; ++i) f.push_back({0, i});
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

uint64_t phase_count(Pattern p, int n, Schedule s) {
  const uint64_t N = static_cast<uint64_t>(n);
  if (p == Pattern::Victim) return 2;
  if (p != Pattern::Pairs) return 1;
  if (N < 2) return 0;
  if (s == Schedule::Sequential) return N * (N - 1);
  return N % 2 ? 2 * N : 2 * (N - 1);
}

Schedule effective_schedule(const MeshOptions& o, int n) {
  if (o.schedule_given) return o.schedule;
  return n > 2 ? Schedule::Matching : Schedule::Sequential;
}

}  // namespace rdmasweep::mesh_detail
