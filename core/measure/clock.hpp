// The latency loops' timestamps. clock_gettime is cheap where the kernel's clock
// source is the TSC (vDSO), but a system call where it is not (HPET in VMs): there a
// timestamp costs microseconds and inflates every round trip (by ~10 us one-way in
// the rxe lab VM). Reading the TSC directly costs nanoseconds everywhere, as in
// perftest, but only an invariant TSC ticks at one rate through frequency changes
// and idle states. So --clock auto verifies before trusting it: two calibrations
// against CLOCK_MONOTONIC_RAW, the TSC when the CPU declares it invariant or the two
// agree within 0.1 %, clock_gettime otherwise; the rate is checked again at the
// sweep's end. --clock tsc and --clock system force one source.
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

constexpr double kMaxDriftPpm = 1000;  // 0.1 %: two calibrations further apart mean an unsteady TSC

struct Decision {
  bool use_tsc;
  std::string reason;
};

// The choice, from the request, whether the CPU has a TSC and declares it invariant,
// and the ns-per-tick rates of two calibrations (pure: no clock is read).
Decision decide(Source requested, bool have_tsc, bool invariant, double ns_per_tick1, double ns_per_tick2);

// (b - a) / a in parts per million; infinite when a rate is not positive and finite.
double drift_ppm(double a, double b);

// True when every "flags" line of /proc/cpuinfo text lists constant_tsc and nonstop_tsc.
bool invariant_tsc(const std::string& cpuinfo);

// What init measured and chose, for the results' context.
struct Calibration {
  Source requested = Source::System;
  bool use_tsc = false;
  bool invariant = false;
  double ns_per_tick = 0;     // over both windows; 0 when the TSC was not calibrated
  double drift_ppm = 0;       // the second window's rate against the first's
  double end_drift_ppm = 0;   // measure_end_drift: the rate since init against ns_per_tick
  bool end_checked = false;
  std::string reason;
};

// Chooses the source; unless --clock system, calibrates the TSC twice (~50 ms each)
// first. Call once before any loop runs. Warns once on stderr when auto falls back to
// clock_gettime. Throws std::invalid_argument when the TSC is asked for on a CPU
// without one.
void init(Source requested);
const char* source_name();  // "tsc" or "system"
const Calibration& calibration();

// At the sweep's end: measures the TSC's rate since init (one window over the whole
// sweep) into calibration().end_drift_ppm (end_checked: where there is a TSC). When
// the TSC was in use and has moved more than 0.1 %, warns once on stderr and returns
// what that means for the latencies; else "". The results' context records both
// (core/measure/clock_context.hpp).
std::string measure_end_drift();

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
