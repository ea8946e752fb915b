// SEND on credit (core/engine/send_credits.hpp), the bandwidth loop against a slow receiver on
// the fake device: no QP ever has more SENDs out than the receiver's count plus its
// window, whatever the post list; the counts stay exact; the loop ends with no credit
// READ in flight. And without credit the same receiver is overrun, so the check bites.
// Each READ takes its QP's whole 64-byte slot, never a response Soft-iWARP may fail.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/config/refusals.hpp"
#include "core/engine/loop_bw.hpp"
#include "core/engine/loop_paced.hpp"
#include "tests/support/fake_device.hpp"

namespace rdmasweep {
namespace {

using testing::FakeDevice;

// The receiver: it takes one message per QP each poll (so the sender, completing at
// once, runs ahead), and a credit READ reads its count when posted, into the slot the
// READ names (QP q's count is the first word of slot q).
struct SlowReceiver {
  FakeDevice& fake;
  uint32_t window;  // receives it keeps posted beyond those taken
  std::vector<uint64_t> sent, taken, landed;  // landed: a slot of kCreditSlotWords per QP
  uint64_t credit_reads = 0, overruns = 0;

  SlowReceiver(FakeDevice& f, uint32_t nqp, uint32_t w) : fake(f), window(w), sent(nqp), taken(nqp),
                                                        landed(nqp * kCreditSlotWords) {}
  int post(uint32_t q, ibv_send_wr* w) {
    if (WrId::is_credit(w->wr_id)) {
      ++credit_reads;
      landed.at((w->sg_list->addr - reinterpret_cast<uint64_t>(landed.data())) / sizeof(uint64_t)) = taken[q];
      return fake.post(q, w);
    }
    for (ibv_send_wr* x = w; x != nullptr; x = x->next) overruns += ++sent[q] > taken[q] + window;
    return fake.post(q, w);
  }
  int poll(int n, ibv_wc* wc) {
    for (size_t q = 0; q < sent.size(); ++q) taken[q] = std::min(sent[q], taken[q] + 1);
    return fake.poll(n, wc);
  }
  uint32_t recv(const ibv_wc& wc) { return fake.recv(wc); }
};

// The credit READs as make_credit_reads builds them, landing in the receiver's `landed`.
// `reserve`: every (--bidir), where the CQ holds the sends' share only; 1 (one way),
// where the CQ has room to spare, here one entry per QP.
detail::CreditReads credits_of(SlowReceiver& rx, uint32_t nqp, uint32_t window, uint32_t reserve) {
  detail::CreditReads cr;
  cr.window = window;
  cr.reserve = reserve;
  cr.landed = rx.landed.data();
  cr.wr.assign(nqp, ibv_send_wr{});
  cr.sge.assign(nqp, ibv_sge{});
  for (uint32_t q = 0; q < nqp; ++q) cr.wr[q] = detail::credit_read(q, &cr.sge[q], rx.landed.data(), 1, 0, 2);
  return cr;
}

struct CreditedPoint {
  TestConfig cfg;
  detail::BwPlan p;
  std::vector<SendQueue> sq;
  detail::SendWrs wrs;
  FakeDevice::Options dev;
  RunControl ctl;

