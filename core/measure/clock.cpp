#include "core/measure/clock.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace rdmasweep::ticks {

namespace detail {
bool use_tsc = false;
double ns_per_tick = 1.0;
}  // namespace detail

namespace {

Calibration g_cal;

#ifdef RDMASWEEP_HAVE_TSC
constexpr auto kWindow = std::chrono::milliseconds(50);

struct Stamp {
  uint64_t ns;
  double tsc;
};
Stamp g_start;  // the first calibration's start, for check_at_end's long window

// CLOCK_MONOTONIC_RAW is not slewed by NTP. The TSC is read on both sides of the
// clock read and the narrowest of a few tries kept: in a VM the clock read is a
// system call (~10 us), and its middle is where it most likely sampled time.
Stamp stamp() {
  Stamp best{0, 0};
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    timespec ts;
    uint64_t c0 = __rdtsc();
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    uint64_t c1 = __rdtsc();
    if (c1 - c0 < best_width) {
      best_width = c1 - c0;
      best = {static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec),
              static_cast<double>(c0) + static_cast<double>(c1 - c0) / 2};
    }
  }
  return best;
}

double rate(const Stamp& a, const Stamp& b) {
  return b.tsc > a.tsc ? static_cast<double>(b.ns - a.ns) / (b.tsc - a.tsc) : 0.0;
}

bool cpu_declares_invariant_tsc() {
  std::ifstream f("/proc/cpuinfo");
  std::stringstream s;
  s << f.rdbuf();
  return invariant_tsc(s.str());
}
#endif

std::string ppm_text(double ppm) {
  if (!std::isfinite(ppm)) return "an unmeasurable amount (no TSC progress)";
  char b[32];
  std::snprintf(b, sizeof b, "%.0f ppm", std::fabs(ppm));
  return b;
}

}  // namespace

double drift_ppm(double a, double b) {
  if (!(a > 0) || !(b > 0) || !std::isfinite(a) || !std::isfinite(b)) return INFINITY;
  return (b - a) / a * 1e6;
}

Decision decide(Source requested, bool have_tsc, bool invariant, double ns_per_tick1, double ns_per_tick2) {
  if (requested == Source::System) return {false, "forced by --clock system"};
  if (!have_tsc) return {false, "this CPU has no time-stamp counter"};
  if (requested == Source::Tsc) return {true, "forced by --clock tsc"};
  if (invariant) return {true, "the CPU declares an invariant TSC (constant_tsc and nonstop_tsc)"};
  double d = drift_ppm(ns_per_tick1, ns_per_tick2);
  if (std::fabs(d) <= kMaxDriftPpm)
    return {true, "the TSC is not declared invariant, but two calibrations agree within 0.1 % (" + ppm_text(d) + ")"};
  return {false, "the TSC is not declared invariant and two calibrations differ by " + ppm_text(d) +
                     " (more than 0.1 %): using clock_gettime"};
}

bool invariant_tsc(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || line.compare(0, 5, "flags") != 0) continue;
    if (line.find_first_not_of(" \t", 5) != colon) continue;  // "flags\t\t:", not e.g. "flagship"
    std::istringstream words(line.substr(colon + 1));
    bool constant = false, nonstop = false;
    for (std::string w; words >> w;) {
      constant |= w == "constant_tsc";
      nonstop |= w == "nonstop_tsc";
    }
    if (!constant || !nonstop) return false;
    any = true;
  }
  return any;
}

void init(Source requested) {
  g_cal = Calibration{};
  g_cal.requested = requested;
  double r1 = 0, r2 = 0;
  bool have_tsc = false;
#ifdef RDMASWEEP_HAVE_TSC
  have_tsc = true;
  if (requested != Source::System) {
    g_cal.invariant = cpu_declares_invariant_tsc();
    Stamp a = stamp();
    std::this_thread::sleep_for(kWindow);
    Stamp b = stamp();
    std::this_thread::sleep_for(kWindow);
    Stamp c = stamp();
    r1 = rate(a, b);
    r2 = rate(b, c);
    g_start = a;
    g_cal.ns_per_tick = rate(a, c);
    g_cal.drift_ppm = drift_ppm(r1, r2);
  }
#else
  if (requested == Source::Tsc) throw std::invalid_argument("--clock tsc: this CPU has no time-stamp counter; use --clock system");
#endif
  Decision d = decide(requested, have_tsc, g_cal.invariant, r1, r2);
  g_cal.use_tsc = d.use_tsc;
  g_cal.reason = d.reason;
  detail::use_tsc = d.use_tsc;
  detail::ns_per_tick = g_cal.ns_per_tick > 0 ? g_cal.ns_per_tick : 1.0;
  static bool warned = false;
  if (requested == Source::Auto && have_tsc && !d.use_tsc && !warned) {
    warned = true;
    std::fprintf(stderr, "rdmasweep: --clock auto: %s (slower where it is a system call; --clock tsc forces the TSC)\n",
                 d.reason.c_str());
  }
}

const char* source_name() { return detail::use_tsc ? "tsc" : "system"; }

const Calibration& calibration() { return g_cal; }

std::string measure_end_drift() {
  if (!(g_cal.ns_per_tick > 0)) return "";  // nothing calibrated (--clock system, no TSC)
#ifdef RDMASWEEP_HAVE_TSC
  g_cal.end_drift_ppm = drift_ppm(g_cal.ns_per_tick, rate(g_start, stamp()));
  g_cal.end_checked = true;
  if (!g_cal.use_tsc || std::fabs(g_cal.end_drift_ppm) <= kMaxDriftPpm) return "";
  std::string moved = "over the sweep the TSC's rate moved " + ppm_text(g_cal.end_drift_ppm) +
                      " from its calibration: latencies may be off by as much";
  static bool warned = false;
  if (!warned) {
    warned = true;
    std::fprintf(stderr, "rdmasweep: %s (--clock system avoids the TSC)\n", moved.c_str());
  }
  return moved;
#else
  return "";
#endif
}

Source parse(const std::string& s) {
  if (s == "auto") return Source::Auto;
  if (s == "tsc") return Source::Tsc;
  if (s == "system") return Source::System;
  throw std::invalid_argument("--clock: '" + s + "' is not one of auto, tsc, system");
}

}  // namespace rdmasweep::ticks
