// Setup, kept apart from the fast path: one thread's share of a point (all of it
// with one thread), sized from its configuration, checked against the device, and
// its N QPs brought to RTS against the peer's endpoint. The loops see only its
// LoopResources (core/engine/loop_resources.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/config.hpp"
#include "core/engine/loop_resources.hpp"
#include "core/setup/endpoint.hpp"
#include "core/verbs/device.hpp"
#include "core/verbs/gid.hpp"

namespace rdmasweep {

class TestResources : public LoopResources {
 public:
  // `slot` >= cfg.work.size: bytes per QP region (0: just the message size).
  // `shared`: a CQ of all threads' QPs to use instead of one of its own (--cq-scope process).
  TestResources(const verbs::Device& dev, const GidEntry& gid, const TestConfig& cfg, Role role, uint64_t slot = 0,
                const verbs::CompletionQueue* shared = nullptr);

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
  void set_remote(const Endpoint& peer);

  Endpoint local_endpoint() const;
  // Brings every QP to RTS against the peer's endpoint, then posts the initial receives.
  void connect(const Endpoint& peer);
  // The MTU the QPs use on a path of `path`: --mtu when given (throws when above it).
  ibv_mtu path_mtu(ibv_mtu path) const;
  // Posts the initial receives (connect() does it; RDMA-CM connects call it after).
  void post_receives();
  // --validate READ: the target's regions hold the pattern its reads are checked against.
  void fill_read_pattern();

  const verbs::Device& dev;
  GidEntry gid;
  uint32_t inline_size = 0;  // the QPs' max inline data: inline_limit() of the knob
  uint8_t rd_atomic = 1;     // RDMA READs in flight per QP (max_rd_atomic, max_dest_rd_atomic)
  verbs::Retry retry() const {
    return {static_cast<uint8_t>(cfg.knobs.qp_timeout), static_cast<uint8_t>(cfg.knobs.retry_count)};
  }
  std::vector<uint32_t> psn;
  // Remote access for one test (open_window): destroyed before the base's PD.
  verbs::MemoryRegion window;
  verbs::MemoryRegion credit_window;  // receive_counts(), remote READ, for one test
  std::vector<verbs::MemoryRegion> qp_windows;  // --mr-per-qp: each QP region's remote window

 private:
  // Sets the buffer layout (stride, slots, regions) for `slot`; returns the bytes to register.
  uint64_t size_buffers(uint64_t slot);
  void register_memory(uint64_t bytes);
  void create_qps();
  verbs::PeerAddress path_to(const Endpoint& peer) const;
};

}  // namespace rdmasweep
