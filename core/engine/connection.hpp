// Setup, kept apart from the fast path: the verbs objects of one test, sized from
// its configuration and checked against the device, and bringing N QPs to RTS.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/config/config.hpp"
#include "core/control/protocol.hpp"
#include "core/engine/qpn_table.hpp"
#include "core/engine/send_queue.hpp"
#include "core/verbs/address_handle.hpp"
#include "core/verbs/completion_channel.hpp"
#include "core/verbs/completion_queue.hpp"
#include "core/verbs/device.hpp"
#include "core/verbs/gid.hpp"
#include "core/verbs/memory_region.hpp"
#include "core/verbs/protection_domain.hpp"
#include "core/verbs/queue_pair.hpp"
#include "core/verbs/shared_receive_queue.hpp"

namespace rdmasweep {

enum class Role : uint8_t { Initiator, Target };  // client posts the measured operations; server answers

// Throws verbs::Error naming the limit and its value when `c` asks for more than
// the device or port can give. Nothing is created before this passes.
void check_device_limits(const TestConfig& c, const verbs::Device& dev);

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
// its rx and tx areas. What TestResources registers (it refuses over 8 GiB).
uint64_t thread_buffer_bytes(const TestConfig& c, uint64_t stride);
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

class SharedCq;
class TestResources;

// One thread's share of a point (all of it with one thread): its QPs, buffers and CQ.
class TestResources {
 public:
  // `slot` >= cfg.work.size: bytes per QP region (0: just the message size).
  // `shared`: a CQ of all threads' QPs to use instead of one of its own (--cq-scope process).
  TestResources(const verbs::Device& dev, const GidEntry& gid, const TestConfig& cfg, Role role, uint64_t slot = 0,
                const verbs::CompletionQueue* shared = nullptr);

  // The CQ its QPs complete on: its own, or the threads' shared one.
  const verbs::CompletionQueue& completion_queue() const { return shared_cq_ != nullptr ? *shared_cq_ : cq; }

  // With --outs 0 (the devices' limit), lowers the READs in flight to what the peer
  // can respond to (its max_qp_rd_atom). Before connect().
  void limit_reads(uint32_t peer_max_rd_atom);

  // True when these QPs, CQ and buffers can run `next` as they are.
  bool can_serve(const TestConfig& next) const;
  // Switches to `next` (can_serve must hold) and clears the receive area, so no tag
  // from the previous point is mistaken for a new one.
  void retarget(const TestConfig& next);

  // The remote access of one test lives in `window`, a second registration of the
  // buffer: opened for each test (a new rkey) and closed when it ends, so no rkey
  // outlives its test. SEND tests, and sides nobody writes to or reads from, have none.
  void open_window();
  void close_window() {
    window = {};
    qp_windows.clear();
    credit_window = {};
  }
  // Takes the peer's buffer address and rkey for this test (connect() does it too).
  void set_remote(const control::Endpoint& peer);

  control::Endpoint local_endpoint() const;
  // Brings every QP to RTS against the peer's endpoint, then posts the initial receives.
  void connect(const control::Endpoint& peer);
  // The MTU the QPs use on a path of `path`: --mtu when given (throws when above it).
  ibv_mtu path_mtu(ibv_mtu path) const;
  // Posts the initial receives (connect() does it; RDMA-CM connects call it after).
  void post_receives();
  // --validate READ: the target's regions hold the pattern its reads are checked against.
  void fill_read_pattern();

  // Buffer layout: [rx area: regions x slot][tx area: regions x slot]. Latency tests
  // give each QP its own region (completion is seen in memory); bandwidth tests share one.
  // A region holds msg_slots message buffers of msg_stride bytes (message_slots()).
  char* rx_region(uint32_t qp) const { return mr.data() + (regions == 1 ? 0 : qp) * slot_bytes; }
  char* tx_region(uint32_t qp) const { return rx_region(qp) + regions * slot_bytes; }

