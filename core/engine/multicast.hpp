// UD multicast (`rdmasweep mesh --pattern multicast`): one sender, every receiver a UD
// QP attached to one group joined through RDMA-CM. Each datagram carries its point's
// tag, its sequence number and its send time (CLOCK_MONOTONIC), so a receiver counts
// exactly what arrived of each point and, on the sender's host, how long it took.
// Loss is possible (UD): nothing is retried, everything is counted.
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.hpp"
#include "core/config/multicast_point.hpp"
#include "core/measure/histogram.hpp"
#include "core/verbs/address_handle.hpp"
#include "core/verbs/completion_queue.hpp"
#include "core/verbs/gid.hpp"
#include "core/verbs/memory_region.hpp"
#include "core/verbs/multicast.hpp"

namespace rdmasweep {

// CLOCK_MONOTONIC in ns: what each datagram carries as its send time.
uint64_t monotonic_ns();

// The address RDMA-CM binds the join to: the one in this GID (IPv4-mapped or IPv6).
sockaddr_storage gid_address(const ibv_gid& gid);

// The sender's wr_id: its point's tag beside the count of datagrams a completion
// vouches for, so a late completion of an aborted earlier point (the mesh carries on
// after a sender error) is told apart and never counted as this point's.
struct McastWrId {
  static constexpr unsigned kCountBits = 40;
  static constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
  static constexpr uint64_t encode(uint32_t tag, uint64_t count) {
    return (static_cast<uint64_t>(tag & 0xffffff) << kCountBits) | (count & kCountMask);
  }
  // Raises `done` to what a completion of point `tag` says was sent; false (nothing
  // taken) for another point's.
  static bool take(uint64_t wr_id, uint32_t tag, uint64_t& done) {
    if ((wr_id >> kCountBits) != (tag & 0xffffff)) return false;
    done = std::max(done, wr_id & kCountMask);
    return true;
  }
};

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
  Histogram hist;                // send to arrival, one-way (when recorded)
  uint64_t before_send = 0;      // arrivals the clock offset put before their send (recorded as 0)
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
  // `latency`: record send to arrival, taking this host's CLOCK_MONOTONIC minus the
  // sender's as `offset_ns` (0 on the sender's host; across hosts an estimate).
  // Throws after `timeout` with neither a datagram nor the total.
  McastReceived receive(const TestConfig& c, uint32_t tag, const std::atomic<int64_t>& expected, bool latency,
                        const std::atomic<bool>& stop, int64_t offset_ns = 0);

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

// One point's reception on a thread of its own (McastEnd::receive busy-polls), while
// the caller waits for the sender's count: expect() gives it, stop() gives up, finish()
// waits for the receiver. Destroying it unfinished stops and joins the thread.
class McastReception {
 public:
  McastReception(McastEnd& end, const TestConfig& c, uint32_t tag, bool latency, int64_t offset_ns = 0)
      : thread_([this, &end, c, tag, latency, offset_ns] {
          try {
            got_ = end.receive(c, tag, expected_, latency, stop_, offset_ns);
          } catch (const std::exception& e) {
            error_ = e.what();
          }
        }) {}
  ~McastReception() {
    stop();
    if (thread_.joinable()) thread_.join();
  }
  McastReception(const McastReception&) = delete;
  McastReception& operator=(const McastReception&) = delete;

  void expect(uint64_t sent) {
    expected_.store(static_cast<int64_t>(std::min<uint64_t>(sent, INT64_MAX)), std::memory_order_release);
  }
  void stop() { stop_.store(true); }
  // Waits for the receiver; what arrived, or its failure in error().
  const McastReceived& finish() {
    if (thread_.joinable()) thread_.join();
    return got_;
  }
  const std::string& error() const { return error_; }

 private:
  std::atomic<int64_t> expected_{-1};
  std::atomic<bool> stop_{false};
  McastReceived got_;
  std::string error_;
  std::thread thread_;  // last: it starts once the rest exists
};

}  // namespace rdmasweep
