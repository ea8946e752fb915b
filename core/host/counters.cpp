#include "core/host/counters.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/host/nldev_stats.hpp"
#include "core/verbs/device.hpp"

namespace rdmasweep {

namespace fs = std::filesystem;

// RDMA_HW_STATS_DEFAULT_LIFESPAN, for a kernel without the lifespan file.
constexpr std::chrono::milliseconds kDefaultLifespan{10};
// One jiffy at HZ=100: the cache's age is counted in whole jiffies.
constexpr std::chrono::milliseconds kCoarsestJiffy{10};

// PortCounters::settle() for the hw_counters directory `dir`: none without counters in it.
static std::chrono::milliseconds hw_counters_settle(const fs::path& dir) {
  std::error_code ec;
  bool any = false;
  for (const auto& e : fs::directory_iterator(dir, ec)) any |= e.path().filename() != "lifespan";
  if (!any) return std::chrono::milliseconds(0);
  std::ifstream in(dir / "lifespan");
  long ms = 0;
  if (!(in >> ms) || ms < 0) return kDefaultLifespan + kCoarsestJiffy;
  return std::chrono::milliseconds(ms) + kCoarsestJiffy;
}

PortCounters PortCounters::open(const std::string& device, unsigned port, const std::string& root) {
  PortCounters pc;
  const fs::path base = fs::path(root) / device / "ports" / std::to_string(port);
  pc.where_ = (base / "hw_counters").string() + ", " + (base / "counters").string();
  for (const char* dir : {"hw_counters", "counters"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base / dir, ec)) {
      if (!e.is_regular_file(ec)) continue;
      std::string name = e.path().filename().string();
      if (name == "lifespan") continue;  // hw_counters' refresh period in ms, not a count
      // The same name in both directories (not seen so far) keeps both, told apart.
      bool taken = std::any_of(pc.files_.begin(), pc.files_.end(), [&](const File& f) { return f.name == name; });
      pc.files_.push_back({taken ? std::string(dir) + "/" + name : name, e.path().string(), name,
                           std::string(dir) == "hw_counters"});
    }
  }
  std::sort(pc.files_.begin(), pc.files_.end(), [](const File& a, const File& b) { return a.name < b.name; });
  pc.sysfs_settle_ = hw_counters_settle(base / "hw_counters");
  // The system's own devices: their hw counters straight from the driver when the
  // kernel answers for every one of them, with nothing to wait for.
  if (root == kSysfsRoot && pc.sysfs_settle_.count() > 0) {
    const int index = verbs::kernel_index(device);
    auto now = index < 0 ? std::nullopt : nldev::read_hw_counters(static_cast<uint32_t>(index), port);
    if (now && std::all_of(pc.files_.begin(), pc.files_.end(), [&](const File& f) { return !f.hw || now->count(f.raw); })) {
      pc.nl_device_ = index;
      pc.port_ = port;
    }
  }
  return pc;
}

std::optional<CounterValues> PortCounters::read_netlink() const {
  if (nl_device_ < 0) return std::nullopt;
  return nldev::read_hw_counters(static_cast<uint32_t>(nl_device_), port_);
}

CounterValues PortCounters::read() const { return read_files(read_netlink()); }

CounterValues PortCounters::read_after_traffic(std::chrono::steady_clock::time_point last_traffic) const {
  std::optional<CounterValues> hw = read_netlink();
  // No netlink (or it stopped answering): sysfs's cache, once it is sure to hold the traffic.
  if (!hw) std::this_thread::sleep_until(last_traffic + sysfs_settle_);
  return read_files(hw);
}

CounterValues PortCounters::read_files(const std::optional<CounterValues>& hw) const {
  CounterValues v;
  for (const File& f : files_) {
    if (hw && f.hw) {
      if (auto it = hw->find(f.raw); it != hw->end()) v[f.name] = it->second;
      continue;
    }
    std::ifstream in(f.path);
    uint64_t x = 0;
    if (in >> x) v[f.name] = x;
  }
  return v;
}

std::vector<std::string> PortCounters::names() const {
  std::vector<std::string> n;
  for (const File& f : files_) n.push_back(f.name);
  return n;
}

