// Flow control for SEND where the transport has none. iWARP has no receiver-not-ready
// retry: a SEND that finds no receive posted ends the connection, and a send completes
// once TCP has its data, not once the peer took it, so a sender can outrun the
// receiver's reposting by any amount. The receiver keeps a count of the receives it
// has reposted per QP (Receives::complete) in a word the sender may READ; the sender
// posts a SEND only while it stays within that count plus the receives posted at
// connect (the window), and READs the count again when half the window is used.
// Each count has a slot of its own, READ whole (kCreditSlotWords: why).
// Internal to core/loop_*.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include <infiniband/verbs.h>

#include "core/engine/loop_common.hpp"
#include "core/verbs/queue_pair.hpp"

namespace rdmasweep {
struct LoopResources;
}

namespace rdmasweep::detail {

struct CreditReads {
  uint32_t window = 0;               // receives the peer keeps posted per QP beyond those it took
  uint32_t reserve = 1;              // send-queue slots a READ in flight keeps (read_fits)
  std::vector<ibv_send_wr> wr;       // per QP: a READ of the peer's slot of that QP (credit_read)
  std::vector<ibv_sge> sge;
  const volatile uint64_t* landed = nullptr;  // where those READs land, a slot per QP
  uint32_t in_flight = 0;

  // Takes QP q's READ completion: the count it read, never beyond what was sent (a
  // count read while being written must not grant what was never posted).
  void take(SendQueue& s, uint32_t q) {
    uint64_t v = landed[q * kCreditSlotWords];
    if (v > s.posted) v = s.posted;
    if (v > s.granted) s.granted = v;
    s.reading = false;
    --in_flight;
  }
};

// A READ takes a send-queue slot, and its completion a CQ entry. A SEND-only sender's
// CQ has room to spare (it is sized for receives this side never posts: config.cpp),
// so there the READ keeps its one slot (reserve 1). With --bidir it does not: the CQ
// holds each QP's signaled WRs of a full send queue, so the READ keeps `every` slots
// while in flight (post_what_fits), and goes out only where those are free, or where
// no signaled SEND is outstanding (only the unsignaled ones since the last, which wait
// for a later signaled one: else a QP out of credit with a small --tx-depth would wait
// for itself).
inline bool read_fits(const SendQueue& s, uint32_t depth, uint32_t every, uint32_t reserve) {
  return s.outstanding() + reserve <= depth || s.outstanding() == every - s.until_signal;
}

// QP q's credit READ (into `sge`): the whole slot of q's count among the peer's counts
// at `remote`, landing in slot q at `landing`; never just the 8-byte count
// (kCreditSlotWords says why).
inline ibv_send_wr credit_read(uint32_t q, ibv_sge* sge, const uint64_t* landing, uint32_t lkey, uint64_t remote,
                               uint32_t rkey) {
  constexpr uint32_t slot = kCreditSlotWords * sizeof(uint64_t);
  *sge = ibv_sge{reinterpret_cast<uint64_t>(landing + q * kCreditSlotWords), slot, lkey};
  return verbs::signaled_read(WrId::credit(q), sge, remote + uint64_t{q} * slot, rkey);
}

// Posts QP q's credit READ when half its window is used and more SENDs are to come
// (and read_fits); returns how many SENDs the credit allows now.
template <class Ops>
inline uint64_t credit_limit(Ops& ops, CreditReads& cr, uint32_t q, SendQueue& s, uint64_t target, uint32_t depth,
                             uint32_t every) {
  const uint64_t allowed = s.granted + cr.window;
  if (!s.reading && s.posted < target && allowed - s.posted <= cr.window / 2 && read_fits(s, depth, every, cr.reserve)) {
    if (int rc = ops.post(q, &cr.wr[q])) fail_post(rc, "ibv_post_send(credit READ)", q);
    s.reading = true;
    ++cr.in_flight;
  }
  return allowed;
}

// `r`'s credit READs for this point (the peer's count moves to a new rkey each test);
// window 0 (none) where the point needs no credit (LoopResources::send_credit).
CreditReads make_credit_reads(const LoopResources& r);

}  // namespace rdmasweep::detail
