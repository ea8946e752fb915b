// The latency loops' timestamps. clock_gettime is cheap where the kernel's clock
// source is the TSC (vDSO), but a system call where it is not (HPET in VMs): there a
// timestamp costs microseconds and inflates every round trip (by ~10 us one-way in
// the rxe lab VM). Reading the TSC directly costs nanoseconds everywhere, so it is
// the default on x86 (as in perftest), calibrated against CLOCK_MONOTONIC;
// --clock system uses clock_gettime instead.
#pragma once

#include <cstdint>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define RDMASWEEP_HAVE_TSC 1
#endif

#include <time.h>

namespace rdmasweep::ticks {

enum class Source { Auto, Tsc, System };

// Chooses the source and calibrates the TSC against CLOCK_MONOTONIC (~20 ms). Call
// once before any loop runs. Throws std::invalid_argument when the TSC is asked for
// on a CPU without one.
void init(Source requested);
const char* source_name();  // "tsc" or "system"

namespace detail {
extern bool use_tsc;
extern double ns_per_tick;
}  // namespace detail

inline uint64_t now() {
#ifdef RDMASWEEP_HAVE_TSC
  if (detail::use_tsc) return __rdtsc();
#endif
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t to_ns(uint64_t ticks) {
  return detail::use_tsc ? static_cast<uint64_t>(static_cast<double>(ticks) * detail::ns_per_tick) : ticks;
}

Source parse(const std::string& s);  // "auto", "tsc", "system"; throws std::invalid_argument

}  // namespace rdmasweep::ticks
