// How big a point's buffers are and which points can share QPs: the layout both
// sides agree on (SetupRequest::slot_bytes), what --plan and doctor report, and the
// reuse rule a sweep follows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/config/config.hpp"
#include "core/verbs/device.hpp"

namespace rdmasweep {

// QP regions in each of a side's rx and tx areas: one per QP where each QP needs its
// own (latency: completion is seen in memory; --mr-per-qp), else one all QPs share.
// --validate gives each QP its own too: every QP's messages carry their own pattern.
inline uint32_t qp_regions(const TestConfig& c) {
  return c.work.mode == Mode::Lat || c.knobs.mr_per_qp || c.knobs.validate ? c.work.qps : 1;
}

// Message buffers per QP region: one, except SEND with --validate, where every message
// in flight (a send, a posted receive) has its own so none is overwritten before it is
// checked. Message k of a QP uses buffer k % message_slots.
inline uint32_t message_slots(const TestConfig& c) {
  return c.knobs.validate && c.work.op == Op::Send ? std::max(c.knobs.tx_depth, c.knobs.rx_depth) : 1;
}

// Points whose verbs objects are interchangeable: a sweep reuses one set of QPs,
// connected once, across the message sizes of the same QP count and loop knobs.
bool same_shape(const TestConfig& a, const TestConfig& b);

// Buffer slot per point: the largest size among the points of its shape, so its
// QPs can serve them all, unless that would pin more than `budget` bytes.
std::vector<uint64_t> plan_slots(const std::vector<TestConfig>& points, uint64_t budget = uint64_t{256} << 20);
// One message buffer of `c` in a shape planned for `slot`: what the peer sizes its
// side by (SetupRequest::slot_bytes).
uint64_t message_stride(const TestConfig& c, uint64_t slot);
// The bytes one thread's buffers pin for `c` with message buffers of `stride` bytes:
// its rx and tx areas. What TestResources registers.
uint64_t thread_buffer_bytes(const TestConfig& c, uint64_t stride);
// thread_buffer_bytes, refused (verbs::Error) over 8 GiB.
uint64_t checked_buffer_bytes(const TestConfig& c, uint64_t stride);
// The bytes one side of `c` pins in a shape planned for `slot`: every thread's
// buffers. Both sides pin the same (the server sizes by the client's stride); doctor
// checks it against the locked-memory limit and --plan prints it.
uint64_t side_buffer_bytes(const TestConfig& c, uint64_t slot);
// Whether QPs built for `built` with message buffers of `stride` bytes can run `next`
// (TestResources::can_serve; --plan counts the points that set up QPs by it).
bool can_reuse(const TestConfig& built, uint64_t stride, const TestConfig& next);
// Throws what creating `c`'s resources on `dev` would for their plan (the config, the
// device's limits, the buffers' size) without creating anything.
void check_plan(const TestConfig& c, const verbs::Device& dev, uint64_t slot);

}  // namespace rdmasweep
