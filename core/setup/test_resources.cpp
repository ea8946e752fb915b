#include "core/setup/test_resources.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "core/config/refusals.hpp"
#include "core/engine/validate.hpp"
#include "core/engine/wr_id.hpp"
#include "core/setup/device_checks.hpp"
#include "core/setup/sizing.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

using verbs::Error;

static int remote_access(const TestConfig& c, const verbs::Device& dev, Role role) {
  // Only the remote access the operation needs: SEND tests open nothing.
  int acc = 0;
  const bool target = role == Role::Target || c.knobs.bidir;  // --bidir: each side is the other's target
  if (c.work.op == Op::Write && (target || c.work.mode == Mode::Lat)) {
    acc |= IBV_ACCESS_REMOTE_WRITE;
    if (fences_writes(c, dev)) acc |= IBV_ACCESS_REMOTE_READ;  // the writer's fence READs a byte back
  }
  if (c.work.op == Op::Read && target) acc |= IBV_ACCESS_REMOTE_READ;
  if (is_atomic(c.work.op) && target) acc |= IBV_ACCESS_REMOTE_ATOMIC;
  return acc;
}

uint64_t TestResources::size_buffers(uint64_t slot) {
  msg_stride = message_stride(cfg, slot);
  msg_slots = message_slots(cfg);
  slot_bytes = msg_stride * msg_slots;
  regions = qp_regions(cfg);
  validate_seen.assign(cfg.knobs.validate ? cfg.work.qps : 0, 0);
  return checked_buffer_bytes(cfg, msg_stride);
}

TestResources::TestResources(const verbs::Device& d, const GidEntry& g, const TestConfig& c, Role r, uint64_t slot,
                             const verbs::CompletionQueue* shared)
    : LoopResources(c, r, shared), dev(d), gid(g) {
  validate(cfg);
  check_device_limits(cfg, dev);
  const uint64_t bytes = size_buffers(slot);
  // auto asks for perftest's size first: the device's own limit is only probed (by
  // creating and destroying QPs, work that must not run beside a measurement) when
  // the device refuses that.
  inline_size = inline_limit(cfg, 65536);
  // READs (and atomics) in flight, as perftest's -o: the device's limit unless asked for fewer; the
  // client also lowers it to what the server can respond to (limit_reads).
  int dev_reads = std::min({255, dev.attr().max_qp_rd_atom, dev.attr().max_qp_init_rd_atom});
  rd_atomic = static_cast<uint8_t>(std::max(1, cfg.knobs.outs > 0 ? static_cast<int>(cfg.knobs.outs) : dev_reads));

  register_memory(bytes);
  open_window();
  fill_read_pattern();
  if (shared_cq == nullptr) {
    if (cfg.knobs.events) channel = verbs::CompletionChannel(dev);
    cq = verbs::CompletionQueue(dev, static_cast<int>(cq_depth_for(cfg)), channel.get());
  }
  create_qps();
  use_inline = cfg.work.size <= inline_size;
  sq.assign(cfg.work.qps, SendQueue{});
  for (SendQueue& s : sq) s.until_signal = effective_signal_every(cfg);
}

// The buffer and its regions: one MR, or one per QP region (--mr-per-qp); the SEND
// credit's words and the WRITE fence's word where the device needs them (iWARP).
void TestResources::register_memory(uint64_t bytes) {
  pd = verbs::ProtectionDomain(dev);
  mr = verbs::MemoryRegion(pd, bytes, IBV_ACCESS_LOCAL_WRITE, cfg.knobs.hugepages);
  if (cfg.knobs.mr_per_qp) {
    for (uint32_t q = 0; q < regions; ++q) {
      rx_mrs.push_back(verbs::MemoryRegion::over(pd, rx_region(q), slot_bytes, IBV_ACCESS_LOCAL_WRITE));
      tx_mrs.push_back(verbs::MemoryRegion::over(pd, tx_region(q), slot_bytes, IBV_ACCESS_LOCAL_WRITE));
    }
  }
  if (needs_send_credit(cfg, dev)) {
    // [this side's receive counts, a slot per QP][where its READs of the peer's land, a slot per QP]
    const size_t words = size_t{2} * cfg.work.qps * kCreditSlotWords;
    credit_words.reset(new uint64_t[words]());
    credit_mr = verbs::MemoryRegion::over(pd, reinterpret_cast<char*>(credit_words.get()), words * sizeof(uint64_t),
                                          IBV_ACCESS_LOCAL_WRITE);
    counts_receives = posts_receives(cfg, role);
    if (role == Role::Initiator || cfg.knobs.bidir) {
      // A shared receive queue's receives serve all of a thread's QPs: each gets its share.
      const Role peer = role == Role::Initiator ? Role::Target : Role::Initiator;
      send_credit = uses_srq(cfg, peer) ? cfg.knobs.rx_depth / cfg.work.qps : cfg.knobs.rx_depth;
    }
  }
  if (fences_writes(cfg, dev)) {
    fence_word.reset(new uint64_t[1]());
    fence_mr = verbs::MemoryRegion::over(pd, reinterpret_cast<char*>(fence_word.get()), sizeof(uint64_t),
                                         IBV_ACCESS_LOCAL_WRITE);
  }
}