  const verbs::Device& dev;
  TestConfig cfg;
  Role role;
  GidEntry gid;
  uint64_t slot_bytes = 0;    // one region: msg_slots x msg_stride
  uint64_t msg_stride = 0;    // one message buffer: the largest size of the shape
  uint32_t msg_slots = 1;
  uint32_t regions = 1;
  std::vector<uint32_t> validate_seen;  // --validate: messages received per QP, for the QPs' lifetime
  uint32_t inline_size = 0;  // the QPs' max inline data: inline_limit() of the knob
  bool use_inline = false;   // this point's messages go inline
  uint8_t rd_atomic = 1;     // RDMA READs in flight per QP (max_rd_atomic, max_dest_rd_atomic)
  verbs::Retry retry() const {
    return {static_cast<uint8_t>(cfg.knobs.qp_timeout), static_cast<uint8_t>(cfg.knobs.retry_count)};
  }
  RemoteBuffer remote;
  // SEND on iWARP (needs_send_credit): the sender's credit window per QP, the receives
  // the receiver keeps posted beyond those it took (0: no credit scheme on this side).
  uint32_t send_credit = 0;
  // Two slots of kCreditSlotWords per QP: this side's receive counts, then where its
  // READs of the peer's land. Outlives the regions over it (declared before the PD).
  std::unique_ptr<uint64_t[]> credit_words;
  // This side's count of reposted receives per QP (QP q's at [q * kCreditSlotWords]),
  // which the peer READs; null where the peer sends on no credit.
  uint64_t* receive_counts() const { return counts_receives_ ? credit_words.get() : nullptr; }
  // Where this side's READs of the peer's counts land, per QP (send_credit > 0).
  uint64_t* credit_landing() const { return credit_words.get() + cfg.work.qps * kCreditSlotWords; }
  // WRITE on iWARP (fences_writes): where the fence READs' byte lands.
  std::unique_ptr<uint64_t[]> fence_word;

  // Declared in dependency order: destroyed QPs first, PD last.
  verbs::ProtectionDomain pd;
  verbs::MemoryRegion mr;      // local access only, for the QPs' lifetime
  verbs::MemoryRegion window;  // remote access, for one test
  verbs::MemoryRegion credit_mr;      // credit_words, local access: this side's READs land there
  verbs::MemoryRegion credit_window;  // receive_counts(), remote READ, for one test
  verbs::MemoryRegion fence_mr;       // fence_word, local access
  // --mr-per-qp: each QP region registered on its own (rx and tx, local access), and
  // its remote window; the keys the WRs use then.
  std::vector<verbs::MemoryRegion> rx_mrs, tx_mrs, qp_windows;
  uint32_t rx_lkey(uint32_t qp) const { return rx_mrs.empty() ? mr.lkey() : rx_mrs[regions == 1 ? 0 : qp].lkey(); }
  uint32_t tx_lkey(uint32_t qp) const { return tx_mrs.empty() ? mr.lkey() : tx_mrs[regions == 1 ? 0 : qp].lkey(); }
  verbs::CompletionChannel channel;  // --events only
  verbs::CompletionQueue cq;
  verbs::SharedReceiveQueue srq;  // --srq, receiving side only
  QpnTable qp_of;                 // qp_num -> QP index, for completions from the SRQ
  std::vector<verbs::QueuePair> qps;
  std::vector<uint32_t> psn;
  std::vector<SendQueue> sq;  // per QP, for the QP's lifetime
  Arrivals arrivals;          // --bidir SEND: the peer's messages this point (measure_point resets it)
  // UD: per QP, the address of the peer's QP of the same index and its QPN (connect()).
  std::vector<verbs::AddressHandle> ah;
  std::vector<uint32_t> peer_qpn;
  // Several threads on one CQ: the router its loops poll through, and this thread's
  // number there (set by PointResources, core/point/lanes.hpp).
  SharedCq* cq_router = nullptr;
  uint32_t lane = 0;

 private:
  // Sets the buffer layout (stride, slots, regions) for `slot`; returns the bytes to register.
  uint64_t size_buffers(uint64_t slot);
  void register_memory(uint64_t bytes);
  void create_qps();
  verbs::PeerAddress path_to(const control::Endpoint& peer) const;

  const verbs::CompletionQueue* shared_cq_ = nullptr;
  bool counts_receives_ = false;
};

// The largest UD message on this port: --mtu, else the port's active MTU.
uint64_t ud_size_limit(const TestConfig& c, const verbs::Device& dev);

// True when this side posts receives for the test (SEND: the target in bw, both in lat).
bool posts_receives(const TestConfig& c, Role role);
// True when this side's receives go to a shared receive queue (--srq: the server's).
bool uses_srq(const TestConfig& c, Role role);
// True when `c`'s SENDs on `dev` wait for the receiver's credit (core/engine/send_credits.hpp):
// bandwidth SEND on iWARP, which has no receiver-not-ready retry.
bool needs_send_credit(const TestConfig& c, const verbs::Device& dev);
// True when `c`'s WRITEs on `dev` are fenced by a READ behind them (fence_writes): iWARP,
// whose WRITE completes once TCP has its data. The writer's target opens its window
// for that READ too.
bool fences_writes(const TestConfig& c, const verbs::Device& dev);

}  // namespace rdmasweep
