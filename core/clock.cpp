#include "core/clock.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace rdmasweep::ticks {

namespace detail {
bool use_tsc = false;
double ns_per_tick = 1.0;
}  // namespace detail

static uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void init(Source requested) {
#ifdef RDMASWEEP_HAVE_TSC
  detail::use_tsc = requested != Source::System;
  if (!detail::use_tsc) return;
  uint64_t t0 = mono_ns(), c0 = __rdtsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  uint64_t t1 = mono_ns(), c1 = __rdtsc();
  detail::ns_per_tick = c1 > c0 ? static_cast<double>(t1 - t0) / static_cast<double>(c1 - c0) : 1.0;
#else
  if (requested == Source::Tsc) throw std::invalid_argument("--clock tsc: this CPU has no time-stamp counter");
  detail::use_tsc = false;
#endif
}

const char* source_name() { return detail::use_tsc ? "tsc" : "system"; }

Source parse(const std::string& s) {
  if (s == "auto") return Source::Auto;
  if (s == "tsc") return Source::Tsc;
  if (s == "system") return Source::System;
  throw std::invalid_argument("--clock: '" + s + "' is not one of auto, tsc, system");
}

}  // namespace rdmasweep::ticks
