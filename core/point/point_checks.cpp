#include "core/point/point_checks.hpp"

#include <cstring>
#include <string>

#include "core/setup/sizing.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

// The 8-byte words the client's atomics hit (each region's first), every thread's, summed.
uint64_t atomic_sum(const PointResources& res) {
  uint64_t sum = 0;
  for (uint32_t t = 0; t < res.threads(); ++t) {
    const TestResources& r = res.lane(t);
    for (uint32_t q = 0; q < r.regions; ++q) {
      uint64_t v = 0;
      std::memcpy(&v, r.rx_region(q), sizeof v);
      sum += v;
    }
  }
  return sum;
}

// --bidir SEND: what each QP received from the peer, every thread's in order.
std::vector<uint64_t> arrivals(const PointResources& res) {
  std::vector<uint64_t> got;
  for (uint32_t t = 0; t < res.threads(); ++t) {
    const std::vector<uint64_t>& g = res.lane(t).arrivals.got;
    got.insert(got.end(), g.begin(), g.end());
  }
  return got;
}

// What the atomics of a test leave in the server's buffer: each FAA adds 1 to its
// region's word, so the words sum to the operations (warm-up included); each CAS
// swaps 0 for 1, which only the first one per region can do.
static uint64_t expected_atomic_sum(const TestConfig& c, const std::vector<uint64_t>& sent) {
  uint64_t sum = 0;
  if (c.work.op == Op::Faa) {
    for (uint64_t n : sent) sum += n;
    return sum;
  }
  // QPs per region: one each (latency, --mr-per-qp), or a thread's all (`sent` is thread-major).
  const size_t per_region = qp_regions(c) == c.work.qps ? 1 : c.work.qps;
  for (size_t r = 0; r * per_region < sent.size(); ++r) {
    uint64_t n = 0;
    for (size_t q = r * per_region; q < (r + 1) * per_region && q < sent.size(); ++q) n += sent[q];
    sum += n > 0;
  }
  return sum;
}

void check_received(const std::string& receiver, const std::vector<uint64_t>& got, const std::string& sender,
                    const std::vector<uint64_t>& sent) {
  for (size_t q = 0; q < sent.size(); ++q) {
    const uint64_t n = q < got.size() ? got[q] : 0;
    if (n != sent[q])
      throw verbs::Error(receiver + " received " + std::to_string(n) + " messages on QP " + std::to_string(q) + " but " +
                         sender + " sent " + std::to_string(sent[q]));
  }
}

void check_atomic_sum(const TestConfig& c, const std::vector<uint64_t>& sent, std::optional<uint64_t> got) {
  if (!got) throw verbs::Error("the server did not report its atomic counter: run the same rdmasweep version on both sides");
  const uint64_t want = expected_atomic_sum(c, sent);
  if (*got != want)
    throw verbs::Error(std::string(to_string(c.work.op)) + ": the server's counters sum to " + std::to_string(*got) +
                       " after the test, not the " + std::to_string(want) + " its " +
                       (c.work.op == Op::Faa ? "fetch-and-adds" : "compare-and-swaps") + " must leave");
}

// --bidir: the server's direction into the client's result, checked as the client's
// own is: every SEND it sent arrived here, and its atomics left what they must.
void take_reverse(const PointResources& res, const control::Counts& got, PointResult& out, const std::string& me,
                  const std::string& peer) {
  const TestConfig& cfg = res.cfg();
  if (!got.reverse)
    throw verbs::Error(peer + " did not run its direction of --bidir: run the same rdmasweep version on both sides");
  out.reverse_messages = got.reverse->messages;
  out.reverse_seconds = got.reverse->seconds;
  if (both_ways_send(cfg)) check_received("--bidir: " + me, arrivals(res), peer, got.reverse->sent);
  if (is_atomic(cfg.work.op)) check_atomic_sum(cfg, got.reverse->sent, atomic_sum(res));
}

}  // namespace rdmasweep
