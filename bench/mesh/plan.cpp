#include "bench/mesh/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/mesh/schedule.hpp"
#include "bench/sweep_plan.hpp"
#include "core/config/sweep.hpp"
#include "core/setup/sizing.hpp"

namespace rdmasweep::mesh_detail {

using nlohmann::json;

namespace {

// Flows and flow ends per phase without building the phases (1,048,576 phases of
// pairs on 1,024 ranks would be a lot of memory for a few numbers).
struct Shape {
  uint64_t phases = 0;
  uint64_t flows = 0;            // per point
  uint64_t max_flows_per_phase = 0;
  uint64_t max_ends_per_rank = 0;  // flow ends one rank holds at once
};

Shape shape_of(Pattern p, int n, Schedule s) {
  const uint64_t N = static_cast<uint64_t>(n);
  Shape sh;
  sh.phases = phase_count(p, n, s);
  if (p == Pattern::Pairs) {
    sh.flows = N * (N - 1);
    sh.max_flows_per_phase = s == Schedule::Matching ? N / 2 : 1;
    sh.max_ends_per_rank = 1;
  } else if (p == Pattern::Incast) {
    sh.flows = sh.max_flows_per_phase = N - 1;
    sh.max_ends_per_rank = N - 1;  // rank 0 receives them all
  } else if (p == Pattern::Multicast) {
    sh.flows = sh.max_flows_per_phase = N - 1;  // one per receiver
    sh.max_ends_per_rank = 1;                   // one UD QP each, the sender's too
  } else if (p == Pattern::Victim) {
    sh.flows = N;                    // the victim alone, then beside the N - 2 background flows
    sh.max_flows_per_phase = sh.max_ends_per_rank = N - 1;  // rank 0 receives them all
  } else {
    sh.flows = sh.max_flows_per_phase = N * (N - 1);
    sh.max_ends_per_rank = 2 * (N - 1);  // a sender and a receiver end per other rank
  }
  return sh;
}

// Seconds one flow of `c` takes to measure (warm-up included).
double point_seconds(const TestConfig& c) {
  PlanRates r;
  r.per_message = kPlanMessageSeconds;
  r.bytes_per_second = kPlanLinkBytesPerSecond;
  r.round_trip = kPlanRoundTrip;
  return measuring_seconds(c, r);
}

}  // namespace

json mesh_plan(const MeshOptions& o, int ranks) {
  const std::vector<TestConfig> points = expand(o.spec);
  const Schedule sched = effective_schedule(o, ranks);
  const Shape sh = shape_of(o.pattern, ranks, sched);
  const uint32_t reps = o.spec.repetitions;
  uint64_t max_qps = 0, max_bytes = 0;
  double seconds = 0;
  for (const TestConfig& c : points) {
    // Each flow end's buffers are a point's side, sized for its own messages (slot 0).
    max_qps = std::max<uint64_t>(max_qps, sh.max_ends_per_rank * total_qps(c));
    max_bytes = std::max<uint64_t>(max_bytes, sh.max_ends_per_rank * side_buffer_bytes(c, 0));
    seconds += static_cast<double>(sh.phases) * reps * (point_seconds(c) + kPlanSetupSeconds);
  }
  json p = {{"ranks", ranks},
            {"pattern", to_string(o.pattern)},
            {"schedule", o.pattern == Pattern::Pairs ? json(to_string(sched)) : json(nullptr)},
            {"points", points.size()},
            {"repetitions", reps},
            {"phases_per_point", sh.phases},
            {"flows_per_point", sh.flows},
            {"max_flows_per_phase", sh.max_flows_per_phase},
            {"phases", sh.phases * points.size() * reps},
            {"max_qps_per_rank", max_qps},
            {"max_buffer_bytes_per_rank", max_bytes},
            {"estimated_seconds", seconds},
            {"assumptions",
             {{"setup_seconds_per_phase", kPlanSetupSeconds},
              {"seconds_per_message", kPlanMessageSeconds},
              {"link_bytes_per_second", kPlanLinkBytesPerSecond},
              {"note", "duration points take their duration and a send queue's messages per QP; iteration points "
                       "(warm-up + iters) x QPs x (seconds per message + size / link rate), latency round trips "
                       "twice that"}}}};
  return p;
}

std::string plan_text(const json& p) {
  char b[1024];
  std::string s;
  const bool pairs = p["pattern"] == "pairs";
  std::snprintf(b, sizeof b, "rdmasweep mesh plan: %d ranks, pattern %s%s%s\n", p["ranks"].get<int>(),
                p["pattern"].get<std::string>().c_str(), pairs ? ", schedule " : "",
                pairs ? p["schedule"].get<std::string>().c_str() : "");
  s += b;
  std::snprintf(b, sizeof b,
                "  %llu point(s) x %u repetition(s); per point %llu phase(s), %llu flow(s), at most %llu at once\n",
                static_cast<unsigned long long>(p["points"].get<uint64_t>()), p["repetitions"].get<unsigned>(),
                static_cast<unsigned long long>(p["phases_per_point"].get<uint64_t>()),
                static_cast<unsigned long long>(p["flows_per_point"].get<uint64_t>()),
                static_cast<unsigned long long>(p["max_flows_per_phase"].get<uint64_t>()));
  s += b;
  std::snprintf(b, sizeof b, "  %llu phase(s) in all; per rank at most %llu QP(s) and %s of buffers\n",
                static_cast<unsigned long long>(p["phases"].get<uint64_t>()),
                static_cast<unsigned long long>(p["max_qps_per_rank"].get<uint64_t>()),
                human_bytes(p["max_buffer_bytes_per_rank"].get<double>()).c_str());
  s += b;
  const json& a = p["assumptions"];
  std::snprintf(b, sizeof b,
                "  estimated duration: %s (assuming %.2f s of setup per phase, %.0f us per message plus its payload "
                "at %.0f Gb/s; duration points take their duration)\n",
                human_seconds(p["estimated_seconds"].get<double>()).c_str(), a["setup_seconds_per_phase"].get<double>(),
                a["seconds_per_message"].get<double>() * 1e6, a["link_bytes_per_second"].get<double>() * 8 / 1e9);
  s += b;
  return s;
}

}  // namespace rdmasweep::mesh_detail
