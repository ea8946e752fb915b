// Where a point's threads run: the cores of the NIC's NUMA node by default (less the
// cores its interrupts are steered to, when that leaves any), or --cpus. Read from
// sysfs and procfs before any verbs object exists, so a bad --cpus fails first.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace rdmasweep {

struct Placement {
  std::vector<int> cpus;      // thread t runs on cpus[t % cpus.size()]
  bool explicit_cpus = false; // --cpus: pin even a single thread
  int numa_node = -1;         // the NIC's node; -1: not known (no NUMA, or a software device)
  std::vector<int> irq_cpus;  // cores the NIC's interrupts go to, when known
  std::string source;         // how cpus was chosen, for the context
  // A point with `threads` threads pins them (one thread: only with --cpus).
  bool pins(uint32_t threads) const { return !cpus.empty() && (explicit_cpus || threads > 1); }
  int cpu_of(uint32_t thread) const { return cpus[thread % cpus.size()]; }
};

// "2-9,12" -> {2,...,9,12}; throws ConfigError naming the option.
std::vector<int> parse_cpu_list(const std::string& text, const std::string& option = "--cpus");

// `cpus`: the --cpus text, empty for the default. `root`: "" for the real /sys and
// /proc (tests point it at a made-up tree). Throws ConfigError for a core that does
// not exist or that this process may not run on.
Placement choose_placement(const std::string& device, const std::string& cpus, const std::string& root = "");

// The cores this process may run on (its affinity mask).
std::vector<int> allowed_cpus();

// Pins the calling thread to `cpu` (throws std::runtime_error with the reason).
void pin_this_thread(int cpu);

// While it lives, the calling thread's new memory (buffers, queues: first touched at
// setup) prefers NUMA node `node` (MPOL_PREFERRED); its own policy comes back after.
// Nothing happens for node -1 or on a kernel without NUMA.
class MemoryOnNode {
 public:
  explicit MemoryOnNode(int node);
  ~MemoryOnNode();
  MemoryOnNode(const MemoryOnNode&) = delete;
  MemoryOnNode& operator=(const MemoryOnNode&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  int saved_mode_ = 0;
  unsigned long saved_mask_[16] = {};
};

// The context's record: {"cpus", "source", "numa_node", "irq_cpus", "per_thread" for `threads`}.
nlohmann::json placement_json(const Placement& p, uint32_t threads);

// Text form of a core list, "0-3,8".
std::string cpu_list_text(const std::vector<int>& cpus);

}  // namespace rdmasweep
