// What the two ends of a point must agree on after it (core/point/point_protocol.cpp
// makes these checks): SEND's per-QP counts, the words the atomics left in the
// target's buffer, and with --bidir the following end's own direction. Each check
// throws verbs::Error naming what differs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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
// `receiver` got `got[q]` messages on each QP q of what `sender` sent (`sent[q]`):
// throws naming the first QP where they differ.
void check_received(const std::string& receiver, const std::vector<uint64_t>& got, const std::string& sender,
                    const std::vector<uint64_t>& sent);
// `got` (the target's atomic_sum) against what `sent` atomics per QP must leave.
void check_atomic_sum(const TestConfig& c, const std::vector<uint64_t>& sent, std::optional<uint64_t> got);
// --bidir: the following end's direction (RESULT's `reverse`) into the leading end's
// result, checked; `me` and `peer` name the two ends.
void take_reverse(const PointResources& res, const control::Counts& got, PointResult& out, const std::string& me,
                  const std::string& peer);

}  // namespace rdmasweep