// The point's QPs on its CQ (and SRQ), to INIT: the first one asks for the inline size
// `auto` wants, and only a refusal makes it probe the device's limit.
void TestResources::create_qps() {
  const verbs::CompletionQueue& qp_cq = completion_queue();
  verbs::QpCaps caps;
  caps.max_send_wr = cfg.knobs.tx_depth;
  caps.max_recv_wr = posts_receives(cfg, role) && !uses_srq(cfg, role) ? cfg.knobs.rx_depth : 1;
  if (uses_srq(cfg, role)) {
    srq = verbs::SharedReceiveQueue(pd, cfg.knobs.rx_depth);
    caps.srq = srq.get();
  }
  // Sized for the knob, not this point's message, so later sizes can go inline too.
  caps.max_inline = inline_size;
  caps.ud = is_ud(cfg);
  std::mt19937 rng(std::random_device{}());
  qps.reserve(cfg.work.qps);
  psn.reserve(cfg.work.qps);
  for (uint32_t i = 0; i < cfg.work.qps; ++i) {
    if (i == 0 && cfg.knobs.inline_size == kInlineAuto && inline_size > 0) {
      try {
        qps.emplace_back(pd, qp_cq, caps);
      } catch (const verbs::Error&) {
        inline_size = caps.max_inline = inline_limit(cfg, dev.max_inline());
        qps.emplace_back(pd, qp_cq, caps);
      }
    } else {
      qps.emplace_back(pd, qp_cq, caps);
    }
    if (caps.ud) qps.back().to_init_ud(dev.port());
    else qps.back().to_init(dev.port(), remote_access(cfg, dev, role) | (counts_receives ? IBV_ACCESS_REMOTE_READ : 0));
    psn.push_back(rng() & 0xffffff);
  }
  if (uses_srq(cfg, role)) {
    std::vector<uint32_t> qpns;
    for (const verbs::QueuePair& qp : qps) qpns.push_back(qp.qpn());
    qp_of = QpnTable(qpns);
  }
}

void TestResources::limit_reads(uint32_t peer_max_rd_atom) {
  if (cfg.knobs.outs == 0 && peer_max_rd_atom > 0 && peer_max_rd_atom < rd_atomic)
    rd_atomic = static_cast<uint8_t>(peer_max_rd_atom);
}

bool TestResources::can_serve(const TestConfig& next) const { return can_reuse(cfg, msg_stride, next); }

void TestResources::retarget(const TestConfig& next) {
  cfg = next;
  use_inline = cfg.work.size <= inline_size;
  std::memset(mr.data(), 0, regions * slot_bytes);
  open_window();
  fill_read_pattern();
}

void TestResources::fill_read_pattern() {
  if (!cfg.knobs.validate || cfg.work.op != Op::Read || role != Role::Target) return;
  for (uint32_t q = 0; q < regions; ++q) fill_pattern(rx_region(q), slot_bytes, q, 0);
}

void TestResources::open_window() {
  if (counts_receives && !credit_window)
    credit_window = verbs::MemoryRegion::over(pd, reinterpret_cast<char*>(receive_counts()),
                                              cfg.work.qps * kCreditSlotWords * sizeof(uint64_t),
                                              IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE);
  int acc = remote_access(cfg, dev, role);
  if (acc == 0) return;
  if (!cfg.knobs.mr_per_qp) {
    if (!window) window = verbs::MemoryRegion::over(pd, mr.data(), mr.size(), acc | IBV_ACCESS_LOCAL_WRITE);
  } else if (qp_windows.empty()) {
    for (uint32_t q = 0; q < regions; ++q)
      qp_windows.push_back(verbs::MemoryRegion::over(pd, rx_region(q), slot_bytes, acc | IBV_ACCESS_LOCAL_WRITE));
  }
}

void TestResources::set_remote(const Endpoint& peer) {
  remote = RemoteBuffer{peer.addr, peer.rkey, peer.rkeys, peer.credit_addr, peer.credit_rkey, peer.slot_bytes,
                        peer.regions};
  if (!remote.rkeys.empty() && remote.rkeys.size() != remote.regions)
    throw Error("peer sent " + std::to_string(remote.rkeys.size()) + " region keys for " + std::to_string(remote.regions) +
                " regions: run the same rdmasweep version on both sides");
}

Endpoint TestResources::local_endpoint() const {
  Endpoint e;
  e.lid = dev.port_attr().lid;
  e.gid = gid_to_string(gid.gid);
  e.mtu = static_cast<uint8_t>(dev.port_attr().active_mtu);
  e.rkey = window ? window.rkey() : 0;  // 0: this test grants the peer no access
  for (const verbs::MemoryRegion& w : qp_windows) e.rkeys.push_back(w.rkey());
  e.addr = reinterpret_cast<uint64_t>(mr.data());
  if (credit_window) {
    e.credit_addr = reinterpret_cast<uint64_t>(receive_counts());
    e.credit_rkey = credit_window.rkey();
  }
  e.slot_bytes = slot_bytes;
  e.regions = regions;
  for (size_t i = 0; i < qps.size(); ++i) {
    e.qpn.push_back(qps[i].qpn());
    e.psn.push_back(psn[i]);
  }
  return e;
}

