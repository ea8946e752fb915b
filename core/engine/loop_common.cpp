#include "core/engine/loop_common.hpp"

#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <thread>

namespace rdmasweep {

uint64_t LoopStats::messages() const { return std::accumulate(per_qp.begin(), per_qp.end(), uint64_t{0}); }

std::vector<double> interval_rates(const Timeline& tl) {
  std::vector<double> out;
  double t0 = 0;
  uint64_t m0 = 0;
  for (size_t i = 0; i < tl.t.size() && i < tl.messages.size(); ++i) {
    const double dt = tl.t[i] - t0;
    const bool last = i + 1 == tl.t.size();
    if (dt > 0 && !(last && dt < tl.interval / 2)) out.push_back(static_cast<double>(tl.messages[i] - m0) / dt);
    t0 = tl.t[i];
    m0 = tl.messages[i];
  }
  return out;
}

double loop_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

namespace detail {

ibv_wr_opcode opcode_of(Op op) {
  switch (op) {
    case Op::Send: return IBV_WR_SEND;
    case Op::Write: return IBV_WR_RDMA_WRITE;
    case Op::Read: return IBV_WR_RDMA_READ;
    case Op::Cas: return IBV_WR_ATOMIC_CMP_AND_SWP;
    case Op::Faa: return IBV_WR_ATOMIC_FETCH_AND_ADD;
  }
  return IBV_WR_SEND;
}

SendWrs::SendWrs(uint32_t nqp, uint32_t post_list, ibv_wr_opcode opcode, int base_flags)
    : per_qp(post_list), stamped_at(nqp, 0) {
  size_t n = static_cast<size_t>(nqp) * post_list;
  wr.assign(n, ibv_send_wr{});
  sge.assign(n, ibv_sge{});
  for (size_t i = 0; i < n; ++i) {
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].opcode = opcode;
    wr[i].send_flags = static_cast<unsigned>(base_flags);
    wr[i].next = (i + 1) % post_list != 0 ? &wr[i + 1] : nullptr;
  }
}

void SendWrs::set_buffers(uint32_t qp, uint64_t local, uint32_t length, uint32_t lkey, uint64_t remote, uint32_t rkey) {
  for (uint32_t k = 0; k < per_qp; ++k) {
    size_t i = static_cast<size_t>(qp) * per_qp + k;
    sge[i] = ibv_sge{local, length, lkey};
    if (wr[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
      wr[i].wr.atomic = {remote, /*compare_add=*/1, /*swap=*/0, rkey};  // each adds 1: the total counts them
    } else if (wr[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
      wr[i].wr.atomic = {remote, /*compare_add=*/0, /*swap=*/1, rkey};  // the first swaps 0 for 1, the rest compare
    } else if (wr[i].opcode != IBV_WR_SEND) {
      wr[i].wr.rdma.remote_addr = remote;
      wr[i].wr.rdma.rkey = rkey;
    }
  }
}

void SendWrs::set_datagram(uint32_t qp, ibv_ah* ah, uint32_t remote_qpn, uint32_t qkey) {
  for (uint32_t k = 0; k < per_qp; ++k) {
    ibv_send_wr& w = wr[static_cast<size_t>(qp) * per_qp + k];
    w.wr.ud.ah = ah;
    w.wr.ud.remote_qpn = remote_qpn;
    w.wr.ud.remote_qkey = qkey;
  }
}

SendWrs make_send_wrs(const LoopResources& r, uint32_t post_list, ibv_wr_opcode opcode, int base_flags, bool echo) {
  SendWrs w(static_cast<uint32_t>(r.qps.size()), post_list, opcode, base_flags);
  for (uint32_t q = 0; q < r.qps.size(); ++q) {
    // READ lands in our rx region; SEND and WRITE go out of our tx region, and the atomics'
    // fetched values land there (with --bidir the peer's atomics count in our rx region).
    const bool into_rx = opcode == IBV_WR_RDMA_READ || echo;
    char* local = into_rx ? r.rx_region(q) : r.tx_region(q);
    w.set_buffers(q, reinterpret_cast<uint64_t>(local), static_cast<uint32_t>(r.cfg.work.size),
                  into_rx ? r.rx_lkey(q) : r.tx_lkey(q), r.remote.rx_region(q), r.remote.rkey_of(q));
    if (q < r.ah.size()) w.set_datagram(q, r.ah[q].get(), r.peer_qpn[q], verbs::kUdQkey);
  }
  return w;
}

Receives::Receives(const LoopResources& r)
    : r_(r), srq_(uses_srq(r.cfg, r.role) ? r.srq.get() : nullptr),
      credit_(r.receive_counts()) {
  size_t n = srq_ ? 1 : r.qps.size();
  wr_.assign(n, ibv_recv_wr{});
  sge_.assign(n, ibv_sge{});
  for (size_t i = 0; i < n; ++i) {
    sge_[i] = ibv_sge{reinterpret_cast<uint64_t>(r.rx_region(static_cast<uint32_t>(i))), static_cast<uint32_t>(r.slot_bytes),
                      r.rx_lkey(static_cast<uint32_t>(i))};
    wr_[i].sg_list = &sge_[i];
    wr_[i].num_sge = 1;
  }
  for (const verbs::QueuePair& qp : r.qps) qp_.push_back(qp.get());
}

int Poller::wait_and_poll(int n, ibv_wc* wc) {
  verbs::check_rc(ibv_req_notify_cq(cq_, 0), "ibv_req_notify_cq");
  int got = ibv_poll_cq(cq_, n, wc);
  if (got != 0) return got;
  pollfd p{channel_->fd, POLLIN, 0};
  int rc = ::poll(&p, 1, 100);
  if (rc == 1) {
    ibv_cq* ev_cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(channel_, &ev_cq, &ctx) == 0 && ++unacked_ >= 64) {
      ibv_ack_cq_events(cq_, unacked_);
      unacked_ = 0;
    }
  } else {
    watch_.check();  // a sleeping loop still notices a dead peer or Ctrl-C
  }
  return ibv_poll_cq(cq_, n, wc);
}

void Receives::unknown_qp(const ibv_wc& wc) const {
  throw verbs::Error("receive completion from the shared receive queue names qp_num " + std::to_string(wc.qp_num) +
                     ", which is none of this test's QPs");
}

void fail_completion(const ibv_wc& wc, const char* posted) {
  if (WrId::is_credit(wc.wr_id))
    throw verbs::CompletionError(
        verbs::completion_error(wc, WrId::credit_qp(wc.wr_id), "RDMA_READ of the receiver's credit count"), wc.status);
  throw verbs::CompletionError(verbs::completion_error(wc, WrId::qp(wc.wr_id), posted), wc.status);
}

const char* posted_name(Op op) {
  switch (op) {
    case Op::Send: return "SEND";
    case Op::Write: return "RDMA_WRITE";
    case Op::Read: return "RDMA_READ";
    case Op::Cas: return "ATOMIC_CMP_AND_SWP";
    case Op::Faa: return "ATOMIC_FETCH_AND_ADD";
  }
  return "?";
}

void fail_post(int rc, const char* what, uint32_t qp) {
  verbs::check_rc(rc, std::string(what) + "(QP " + std::to_string(qp) + ")");
  throw verbs::Error(what);  // unreachable: rc != 0 here
}

void fail_poll(int rc) { throw verbs::Error("ibv_poll_cq failed (" + std::to_string(rc) + ")"); }

static std::string wait_text(std::chrono::milliseconds t) {
  return t.count() % 1000 == 0 ? std::to_string(t.count() / 1000) + " s" : std::to_string(t.count()) + " ms";
}

void IdleWatch::check() {
  if (!draining_ && interrupted()) throw RunAborted("interrupted");
  if (ctl_.on_idle) ctl_.on_idle();
  Clock::time_point now = Clock::now();
  if (progressed_) {
    last_progress_ = now;
    progressed_ = false;
    return;
  }
  if (ctl_.settled != nullptr && ctl_.settled->load(std::memory_order_acquire) &&
      now - last_progress_ > ctl_.settle_timeout)
    throw RunAborted("no completion for " + wait_text(ctl_.settle_timeout) +
                     " with the peer's DONE in: messages it counted as sent never arrived here (a device that "
                     "completes work requests without moving data, or a broken path; raise --timeout if it is just slow)");
  if (now - last_progress_ > ctl_.idle_timeout)
    throw RunAborted("no completion for " + wait_text(ctl_.idle_timeout) + ": " + ctl_.idle_hint +
                     " (raise --timeout if the link is just slow)");
}

}  // namespace detail
}  // namespace rdmasweep

