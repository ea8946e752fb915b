// One bandwidth point's initiator loop as run_bw_initiator sets it up, with the fake
// device in place of the device: the loop's tests (tests/unit/loop_test.cpp) and how a
// point ends (tests/unit/loop_stop_test.cpp) share it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/config/refusals.hpp"
#include "core/engine/loop_bw.hpp"
#include "tests/support/fake_device.hpp"

namespace rdmasweep::testing {

inline TestConfig bw_config(uint32_t qps, uint32_t tx_depth, uint32_t every, uint32_t post_list = 1,
                            Op op = Op::Write) {
  TestConfig c;
  c.work.op = op;
  c.work.qps = qps;
  c.knobs.tx_depth = tx_depth;
  c.knobs.signal_every = every;
  c.knobs.post_list = post_list;
  validate(c);
  return c;
}

// The fake's CQ is as deep as the point's own (cq_depth_for).
struct BwFixture {
  TestConfig cfg;
  detail::BwPlan p;
  std::vector<SendQueue> sq;
  detail::SendWrs wrs;
  RunControl ctl;
  FakeDevice::Options dev;

  explicit BwFixture(const TestConfig& c, uint64_t per_qp = 1000, double duration = 0)
      : cfg(c),
        p(detail::bw_plan(c, per_qp, duration)),
        sq(c.work.qps),
        wrs(c.work.qps, c.knobs.post_list, detail::opcode_of(c.work.op), 0) {
    for (SendQueue& s : sq) s.until_signal = p.every;
    ctl.idle_timeout = std::chrono::seconds(10);
    dev.nqp = c.work.qps;
    dev.sq_depth = c.knobs.tx_depth;
    dev.cq_depth = cq_depth_for(c);
  }
  LoopStats run(FakeDevice& fake) {
    detail::IdleWatch watch(ctl);
    return detail::bw_initiator_loop(fake, wrs, sq, p, watch);
  }
  // Every WR was posted once, completed, and nothing the device refused or overran.
  void expect_clean(const FakeDevice& fake) {
    EXPECT_EQ(fake.cq_overruns, 0u) << "CQ high water " << fake.cq_high_water << " > " << dev.cq_depth;
    EXPECT_LE(fake.cq_high_water, dev.cq_depth);
    EXPECT_EQ(fake.refused_posts, 0u);
    for (uint32_t q = 0; q < p.nqp; ++q) EXPECT_EQ(sq[q].outstanding(), 0u) << "QP " << q;
  }
};

}  // namespace rdmasweep::testing
