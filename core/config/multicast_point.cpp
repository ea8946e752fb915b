#include "core/config/multicast_point.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>

namespace rdmasweep {

void check_multicast_point(const TestConfig& c) {
  const std::string why = "multicast: ";
  if (c.work.op != Op::Send) throw ConfigError(why + "--op " + to_string(c.work.op) + ": multicast sends (use --op send)");
  if (c.work.duration > 0) throw ConfigError(why + "give --iters: receivers count exactly what a counted sweep sent");
  if (c.work.size < kMcastHeaderBytes)
    throw ConfigError(why + "--size " + std::to_string(c.work.size) + " is below " + std::to_string(kMcastHeaderBytes) +
                      " bytes (each datagram carries its sequence number and send time)");
  if (c.work.qps != 1 || c.knobs.threads != 1)
    throw ConfigError(why + "one QP and one thread (--qps 1 --threads 1): every receiver has one attached QP");
  if (c.work.iters > UINT32_MAX - c.work.warmup) throw ConfigError(why + "--iters is above 2^32 datagrams");
  if (c.knobs.rate != kRateNone) throw ConfigError(why + "--rate: multicast sends are not paced yet (drop --rate)");
}

bool is_multicast_address(const std::string& s) {
  in_addr a4{};
  if (inet_pton(AF_INET, s.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 28) == 0xe;
  in6_addr a6{};
  return inet_pton(AF_INET6, s.c_str(), &a6) == 1 && a6.s6_addr[0] == 0xff;
}

}  // namespace rdmasweep
