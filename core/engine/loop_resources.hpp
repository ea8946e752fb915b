// What the loops touch of one thread's share of a point: its QPs, CQ, buffers and the
// peer's buffer. Setup (core/setup/test_resources.hpp) sizes, creates and connects
// them; the loops only read the layout and post to and poll the objects. No control
// messages, no JSON, no device checks here.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/config/config.hpp"
#include "core/engine/qpn_table.hpp"
#include "core/engine/send_queue.hpp"
#include "core/verbs/address_handle.hpp"
#include "core/verbs/completion_channel.hpp"
#include "core/verbs/completion_queue.hpp"
#include "core/verbs/memory_region.hpp"
#include "core/verbs/protection_domain.hpp"
#include "core/verbs/queue_pair.hpp"
#include "core/verbs/shared_receive_queue.hpp"

namespace rdmasweep {

enum class Role : uint8_t { Initiator, Target };  // client posts the measured operations; server answers

// True when this side posts receives for the test (SEND: the target in bw, both in lat).
inline bool posts_receives(const TestConfig& c, Role role) {
  if (write_with_imm(c)) return true;  // each side's pong arrives as a receive completion
  return c.work.op == Op::Send && (c.work.mode == Mode::Lat || role == Role::Target || c.knobs.bidir);
}
// True when this side's receives go to a shared receive queue (--srq: the server's).
inline bool uses_srq(const TestConfig& c, Role role) { return c.knobs.srq && role == Role::Target; }

// Where the peer's buffer is, for RDMA WRITE and READ.
struct RemoteBuffer {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  std::vector<uint32_t> rkeys;  // --mr-per-qp: each region's own
  uint32_t rkey_of(uint32_t qp) const { return rkeys.empty() ? rkey : rkeys[regions == 1 ? 0 : qp]; }
  // SEND on iWARP: the peer's receive counts, one 8-byte word per QP (core/engine/send_credits.hpp).
  uint64_t credit_addr = 0;
  uint32_t credit_rkey = 0;
  uint64_t slot_bytes = 0;
  uint32_t regions = 1;
  uint64_t rx_region(uint32_t qp) const { return addr + (regions == 1 ? 0 : qp) * slot_bytes; }
};

class SharedCq;

// One thread's QPs, CQ and buffers as the loops see them. It owns the verbs objects,
// declared in the order verbs needs them destroyed (QPs first, PD last); setup's
// LoopResources adds what only setup uses (the device, the GID, the remote windows).
struct LoopResources {
  LoopResources(const TestConfig& c, Role r, const verbs::CompletionQueue* shared) : cfg(c), role(r), shared_cq(shared) {}
  LoopResources(const LoopResources&) = delete;
  LoopResources& operator=(const LoopResources&) = delete;

  // The CQ its QPs complete on: its own, or the threads' shared one (--cq-scope process).
  const verbs::CompletionQueue& completion_queue() const { return shared_cq != nullptr ? *shared_cq : cq; }

  // Buffer layout: [rx area: regions x slot][tx area: regions x slot]. Latency tests
  // give each QP its own region (completion is seen in memory); bandwidth tests share one.
  // A region holds msg_slots message buffers of msg_stride bytes (message_slots()).
  char* rx_region(uint32_t qp) const { return mr.data() + (regions == 1 ? 0 : qp) * slot_bytes; }
  char* tx_region(uint32_t qp) const { return rx_region(qp) + regions * slot_bytes; }
  uint32_t rx_lkey(uint32_t qp) const { return rx_mrs.empty() ? mr.lkey() : rx_mrs[regions == 1 ? 0 : qp].lkey(); }
  uint32_t tx_lkey(uint32_t qp) const { return tx_mrs.empty() ? mr.lkey() : tx_mrs[regions == 1 ? 0 : qp].lkey(); }

  // This side's count of reposted receives per QP (QP q's at [q * kCreditSlotWords]),
  // which the peer READs; null where the peer sends on no credit.
  uint64_t* receive_counts() const { return counts_receives ? credit_words.get() : nullptr; }
  // Where this side's READs of the peer's counts land, per QP (send_credit > 0).
  uint64_t* credit_landing() const { return credit_words.get() + cfg.work.qps * kCreditSlotWords; }

  TestConfig cfg;
  Role role;
  uint64_t slot_bytes = 0;  // one region: msg_slots x msg_stride
  uint64_t msg_stride = 0;  // one message buffer: the largest size of the shape
  uint32_t msg_slots = 1;
  uint32_t regions = 1;
  std::vector<uint32_t> validate_seen;  // --validate: messages received per QP, for the QPs' lifetime
  bool use_inline = false;              // this point's messages go inline
  RemoteBuffer remote;
  // SEND on iWARP (needs_send_credit): the sender's credit window per QP, the receives
  // the receiver keeps posted beyond those it took (0: no credit scheme on this side).
  uint32_t send_credit = 0;
  bool counts_receives = false;  // the peer sends to this side on credit: receive_counts() is kept
  // Two slots of kCreditSlotWords per QP: this side's receive counts, then where its
  // READs of the peer's land. Outlives the regions over it (declared before the PD).
  std::unique_ptr<uint64_t[]> credit_words;
  // WRITE on iWARP (fences_writes): where the fence READs' byte lands.
  std::unique_ptr<uint64_t[]> fence_word;

  verbs::ProtectionDomain pd;
  verbs::MemoryRegion mr;             // local access only, for the QPs' lifetime
  verbs::MemoryRegion credit_mr;      // credit_words, local access: this side's READs land there
  verbs::MemoryRegion fence_mr;       // fence_word, local access
  std::vector<verbs::MemoryRegion> rx_mrs, tx_mrs;  // --mr-per-qp: each QP region on its own (local access)
  verbs::CompletionChannel channel;   // --events only
  verbs::CompletionQueue cq;
  const verbs::CompletionQueue* shared_cq = nullptr;  // the threads' shared CQ, when given
  verbs::SharedReceiveQueue srq;  // --srq, receiving side only
  QpnTable qp_of;                 // qp_num -> QP index, for completions from the SRQ
  std::vector<verbs::QueuePair> qps;
  std::vector<SendQueue> sq;  // per QP, for the QP's lifetime
  Arrivals arrivals;          // --bidir SEND: the peer's messages this point (measure_point resets it)
  // UD: per QP, the address of the peer's QP of the same index and its QPN (connect()).
  std::vector<verbs::AddressHandle> ah;
  std::vector<uint32_t> peer_qpn;
  // Several threads on one CQ: the router its loops poll through, and this thread's
  // number there (set by PointResources, core/point/lanes.hpp).
  SharedCq* cq_router = nullptr;
  uint32_t lane = 0;
};

}  // namespace rdmasweep
