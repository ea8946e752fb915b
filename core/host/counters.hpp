// The port's own account of a point: its counters read before and after, outside the
// measured window (the hot loop never touches them): from sysfs, the driver's
// hw_counters through RDMA netlink where the kernel serves them (core/host/nldev_stats.hpp).
//
// Which counters exist depends on the driver and kernel, so the directories are
// listed, never assumed: ports/P/hw_counters/* (driver counters: rxe's sent_pkts,
// completer_retry_err, ...; mlx5's out_of_sequence, np_cnp_sent, ...) and
// ports/P/counters/* (InfiniBand PortCounters; port_xmit_data and port_rcv_data count
// 4-byte words). A normalized view maps them onto names that mean the same on every
// driver (counter_map()).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace rdmasweep {

using CounterValues = std::map<std::string, uint64_t>;  // raw driver name -> value

class PortCounters {
 public:
  // The counter files of DEVICE's port PORT under `root` (sysfs's class directory).
  static constexpr const char* kSysfsRoot = "/sys/class/infiniband";
  static PortCounters open(const std::string& device, unsigned port, const std::string& root = kSysfsRoot);

  bool available() const { return !files_.empty(); }
  // Where they were looked for (for the "no counters" note).
  const std::string& where() const { return where_; }
  // Every counter now. A file that cannot be read (some need privileges) is skipped.
  CounterValues read() const;
  // How long after the last packet a read is sure to see it. Zero when the kernel's
  // RDMA netlink serves the hw counters (asked of the driver on every read, as
  // counters/ are) or the port has none. Otherwise sysfs serves them from a cache
  // refreshed at most once per lifespan (hw_counters/lifespan, in ms; 10 where the
  // file is missing), counted in jiffies: the lifespan plus one jiffy at HZ=100 (the
  // coarsest tick).
  std::chrono::milliseconds settle() const { return nl_device_ >= 0 ? std::chrono::milliseconds(0) : sysfs_settle_; }
  // Every counter once traffic that ended at `last_traffic` is in them: waits only for
  // what remains of settle() since then (outside every measured window).
  CounterValues read_after_traffic(std::chrono::steady_clock::time_point last_traffic) const;
  CounterValues read_after_traffic() const { return read_after_traffic(std::chrono::steady_clock::now()); }
  // The raw names, sorted (what `rdmasweep devices` lists).
  std::vector<std::string> names() const;

 private:
  struct File {
    std::string name, path;
    std::string raw;  // the file's own name (`name` may say its directory too)
    bool hw;          // in hw_counters/
  };
  // The hw counters through netlink, when it serves them and answers now.
  std::optional<CounterValues> read_netlink() const;
  // Every file's counter, the hw ones from `hw` where given.
  CounterValues read_files(const std::optional<CounterValues>& hw) const;

  std::vector<File> files_;
  std::string where_;
  std::chrono::milliseconds sysfs_settle_{0};  // hw_counters/' cache: lifespan + a jiffy
  int nl_device_ = -1;  // the device's kernel index when netlink serves its hw counters
  unsigned port_ = 0;
};

// after - before for every counter present in both (unsigned: a wrapped counter still
// gives its increment).
CounterValues counter_delta(const CounterValues& before, const CounterValues& after);

// One normalized counter: the sum of whichever of its raw counters the driver has,
// each multiplied by its scale (port_xmit_data counts 4-byte words).
struct NormalizedCounter {
  const char* name;
  const char* meaning;
  struct Raw {
    const char* name;
    uint64_t scale;
  };
  std::vector<Raw> raw;
  bool anomaly;  // non-zero during a point flags it
};
const std::vector<NormalizedCounter>& counter_map();

// The normalized view of a delta: only the counters at least one raw name fed.
nlohmann::json normalize_counters(const CounterValues& delta);
// The normalized counters that flag a point ("retransmits", "rnr_naks", ...), with
// their values, e.g. "retransmits=12 (server)"; `side` names whose counters these are.
std::vector<std::string> counter_anomalies(const nlohmann::json& normalized, const std::string& side);

}  // namespace rdmasweep
