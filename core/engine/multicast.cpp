#include "core/engine/multicast.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include "core/engine/loop_common.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

// A datagram's first kMcastHeaderBytes (the rest of the payload is left as it is).
struct Header {
  uint32_t tag;
  uint32_t seq;
  uint64_t sent_ns;
};
static_assert(sizeof(Header) == kMcastHeaderBytes);

uint32_t max_of(const std::vector<TestConfig>& points, uint64_t (*f)(const TestConfig&)) {
  uint64_t m = 1;
  for (const TestConfig& c : points) m = std::max(m, f(c));
  return static_cast<uint32_t>(m);
}

std::string seconds(std::chrono::milliseconds t) { return verbs::seconds_text(t); }

}  // namespace

sockaddr_storage gid_address(const ibv_gid& gid) {
  sockaddr_storage ss{};
  if (is_ipv4_mapped(gid)) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    std::memcpy(&a->sin_addr, gid.raw + 12, 4);
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    std::memcpy(&a->sin6_addr, gid.raw, 16);
  }
  return ss;
}

McastEnd::McastEnd(const verbs::Device& dev, const GidEntry& gid, const std::string& group, bool receiver,
                   const std::vector<TestConfig>& points, std::chrono::milliseconds timeout)
    : timeout_(timeout), pd_(dev) {
  const uint32_t size = max_of(points, [](const TestConfig& c) -> uint64_t { return c.work.size; });
  const int mtu = verbs::mtu_bytes(dev.port_attr().active_mtu);
  if (size > static_cast<uint32_t>(mtu))
    throw verbs::Error("multicast: --size " + std::to_string(size) + " is over the port's active MTU (" +
                       std::to_string(mtu) + " bytes): a UD datagram is one packet; give --size " +
                       std::to_string(mtu) + " or less");
  const uint32_t depth = receiver ? max_of(points, [](const TestConfig& c) -> uint64_t { return c.knobs.rx_depth; })
                                  : max_of(points, [](const TestConfig& c) -> uint64_t { return c.knobs.tx_depth; });
  cq_ = verbs::CompletionQueue(dev, static_cast<int>(depth));
  verbs::QpCaps caps;
  caps.ud = true;
  caps.max_send_wr = receiver ? 1 : depth;
  caps.max_recv_wr = receiver ? depth : 1;
  qp_ = verbs::QueuePair(pd_, cq_, caps);
  // A receive holds the GRH before the payload.
  slot_bytes_ = size + (receiver ? kUdGrhBytes : 0);
  slots_ = depth;
  mr_ = verbs::MemoryRegion(pd_, size_t{slot_bytes_} * slots_, IBV_ACCESS_LOCAL_WRITE);
  join_ = std::make_unique<verbs::McastMembership>(ch_, gid_address(gid.gid), group, timeout);
  if (join_->device_name() != dev.name())
    throw verbs::Error("multicast: RDMA-CM joined " + group + " on " + join_->device_name() + ", not on " +
                       dev.name() + " (give --device the RDMA device of the interface routing to the group)");
  qp_.to_init_ud(dev.port(), join_->qkey());
  qp_.to_rts_ud(0);
  if (receiver) {
    attach_ = std::make_unique<verbs::McastAttachment>(qp_, join_->mgid(), join_->mlid());
    for (uint32_t s = 0; s < slots_; ++s) post_receive(s);
  } else {
    ah_ = verbs::AddressHandle(pd_, join_->ah_attr(), "the address handle of multicast group " + group);
  }
}

McastEnd::~McastEnd() = default;

void McastEnd::post_receive(uint32_t slot) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(mr_.data() + size_t{slot} * slot_bytes_), slot_bytes_, mr_.lkey()};
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_.get(), &wr, &bad); rc != 0)
    throw verbs::Error("ibv_post_recv(multicast receiver): " + std::string(std::strerror(rc)), rc);
}

