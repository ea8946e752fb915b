#include "core/setup/sizing.hpp"

#include <algorithm>
#include <string>

#include "core/config/knobs.hpp"
#include "core/config/refusals.hpp"
#include "core/setup/device_checks.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

using verbs::Error;

bool same_shape(const TestConfig& a, const TestConfig& b) {
  // The knobs the table marks as shaping; cq_depth by the depth actually used (0 is
  // the one its QPs need).
  static const Knob* const cq = &knob("cq_depth");
  for (const Knob& k : knobs())
    if (k.shapes && (&k == cq ? cq_depth_for(a) != cq_depth_for(b) : k.get(a) != k.get(b))) return false;
  return true;
}

static uint64_t round_slot(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

std::vector<uint64_t> plan_slots(const std::vector<TestConfig>& points, uint64_t budget) {
  std::vector<uint64_t> slots(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    uint64_t biggest = points[i].work.size;
    for (const TestConfig& o : points)
      if (same_shape(points[i], o)) biggest = std::max(biggest, o.work.size);
    uint64_t regions = qp_regions(points[i]);
    const uint64_t grh = is_ud(points[i]) ? kUdGrhBytes : 0;  // before a UD receive's payload
    const uint64_t per_thread = 2 * regions * message_slots(points[i]) * round_slot(biggest + grh);
    bool fits = per_thread * points[i].knobs.threads <= budget;  // each thread its own
    slots[i] = round_slot((fits ? biggest : points[i].work.size) + grh);
  }
  return slots;
}

uint64_t message_stride(const TestConfig& c, uint64_t slot) {
  // UD receives hold the GRH before the payload.
  return round_slot(std::max(slot, c.work.size + (is_ud(c) ? kUdGrhBytes : 0)));
}

uint64_t thread_buffer_bytes(const TestConfig& c, uint64_t stride) {
  return 2 * stride * message_slots(c) * qp_regions(c);  // rx and tx areas of qp_regions() regions
}

uint64_t side_buffer_bytes(const TestConfig& c, uint64_t slot) {
  return thread_buffer_bytes(c, message_stride(c, slot)) * c.knobs.threads;
}

bool can_reuse(const TestConfig& built, uint64_t stride, const TestConfig& next) {
  return same_shape(built, next) && next.work.size + (is_ud(next) ? kUdGrhBytes : 0) <= stride;
}

uint64_t checked_buffer_bytes(const TestConfig& c, uint64_t stride) {
  const uint32_t slots = message_slots(c);
  const uint64_t bytes = thread_buffer_bytes(c, stride);
  if (bytes > (uint64_t{8} << 30))
    throw Error("a test with " + std::to_string(c.work.qps) + " QPs of " + std::to_string(c.work.size) +
                " bytes needs " + std::to_string(bytes >> 20) + " MiB of buffers" +
                (slots > 1 ? " (--validate: one per message in flight)" : "") + ": lower --qps or --size" +
                (slots > 1 ? " or --tx-depth/--rx-depth" : ""));
  return bytes;
}

void check_plan(const TestConfig& c, const verbs::Device& dev, uint64_t slot) {
  validate(c);
  check_device_limits(c, dev);
  checked_buffer_bytes(c, message_stride(c, slot));
}

}  // namespace rdmasweep
