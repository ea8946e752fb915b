// What the two sides of a point must agree on after it, beyond SEND's per-QP counts:
// the words the atomics left in the target's buffer, and with --bidir the server's
// own direction. Each check throws verbs::Error naming what differs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/control/protocol.hpp"
#include "core/point/lanes.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

// The 8-byte words a peer's atomics hit in this side's buffer (each QP region's
// first), every thread's, summed.
uint64_t atomic_sum(const PointResources& res);
// --bidir SEND: what each QP received from the peer, every thread's in order.
std::vector<uint64_t> arrivals(const PointResources& res);
// `got` (the target's atomic_sum) against what `sent` atomics per QP must leave.
void check_atomic_sum(const TestConfig& c, const std::vector<uint64_t>& sent, std::optional<uint64_t> got);
// --bidir: the server's direction (RESULT's `reverse`) into the client's result, checked.
void take_reverse(const PointResources& res, const control::Counts& got, PointResult& out);

}  // namespace rdmasweep