CounterValues counter_delta(const CounterValues& before, const CounterValues& after) {
  CounterValues d;
  for (const auto& [name, a] : after) {
    auto b = before.find(name);
    if (b != before.end()) d[name] = a - b->second;
  }
  return d;
}

// From the kernel's drivers: rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c), mlx5
// (drivers/infiniband/hw/mlx5/counters.c: q, congestion, extended error and RoCE
// acceleration counters) and the InfiniBand PortCounters every port with a `counters`
// directory has (drivers/infiniband/core/sysfs.c).
const std::vector<NormalizedCounter>& counter_map() {
  static const std::vector<NormalizedCounter> map = {
      {"packets_sent", "packets this port sent", {{"sent_pkts", 1}, {"port_xmit_packets", 1}}, false},
      {"packets_received", "packets this port received", {{"rcvd_pkts", 1}, {"port_rcv_packets", 1}}, false},
      {"bytes_sent", "bytes on the wire, headers included", {{"port_xmit_data", 4}}, false},
      {"bytes_received", "bytes on the wire, headers included", {{"port_rcv_data", 4}}, false},
      {"retransmits",
       "requests sent again (timeout or NAK) or received again (duplicates)",
       {{"completer_retry_err", 1},
        {"duplicate_request", 1},
        {"local_ack_timeout_err", 1},
        {"packet_seq_err", 1},
        {"implied_nak_seq_err", 1},
        {"roce_adp_retrans", 1}},
       true},
      {"rnr_naks",
       "receiver-not-ready NAKs sent or received (no receive posted in time)",
       {{"rcvd_rnr_err", 1}, {"send_rnr_err", 1}, {"rnr_nak_retry_err", 1}},
       true},
      {"out_of_sequence",
       "packets that arrived out of order",
       {{"out_of_seq_request", 1}, {"rcvd_seq_err", 1}, {"out_of_sequence", 1}},
       true},
      {"cnp_sent", "congestion notifications sent (DCQCN notification point)", {{"np_cnp_sent", 1}}, false},
      {"cnp_handled", "congestion notifications acted on (reaction point)", {{"rp_cnp_handled", 1}}, false},
      {"ecn_marked", "ECN-marked RoCE packets received", {{"np_ecn_marked_roce_packets", 1}}, false},
      {"out_of_buffer", "packets dropped for lack of a receive buffer", {{"out_of_buffer", 1}}, false},
      {"errors",
       "transport errors: retries exceeded, completion errors, link errors",
       {{"retry_exceeded_err", 1},
        {"retry_rnr_exceeded_err", 1},
        {"send_err", 1},
        {"link_downed", 1},
        {"req_cqe_error", 1},
        {"resp_cqe_error", 1},
        {"req_remote_access_errors", 1},
        {"resp_remote_access_errors", 1},
        {"resp_local_length_error", 1},
        {"req_remote_invalid_request", 1},
        {"symbol_error", 1},
        {"link_error_recovery", 1},
        {"port_rcv_errors", 1},
        {"port_xmit_discards", 1}},
       true},
  };
  return map;
}

nlohmann::json normalize_counters(const CounterValues& delta) {
  nlohmann::json out = nlohmann::json::object();
  for (const NormalizedCounter& n : counter_map()) {
    bool fed = false;
    uint64_t sum = 0;
    for (const auto& r : n.raw) {
      auto it = delta.find(r.name);
      if (it == delta.end()) continue;
      fed = true;
      sum += it->second * r.scale;
    }
    if (fed) out[n.name] = sum;
  }
  return out;
}

std::vector<std::string> counter_anomalies(const nlohmann::json& normalized, const std::string& side) {
  std::vector<std::string> out;
  for (const NormalizedCounter& n : counter_map()) {
    if (!n.anomaly || !normalized.contains(n.name)) continue;
    uint64_t v = normalized[n.name].get<uint64_t>();
    if (v) out.push_back(std::string(n.name) + "=" + std::to_string(v) + " (" + side + ")");
  }
  return out;
}

}  // namespace rdmasweep
