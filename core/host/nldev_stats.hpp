// A port's driver counters (hw_counters) through the kernel's RDMA netlink, as
// `rdma statistic show` reads them. The kernel asks the driver on every such request,
// where sysfs's hw_counters files answer from a cache up to a lifespan old: a read
// right after a point sees all of its traffic without waiting.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace rdmasweep::nldev {

// Every hw counter of port `port` of the device the kernel numbers `dev_index`
// (verbs::kernel_index) now (raw driver names), or nullopt when the kernel
// does not answer (no RDMA netlink, or a kernel without port statistics there).
std::optional<std::map<std::string, uint64_t>> read_hw_counters(uint32_t dev_index, uint32_t port);

}  // namespace rdmasweep::nldev
