// --cq-scope process: several threads poll one CQ. Each completion belongs to the
// thread that owns its QP (by qp_num); a thread that polls another's completion
// hands it over through that thread's mailbox, so every loop still sees only its own
// QPs' completions and keeps its accounting single-threaded. One thread polls at a
// time, so a handed-over completion and a later one of the same QP that its thread
// polls itself cannot pass each other: each QP's completions reach its thread in CQ
// order (--validate checks each received message against its place in that order).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include <infiniband/verbs.h>

#include "core/config/config.hpp"
#include "core/engine/qpn_table.hpp"

namespace rdmasweep {

class SharedCq {
 public:
  // `lanes` maps every QP on the CQ (`qpns`) to its thread; `depth`, each thread's
  // mailbox (mailbox_depth), bounds what can be handed to it, so a mailbox never
  // grows in the loop.
  SharedCq(ibv_cq* cq, const std::vector<uint32_t>& qpns, const std::vector<uint32_t>& lanes, uint32_t nlanes,
           uint32_t depth);
  SharedCq(const SharedCq&) = delete;
  SharedCq& operator=(const SharedCq&) = delete;

  // Up to `n` completions of `lane`'s QPs into `out` (room for `n`): first those
  // other threads handed over, then up to the rest from the CQ (handing over what
  // belongs to others). Polls into `out` itself: no buffer sized by some point's
  // --poll-batch, so a point reusing the resources polls its own batch.
  int poll(uint32_t lane, int n, ibv_wc* out);

  uint32_t mailbox_capacity(uint32_t lane) const { return static_cast<uint32_t>(box_[lane].ring.size()); }
  uint64_t mailbox_bytes() const;  // every mailbox's ring

 private:
  int poll_locked(uint32_t lane, int n, ibv_wc* out);
  struct alignas(64) Mailbox {  // one cache line of control per thread: no false sharing
    std::atomic_flag lock = ATOMIC_FLAG_INIT;
    std::atomic<uint32_t> count{0};
    uint32_t head = 0;
    bool failed = false;       // holds a failed completion, where its thread stops
    std::vector<ibv_wc> ring;  // capacity: mailbox_depth(), one thread's share of the CQ
  };
  void lock(Mailbox& m) {
    while (m.lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  void unlock(Mailbox& m) { m.lock.clear(std::memory_order_release); }
  int take(Mailbox& m, int n, ibv_wc* out);
  void give(uint32_t lane, const ibv_wc& wc);

  alignas(64) std::atomic_flag polling_ = ATOMIC_FLAG_INIT;  // the one thread taking from the CQ
  ibv_cq* cq_;
  QpnTable index_;               // qp_num -> position in lane_
  std::vector<uint32_t> lane_;   // its thread
  std::vector<Mailbox> box_;
};

// The `depth` of a point's SharedCq: what of the CQ can be one thread's at once (its
// own QPs' outstanding work), not the whole CQ, so the mailboxes grow with the
// threads, not with their square.
uint32_t mailbox_depth(const TestConfig& cfg);

}  // namespace rdmasweep