  // The fake's CQ holds only the sends' share of the point's CQ (each QP's signaled
  // WRs of a full send queue), not the receives' slack a SEND sender's CQ also has.
  CreditedPoint(uint32_t qps, uint32_t post_list, uint64_t per_qp, uint32_t tx_depth = 64, uint32_t every = 8)
      : p(plan(qps, post_list, per_qp, tx_depth, every)), sq(qps), wrs(qps, post_list, IBV_WR_SEND, 0) {
    for (SendQueue& s : sq) s.until_signal = p.every;
    dev.nqp = qps;
    dev.sq_depth = p.depth;
    dev.cq_depth = qps * ((tx_depth + every - 1) / every);
    ctl.idle_timeout = std::chrono::seconds(10);
  }
  static detail::BwPlan plan(uint32_t qps, uint32_t post_list, uint64_t per_qp, uint32_t tx_depth, uint32_t every) {
    TestConfig c;
    c.work.op = Op::Send;
    c.work.qps = qps;
    c.knobs.tx_depth = tx_depth;
    c.knobs.signal_every = every;
    c.knobs.post_list = post_list;
    validate(c);
    return detail::bw_plan(c, per_qp, 0);
  }
  detail::CreditReads credits(SlowReceiver& rx, uint32_t window, uint32_t reserve) {
    return credits_of(rx, static_cast<uint32_t>(sq.size()), window, reserve);
  }
};

struct Shape {
  uint32_t tx_depth, every, post_list;
};

// Also: the READs fit the send queue and the CQ beside the SENDs (no refused post, no
// CQ overrun), and no QP waits forever, even where one signaled WR fills the queue.
TEST(SendCredit, NoQpRunsAheadOfTheReceiversCountPlusItsWindow) {
  for (uint32_t window : {1u, 2u, 16u}) {
    for (Shape sh : {Shape{64, 8, 1}, Shape{64, 8, 4}, Shape{8, 8, 1}, Shape{4, 1, 4}, Shape{3, 2, 2}}) {
      for (bool bidir : {false, true}) {
        SCOPED_TRACE("window " + std::to_string(window) + ", tx depth " + std::to_string(sh.tx_depth) +
                     ", signal every " + std::to_string(sh.every) + ", post list " + std::to_string(sh.post_list) +
                     (bidir ? ", bidir" : ""));
        CreditedPoint pt(4, sh.post_list, 500, sh.tx_depth, sh.every);
        if (!bidir) pt.dev.cq_depth += 4;  // one way: the CQ's room to spare, one entry per QP
        FakeDevice fake(pt.dev);
        SlowReceiver rx(fake, 4, window);
        detail::CreditReads cr = pt.credits(rx, window, bidir ? sh.every : 1);
        detail::IdleWatch watch(pt.ctl);
        LoopStats st = detail::bw_initiator_loop(rx, pt.wrs, pt.sq, pt.p, watch, nullptr, &cr);
        EXPECT_EQ(rx.overruns, 0u);
        EXPECT_GT(rx.credit_reads, 0u);
        EXPECT_EQ(cr.in_flight, 0u) << "the loop ended with a credit READ in flight";
        EXPECT_EQ(fake.refused_posts, 0u) << "a credit READ took a slot the send queue did not have";
        EXPECT_EQ(fake.cq_overruns, 0u) << "CQ high water " << fake.cq_high_water << " > " << pt.dev.cq_depth;
        for (uint32_t q = 0; q < 4; ++q) {
          EXPECT_EQ(st.per_qp[q], 500u);
          EXPECT_EQ(pt.sq[q].posted, 500u);
          EXPECT_FALSE(pt.sq[q].reading);
          EXPECT_LE(pt.sq[q].granted, pt.sq[q].posted);
        }
      }
    }
  }
}

// The same receiver without credit: the sender is 64 deep and the receiver takes one
// a poll, so it is overrun (what iWARP turns into a TERMINATE).
TEST(SendCredit, WithoutCreditTheSameReceiverIsOverrun) {
  CreditedPoint pt(4, 1, 500);
  FakeDevice fake(pt.dev);
  SlowReceiver rx(fake, 4, 2);
  detail::IdleWatch watch(pt.ctl);
  detail::bw_initiator_loop(rx, pt.wrs, pt.sq, pt.p, watch);
  EXPECT_GT(rx.overruns, 0u);
  EXPECT_EQ(rx.credit_reads, 0u);
}

// A count read while being written can come back larger than the truth: it never
// grants more than was sent.
TEST(SendCredit, ACountPastWhatWasSentGrantsNoMore) {
  std::vector<uint64_t> landed(kCreditSlotWords);
  landed[0] = 1000;
  detail::CreditReads cr;
  cr.window = 4;
  cr.landed = landed.data();
  cr.in_flight = 1;
  SendQueue s;
  s.posted = 10;
  s.reading = true;
  cr.take(s, 0);
  EXPECT_EQ(s.granted, 10u);
  EXPECT_FALSE(s.reading);
  EXPECT_EQ(cr.in_flight, 0u);
}

// Soft-iWARP copies a READ response of up to 32 bytes with copy_from_user while a
// post_send on the QP is in progress, also from its transmit thread, where the copy
// fails and ends the connection (Batch/ProviderCredit.CreditReadsSurviveBothWaysOnAnSrq). So QP q's
// credit READ asks for its whole 64-byte slot: the peer's slot q, landing in this side's
// slot q, apart from every other QP's.
TEST(SendCredit, EachReadTakesItsQpsWholeSlotLongerThanSoftIwarpCopiesInline) {
  constexpr uint32_t kSiwInlineCopyMax = 32;  // siw's MAX_HDR_INLINE
  std::vector<uint64_t> landing(4 * kCreditSlotWords);
  const uint64_t remote = 0x10000;
  for (uint32_t q = 0; q < 4; ++q) {
    SCOPED_TRACE("QP " + std::to_string(q));
    ibv_sge sge{};
    const ibv_send_wr w = detail::credit_read(q, &sge, landing.data(), 7, remote, 9);
    EXPECT_EQ(w.opcode, IBV_WR_RDMA_READ);
    EXPECT_EQ(w.wr_id, WrId::credit(q));
    EXPECT_TRUE(w.send_flags & IBV_SEND_SIGNALED);
    ASSERT_EQ(w.sg_list, &sge);
    EXPECT_GT(sge.length, kSiwInlineCopyMax);
    EXPECT_EQ(sge.length, kCreditSlotWords * sizeof(uint64_t));
    EXPECT_EQ(sge.addr, reinterpret_cast<uint64_t>(&landing[q * kCreditSlotWords]));
    EXPECT_EQ(sge.lkey, 7u);
    EXPECT_EQ(w.wr.rdma.remote_addr, remote + q * sge.length);
    EXPECT_EQ(w.wr.rdma.rkey, 9u);
  }
}

// --rate on credit: a paced SEND due before the receiver has room waits for its credit
// (posted late, counted so), never beyond the receiver's count plus its window; every
// message still goes, exactly, and the loop ends with no credit READ in flight.
TEST(SendCredit, APacedSendWaitsForTheReceiversCreditLateNeverAhead) {
  for (uint32_t window : {1u, 2u, 16u}) {
    SCOPED_TRACE("window " + std::to_string(window));
    constexpr uint32_t kQps = 4, kDepth = 8;
    FakeDevice::Options dev;
    dev.nqp = kQps;
    dev.sq_depth = kDepth;
    dev.cq_depth = kQps * kDepth + kQps;  // a CQE per SEND (each signaled), and the READs'
    FakeDevice fake(dev);
    SlowReceiver rx(fake, kQps, window);
    std::vector<SendQueue> sq(kQps);
    detail::SendWrs wrs(kQps, 1, IBV_WR_SEND, 0);
    detail::CreditReads cr = credits_of(rx, kQps, window, 1);
    detail::PacedPlan p;
    p.nqp = kQps;
    p.depth = kDepth;
    p.per_qp = 300;
    p.gap_ns = 1;  // every message due at once: only the credit holds them back
    p.posted = "SEND";
    RunControl ctl;
    ctl.idle_timeout = std::chrono::seconds(10);
    detail::IdleWatch watch(ctl);
    PacedStats st = detail::paced_initiator_loop(rx, wrs, sq, p, watch, nullptr, &cr);
    EXPECT_EQ(rx.overruns, 0u);
    EXPECT_GT(rx.credit_reads, 0u);
    EXPECT_EQ(cr.in_flight, 0u) << "the loop ended with a credit READ in flight";
    EXPECT_EQ(fake.refused_posts, 0u);
    EXPECT_EQ(fake.cq_overruns, 0u);
    EXPECT_GT(st.late, 0u) << "messages held back for credit are late";
    EXPECT_EQ(st.from_due.count(), uint64_t{kQps} * 300);
    for (uint32_t q = 0; q < kQps; ++q) EXPECT_EQ(st.per_qp[q], 300u);
  }
}

}  // namespace
}  // namespace rdmasweep