namespace rdmasweep {

SharedCq::SharedCq(ibv_cq* cq, const std::vector<uint32_t>& qpns, const std::vector<uint32_t>& lanes, uint32_t nlanes,
                   uint32_t depth)
    : cq_(cq), index_(qpns), lane_(lanes), box_(nlanes) {
  for (Mailbox& m : box_) m.ring.resize(depth);
}

uint64_t SharedCq::mailbox_bytes() const {
  uint64_t bytes = 0;
  for (const Mailbox& m : box_) bytes += m.ring.size() * sizeof(ibv_wc);
  return bytes;
}

// Thread t's completions that t has not taken yet are at most what t's own QPs can
// have outstanding (thread_cq_entries: signaled sends, posted receives): a send-queue
// slot or a receive is given back only when t itself takes its completion, so t
// never has more in flight, whatever the other threads hold. Its mailbox holds some
// of those. Every knob that bound depends on shapes the resources (same_shape), so a
// point reusing them has the same one. Plus one: a QP in error flushes its unsignaled
// sends too, past the bound; its thread stops at the first failure, so the mailbox
// keeps that one and drops what follows (give).
uint32_t mailbox_depth(const TestConfig& cfg) {
  return static_cast<uint32_t>(std::min<uint64_t>({thread_cq_entries(cfg), cq_depth_for(cfg), UINT32_MAX - 1})) + 1;
}

int SharedCq::take(Mailbox& m, int n, ibv_wc* out) {
  lock(m);
  const uint32_t cap = static_cast<uint32_t>(m.ring.size());
  uint32_t k = std::min<uint32_t>(m.count.load(std::memory_order_relaxed), static_cast<uint32_t>(n));
  for (uint32_t i = 0; i < k; ++i) out[i] = m.ring[(m.head + i) % cap];
  m.head = (m.head + k) % cap;
  m.count.fetch_sub(k, std::memory_order_relaxed);
  unlock(m);
  return static_cast<int>(k);
}

void SharedCq::give(uint32_t lane, const ibv_wc& wc) {
  Mailbox& m = box_[lane];
  lock(m);
  if (m.failed) {  // its thread stops at the failure it holds and never takes this
    unlock(m);
    return;
  }
  const uint32_t cap = static_cast<uint32_t>(m.ring.size());
  const uint32_t c = m.count.load(std::memory_order_relaxed);
  if (c == cap) {
    unlock(m);
    // Cannot happen while the CQ is sized for everything outstanding (mailbox_depth).
    throw verbs::Error("shared CQ: thread " + std::to_string(lane) + "'s mailbox is full (" + std::to_string(cap) +
                       " completions): the CQ holds more than it was sized for");
  }
  m.ring[(m.head + c) % cap] = wc;
  m.failed = wc.status != IBV_WC_SUCCESS;
  m.count.store(c + 1, std::memory_order_release);
  unlock(m);
}

int SharedCq::poll(uint32_t lane, int n, ibv_wc* out) {
  // Yields now and then: with more threads than cores a spinner can hold up the poller.
  for (uint32_t spins = 1; polling_.test_and_set(std::memory_order_acquire); ++spins)
    if ((spins & 63) == 0) std::this_thread::yield();
  try {
    const int got = poll_locked(lane, n, out);
    polling_.clear(std::memory_order_release);
    return got;
  } catch (...) {
    polling_.clear(std::memory_order_release);
    throw;
  }
}

// Under `polling_`: the mailbox is emptied (up to n) before the CQ is polled, so what
// this thread polls for itself comes after everything handed to it before.
int SharedCq::poll_locked(uint32_t lane, int n, ibv_wc* out) {
  Mailbox& mine = box_[lane];
  int got = mine.count.load(std::memory_order_acquire) > 0 ? take(mine, n, out) : 0;
  if (got == n) return got;
  // Polled into the caller's buffer behind what the mailbox gave, then compacted in
  // place (got never passes i): the whole `n` asked for, whatever the point's batch.
  ibv_wc* const fresh = out + got;
  int polled = ibv_poll_cq(cq_, n - got, fresh);
  if (polled < 0) return polled;
  for (int i = 0; i < polled; ++i) {
    const ibv_wc wc = fresh[i];
    uint32_t at = index_.find(wc.qp_num);
    if (at == QpnTable::kMissing)
      throw verbs::Error("shared CQ: a completion names qp_num " + std::to_string(wc.qp_num) + ", none of this test's QPs");
    if (lane_[at] == lane)
      out[got++] = wc;
    else
      give(lane_[at], wc);
  }
  return got;
}

}  // namespace rdmasweep
