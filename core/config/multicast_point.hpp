// What a multicast point is (mesh --pattern multicast, client --multicast): checked
// before any device is opened, and again by a server on the points a client sends.
#pragma once

#include <cstdint>
#include <string>

#include "core/config/config.hpp"

namespace rdmasweep {

constexpr uint32_t kMcastHeaderBytes = 16;  // tag, sequence, send time: the smallest size
constexpr uint64_t kMcastDefaultSize = 1024;

// Throws ConfigError unless `c` is a point multicast runs: SEND, counted (--iters), at
// least kMcastHeaderBytes, one QP and one thread.
void check_multicast_point(const TestConfig& c);

// True when `s` is a numeric IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address.
bool is_multicast_address(const std::string& s);

}  // namespace rdmasweep