McastSent McastEnd::send(const TestConfig& c, uint32_t tag, const std::atomic<bool>& stop) {
  const uint64_t warmup = c.work.warmup, total = warmup + c.work.iters;
  // Latency: one datagram at a time, each signaled; bandwidth: up to tx_depth in flight.
  const uint64_t depth = c.work.mode == Mode::Lat ? 1 : std::min<uint64_t>(c.knobs.tx_depth, slots_);
  const uint64_t every = std::max<uint64_t>(1, std::min<uint64_t>(c.knobs.signal_every, depth));
  const uint32_t size = static_cast<uint32_t>(c.work.size);
  const bool inl = size <= qp_.max_inline();
  ibv_sge sge{0, size, mr_.lkey()};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.wr.ud.ah = ah_.get();
  wr.wr.ud.remote_qpn = 0xffffff;  // the multicast QPN
  wr.wr.ud.remote_qkey = join_->qkey();
  ibv_wc wc[16];
  McastSent out;
  uint64_t posted = 0, done = 0, t0 = 0;
  double cpu0 = 0;
  auto last = std::chrono::steady_clock::now();
  while (done < total && !stop.load(std::memory_order_relaxed)) {
    while (posted < total && posted - done < depth) {
      if (posted == warmup) {
        t0 = monotonic_ns();
        cpu0 = loop_cpu_seconds();
      }
      char* p = mr_.data() + (posted % slots_) * slot_bytes_;
      const Header h{tag, static_cast<uint32_t>(posted), monotonic_ns()};
      std::memcpy(p, &h, sizeof h);
      sge.addr = reinterpret_cast<uintptr_t>(p);
      wr.wr_id = McastWrId::encode(tag, posted + 1);  // a completion says every datagram up to it was sent
      wr.send_flags = ((posted + 1) % every == 0 || posted + 1 == total ? IBV_SEND_SIGNALED : 0) |
                      (inl ? IBV_SEND_INLINE : 0);
      ibv_send_wr* bad = nullptr;
      if (int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0)
        throw verbs::Error("ibv_post_send(multicast): " + std::string(std::strerror(rc)), rc);
      ++posted;
    }
    const int n = ibv_poll_cq(cq_.get(), 16, wc);
    if (n < 0) throw verbs::Error("ibv_poll_cq(multicast sender) failed");
    for (int i = 0; i < n; ++i) {
      if (!McastWrId::take(wc[i].wr_id, tag, done)) continue;  // an earlier point's, late
      if (wc[i].status != IBV_WC_SUCCESS) throw verbs::Error(verbs::completion_error(wc[i], 0, "multicast SEND"));
    }
    const auto now = std::chrono::steady_clock::now();
    if (n > 0) last = now;
    else if (now - last > timeout_)
      throw verbs::Error("multicast sender: no send completion within " + seconds(timeout_));
  }
  out.sent = done;
  out.measured = done > warmup ? done - warmup : 0;
  if (t0 != 0) {
    out.seconds = static_cast<double>(monotonic_ns() - t0) / 1e9;
    out.cpu_seconds = loop_cpu_seconds() - cpu0;
  }
  return out;
}

McastReceived McastEnd::receive(const TestConfig& c, uint32_t tag, const std::atomic<int64_t>& expected,
                                bool latency, const std::atomic<bool>& stop, int64_t offset_ns) {
  const uint64_t warmup = c.work.warmup;
  const auto quiet = std::chrono::milliseconds(250);
  const double cpu0 = loop_cpu_seconds();
  ibv_wc wc[16];
  McastReceived out;
  ArrivalWindow window;
  auto last = std::chrono::steady_clock::now();
  auto known_at = last;
  bool known = false;
  while (!stop.load(std::memory_order_relaxed)) {
    const int n = ibv_poll_cq(cq_.get(), 16, wc);
    if (n < 0) throw verbs::Error("ibv_poll_cq(multicast receiver) failed");
    const uint64_t now_ns = n > 0 ? monotonic_ns() : 0;
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) throw verbs::Error(verbs::completion_error(wc[i], 0, "multicast RECV"));
      const uint32_t slot = static_cast<uint32_t>(wc[i].wr_id);
      Header h;
      std::memcpy(&h, mr_.data() + size_t{slot} * slot_bytes_ + kUdGrhBytes, sizeof h);
      post_receive(slot);
      if (h.tag != tag) {
        ++out.late;
        continue;
      }
      ++out.received;
      if (h.seq < warmup) {
        ++out.warmup_received;
        continue;
      }
      ++out.measured;
      window.add(now_ns);
      if (latency) {
        // The send time in this host's clock; an offset estimated across hosts can put
        // an arrival a little before it (within the estimate's uncertainty).
        const int64_t d = static_cast<int64_t>(now_ns - h.sent_ns) - offset_ns;
        if (d < 0) ++out.before_send;
        out.hist.record(d > 0 ? static_cast<uint64_t>(d) : 0);
      }
    }
    const int64_t total = expected.load(std::memory_order_acquire);
    if (total >= 0 && out.received >= static_cast<uint64_t>(total)) break;
    const auto now = std::chrono::steady_clock::now();
    if (n > 0) last = now;
    if (total >= 0 && !known) {
      known = true;
      known_at = now;
    }
    if (known && now - std::max(last, known_at) > quiet) break;  // the rest was lost
    if (!known && now - last > timeout_)
      throw verbs::Error("multicast receiver: neither a datagram nor the sender's count within " + seconds(timeout_));
  }
  out.windowed = window.counted();
  out.seconds = window.seconds();
  out.cpu_seconds = loop_cpu_seconds() - cpu0;
  return out;
}

}  // namespace rdmasweep
