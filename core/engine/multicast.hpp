// UD multicast (`rdmasweep mesh --pattern multicast`): one sender, every receiver a UD
// QP attached to one group joined through RDMA-CM. Each datagram carries its point's
// tag, its sequence number and its send time (CLOCK_MONOTONIC), so a receiver counts
// exactly what arrived of each point and, on the sender's host, how long it took.
// Loss is possible (UD): nothing is retried, everything is counted.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.hpp"
#include "core/measure/histogram.hpp"
#include "core/verbs/address_handle.hpp"
#include "core/verbs/completion_queue.hpp"
#include "core/verbs/gid.hpp"
#include "core/verbs/memory_region.hpp"
#include "core/verbs/multicast.hpp"

namespace rdmasweep {

constexpr uint32_t kMcastHeaderBytes = 16;  // tag, sequence, send time: the smallest size
constexpr uint64_t kMcastDefaultSize = 1024;

// Throws ConfigError unless `c` is a point multicast runs: SEND, counted (--iters), at
// least kMcastHeaderBytes, one QP and one thread.
void check_multicast_point(const TestConfig& c);

// True when `s` is a numeric IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address.
bool is_multicast_address(const std::string& s);

// The address RDMA-CM binds the join to: the one in this GID (IPv4-mapped or IPv6).
sockaddr_storage gid_address(const ibv_gid& gid);

struct McastSent {
  uint64_t sent = 0;       // warm-up included
  uint64_t measured = 0;   // past warm-up
  double seconds = 0;      // first measured post to the last completion
  double cpu_seconds = 0;  // the sending thread's, over the same window
};

// A receiver's window over its measured arrivals: the first opens it, the last closes
// it, so it spans N-1 gaps and counts the N-1 arrivals after the first (N of them
// over those gaps would overstate the rate by N/(N-1)).
struct ArrivalWindow {
  uint64_t first_ns = 0, last_ns = 0, arrivals = 0;
  void add(uint64_t ns) {
    if (arrivals++ == 0) first_ns = ns;
    last_ns = ns;
  }
  uint64_t counted() const { return arrivals > 1 ? arrivals - 1 : 0; }
  double seconds() const { return arrivals > 1 ? static_cast<double>(last_ns - first_ns) / 1e9 : 0; }
};

struct McastReceived {
  uint64_t received = 0;         // this point's datagrams, warm-up included
  uint64_t warmup_received = 0;
  uint64_t measured = 0;         // past the warm-up
  uint64_t late = 0;             // from an earlier point, arrived during this one
  uint64_t windowed = 0;         // measured arrivals after the first: what `seconds` covers
  double seconds = 0;            // first to last measured arrival
  double cpu_seconds = 0;        // the receiving thread's, over the whole call
  Histogram hist;                // send to arrival, one-way (same host only)
};

class McastEnd {
 public:
  // Joins `group` on `dev` (port and GID of `gid`); a receiver's QP is attached and
  // its receives posted before this returns. Sized for the largest of `points`.
  McastEnd(const verbs::Device& dev, const GidEntry& gid, const std::string& group, bool receiver,
           const std::vector<TestConfig>& points, std::chrono::milliseconds timeout);
  ~McastEnd();

  // Sends point `tag`'s warm-up and measured datagrams, up to tx_depth in flight (one
  // at a time in latency mode). Throws on a failed completion or `timeout` of none.
  McastSent send(const TestConfig& c, uint32_t tag, const std::atomic<bool>& stop);
  // Takes point `tag`'s datagrams until `expected` of them (-1 while the sender has not
  // said) arrived, or 250 ms after it is known with nothing more, or until `stop`.
  // `same_clock`: the sender's CLOCK_MONOTONIC is ours (same host): latency is recorded.
  // Throws after `timeout` with neither a datagram nor the total.
  McastReceived receive(const TestConfig& c, uint32_t tag, const std::atomic<int64_t>& expected, bool same_clock,
                        const std::atomic<bool>& stop);

 private:
  void post_receive(uint32_t slot);

  std::chrono::milliseconds timeout_;
  verbs::ProtectionDomain pd_;
  verbs::CompletionQueue cq_;
  verbs::QueuePair qp_;
  verbs::MemoryRegion mr_;
  uint32_t slot_bytes_ = 0, slots_ = 0;
  verbs::CmChannel ch_;
  std::unique_ptr<verbs::McastMembership> join_;
  std::unique_ptr<verbs::McastAttachment> attach_;
  verbs::AddressHandle ah_;
};

}  // namespace rdmasweep
