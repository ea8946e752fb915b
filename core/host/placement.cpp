#include "core/host/placement.hpp"

#include <dirent.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"

namespace rdmasweep {

std::vector<int> parse_cpu_list(const std::string& text, const std::string& option) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos)
      throw ConfigError(option + ": '" + text + "' is not a list of cores like 0-3,8");
    return std::stoi(t);
  };
  while (std::getline(ss, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) continue;
    size_t dash = item.find('-');
    int lo = number(item.substr(0, dash));
    int hi = dash == std::string::npos ? lo : number(item.substr(dash + 1));
    if (hi < lo) throw ConfigError(option + ": range " + item + " runs backwards");
    for (int c = lo; c <= hi; ++c)
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  if (out.empty()) throw ConfigError(option + ": no core given");
  return out;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::vector<int> v = cpus;
  std::sort(v.begin(), v.end());
  std::string s;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return s;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

void pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set))
    throw std::runtime_error("cannot pin a thread to CPU " + std::to_string(cpu) + ": " + std::strerror(rc));
}

MemoryOnNode::MemoryOnNode(int node) {
  constexpr unsigned long kMaxNode = sizeof saved_mask_ * 8;
  if (node < 0 || static_cast<unsigned long>(node) >= kMaxNode) return;
  if (get_mempolicy(&saved_mode_, saved_mask_, kMaxNode, nullptr, 0) != 0) return;  // no NUMA in this kernel
  unsigned long mask[sizeof saved_mask_ / sizeof(unsigned long)] = {};
  mask[static_cast<unsigned long>(node) / (8 * sizeof(unsigned long))] |= 1ul << (static_cast<unsigned long>(node) % (8 * sizeof(unsigned long)));
  active_ = set_mempolicy(MPOL_PREFERRED, mask, kMaxNode) == 0;
}

MemoryOnNode::~MemoryOnNode() {
  if (active_) set_mempolicy(saved_mode_, saved_mask_, sizeof saved_mask_ * 8);
}

static std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// The cores the device's MSI interrupts are steered to (empty: none known).
static std::vector<int> irq_cpus_of(const std::string& root, const std::string& device) {
  std::set<int> cpus;
  const std::string dir = root + "/sys/class/infiniband/" + device + "/device/msi_irqs";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      for (const char* f : {"effective_affinity_list", "smp_affinity_list"}) {
        std::string t = read_line(root + "/proc/irq/" + e->d_name + "/" + f);
        if (t.empty()) continue;
        try {
          for (int c : parse_cpu_list(t, "irq")) cpus.insert(c);
        } catch (const ConfigError&) {
        }
        break;
      }
    }
    closedir(d);
  }
  return {cpus.begin(), cpus.end()};
}

Placement choose_placement(const std::string& device, const std::string& cpus, const std::string& root) {
  Placement p;
  const std::vector<int> allowed = root.empty() ? allowed_cpus() : parse_cpu_list(read_line(root + "/allowed"), "allowed");
  const std::string numa = read_line(root + "/sys/class/infiniband/" + device + "/device/numa_node");
  p.numa_node = numa.empty() ? -1 : std::atoi(numa.c_str());
  if (!cpus.empty()) {
    p.cpus = parse_cpu_list(cpus);
    for (int c : p.cpus)
      if (std::find(allowed.begin(), allowed.end(), c) == allowed.end())
        throw ConfigError("--cpus: CPU " + std::to_string(c) + " does not exist or this process may not run on it " +
                          "(it may use " + cpu_list_text(allowed) + ")");
    p.explicit_cpus = true;
    p.source = "--cpus";
    return p;
  }
  p.cpus = allowed;
  p.source = "this process's CPUs (the device's NUMA node is not known)";
  if (p.numa_node >= 0) {
    const std::string list = read_line(root + "/sys/devices/system/node/node" + std::to_string(p.numa_node) + "/cpulist");
    std::vector<int> near;
    if (!list.empty())
      for (int c : parse_cpu_list(list, "cpulist"))
        if (std::find(allowed.begin(), allowed.end(), c) != allowed.end()) near.push_back(c);
    if (!near.empty()) {
      p.cpus = near;
      p.source = "the device's NUMA node " + std::to_string(p.numa_node);
    }
  }
  p.irq_cpus = irq_cpus_of(root, device);
  std::vector<int> quiet;
  for (int c : p.cpus)
    if (std::find(p.irq_cpus.begin(), p.irq_cpus.end(), c) == p.irq_cpus.end()) quiet.push_back(c);
  if (!quiet.empty() && quiet.size() < p.cpus.size()) {
    p.cpus = quiet;
    p.source += ", less the cores of its interrupts";
  }
  return p;
}

nlohmann::json placement_json(const Placement& p, uint32_t threads) {
  nlohmann::json j = {{"cpus", cpu_list_text(p.cpus)},
                      {"source", p.source},
                      {"numa_node", p.numa_node},
                      {"irq_cpus", cpu_list_text(p.irq_cpus)},
                      {"pinned", p.pins(threads)},
                      // buffers and queues are set up preferring the device's node (MPOL_PREFERRED)
                      {"memory_node", p.numa_node}};
  nlohmann::json per = nlohmann::json::array();
  if (p.pins(threads))
    for (uint32_t t = 0; t < threads; ++t) per.push_back(p.cpu_of(t));
  j["per_thread"] = per;
  return j;
}

}  // namespace rdmasweep