verbs::PeerAddress TestResources::path_to(const Endpoint& peer) const {
  verbs::PeerAddress pa;
  pa.lid = peer.lid;
  pa.use_gid = dev.is_ethernet() || pa.lid == 0;
  if (!gid_from_string(peer.gid, &pa.gid)) throw Error("peer sent an invalid GID '" + peer.gid + "'");
  pa.sgid_index = static_cast<uint8_t>(gid.index);
  pa.mtu = path_mtu(static_cast<ibv_mtu>(std::min<int>(peer.mtu, dev.port_attr().active_mtu)));
  if (is_ud(cfg) && cfg.work.size > static_cast<uint64_t>(verbs::mtu_bytes(pa.mtu)))
    throw Error("--size " + std::to_string(cfg.work.size) + " is over the UD limit of " +
                std::to_string(verbs::mtu_bytes(pa.mtu)) + " bytes (the path MTU, the smaller of both ports' active "
                "MTUs): a UD message is one packet; lower --size");
  pa.traffic_class = static_cast<uint8_t>(cfg.knobs.tclass);
  pa.sl = static_cast<uint8_t>(cfg.knobs.sl);
  pa.flow_label = cfg.knobs.flow_label;
  return pa;
}

void TestResources::connect(const Endpoint& peer) {
  if (dev.is_iwarp()) throw ConfigError(dev.name() + ": " + refusal_text("iwarp-cm"));
  if (peer.qpn.size() != qps.size())
    throw Error("peer has " + std::to_string(peer.qpn.size()) + " QPs, this side " + std::to_string(qps.size()));
  if (peer.slot_bytes < slot_bytes || peer.regions != regions)
    throw Error("peer's buffer layout does not match this test: run the same rdmasweep version on both sides");
  verbs::PeerAddress pa = path_to(peer);
  ah.clear();
  peer_qpn.clear();
  for (size_t i = 0; i < qps.size(); ++i) {
    pa.qpn = peer.qpn[i];
    pa.psn = peer.psn[i];
    if (is_ud(cfg)) {
      // QP i sends to the peer's QP i: one address handle each, like an RC QP's path.
      qps[i].to_rts_ud(psn[i]);
      ah.emplace_back(pd, pa, dev.port());
      peer_qpn.push_back(peer.qpn[i]);
      continue;
    }
    qps[i].to_rtr(pa, dev.port(), rd_atomic);
    qps[i].to_rts(psn[i], rd_atomic, retry());
  }
  set_remote(peer);
  // Receives go up before the peer is told we are ready, so no SEND meets an empty queue.
  post_receives();
}

ibv_mtu TestResources::path_mtu(ibv_mtu path) const {
  if (cfg.knobs.mtu == 0) return path;
  const ibv_mtu want = verbs::mtu_enum(cfg.knobs.mtu);
  if (want > path)
    throw Error("--mtu " + std::to_string(cfg.knobs.mtu) + " is above the path's MTU of " +
                std::to_string(verbs::mtu_bytes(path)) + " bytes (the smaller of both ports' active MTUs): lower --mtu");
  return want;
}

void TestResources::post_receives() {
  if (!posts_receives(cfg, role)) return;
  // --validate: receive s has message buffer s of its region (message_slots >= rx_depth).
  const bool own = msg_slots > 1;
  const uint32_t length = static_cast<uint32_t>(own ? msg_stride : slot_bytes);
  if (uses_srq(cfg, role)) {
    ibv_sge sge{reinterpret_cast<uint64_t>(rx_region(0)), length, rx_lkey(0)};
    for (uint32_t s = 0; s < cfg.knobs.rx_depth; ++s) {
      if (own) sge.addr = reinterpret_cast<uint64_t>(rx_region(0) + s * msg_stride);
      ibv_recv_wr wr{};
      wr.wr_id = WrId::encode(0, s);
      wr.sg_list = &sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      verbs::check_rc(ibv_post_srq_recv(srq.get(), &wr, &bad), "ibv_post_srq_recv(receive " + std::to_string(s) + ")");
    }
    return;
  }
  for (uint32_t q = 0; q < qps.size(); ++q) {
    // The whole slot: a reused QP's receives fit every size of its sweep (and UD's GRH).
    ibv_sge sge{reinterpret_cast<uint64_t>(rx_region(q)), length, rx_lkey(q)};
    for (uint32_t s = 0; s < cfg.knobs.rx_depth; ++s) {
      if (own) sge.addr = reinterpret_cast<uint64_t>(rx_region(q) + s * msg_stride);
      ibv_recv_wr wr{};
      wr.wr_id = WrId::encode(q, s);
      wr.sg_list = &sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      verbs::check_rc(ibv_post_recv(qps[q].get(), &wr, &bad),
                      "ibv_post_recv(QP " + std::to_string(q) + ", receive " + std::to_string(s) + ")");
    }
  }
}


}  // namespace rdmasweep
