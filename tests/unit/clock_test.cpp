#include "core/measure/clock.hpp"
#include "core/measure/clock_context.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include <nlohmann/json.hpp>

namespace rdmasweep {

// Whatever the source, ticks convert to real elapsed nanoseconds (wide bounds: this
// checks the calibration and the unit, not the machine's speed).
static void expect_measures_a_sleep(ticks::Source s) {
  ticks::init(s);
  uint64_t a = ticks::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  uint64_t b = ticks::now();
  ASSERT_GT(b, a);
  double ms = static_cast<double>(ticks::to_ns(b - a)) / 1e6;
  EXPECT_GT(ms, 45.0) << ticks::source_name();
  EXPECT_LT(ms, 2000.0) << ticks::source_name();
}

TEST(Ticks, SystemClock) {
  expect_measures_a_sleep(ticks::Source::System);
  EXPECT_STREQ(ticks::source_name(), "system");
}

#ifdef RDMASWEEP_HAVE_TSC
TEST(Ticks, TimeStampCounter) {
  expect_measures_a_sleep(ticks::Source::Tsc);
  EXPECT_STREQ(ticks::source_name(), "tsc");
}
#endif

// --- the decision, machine-independent -------------------------------------

constexpr double kRate = 1 / 2.6;  // ns per tick of a 2.6 GHz TSC

TEST(ClockDecision, SystemIsForcedWhateverTheTsc) {
  ticks::Decision d = ticks::decide(ticks::Source::System, true, true, kRate, kRate);
  EXPECT_FALSE(d.use_tsc);
  EXPECT_EQ(d.reason, "forced by --clock system");
}

TEST(ClockDecision, NoTscMeansSystem) {
  ticks::Decision d = ticks::decide(ticks::Source::Auto, false, false, 0, 0);
  EXPECT_FALSE(d.use_tsc);
  EXPECT_NE(d.reason.find("no time-stamp counter"), std::string::npos) << d.reason;
}

TEST(ClockDecision, TscIsForcedEvenWhenItsRateMoved) {
  ticks::Decision d = ticks::decide(ticks::Source::Tsc, true, false, kRate, kRate * 1.01);
  EXPECT_TRUE(d.use_tsc);
  EXPECT_EQ(d.reason, "forced by --clock tsc");
}

TEST(ClockDecision, AutoTrustsAnInvariantTsc) {
  ticks::Decision d = ticks::decide(ticks::Source::Auto, true, true, kRate, kRate * 1.002);
  EXPECT_TRUE(d.use_tsc);
  EXPECT_NE(d.reason.find("invariant"), std::string::npos) << d.reason;
}

TEST(ClockDecision, AutoUsesANonInvariantTscWhenTwoCalibrationsAgree) {
  ticks::Decision d = ticks::decide(ticks::Source::Auto, true, false, kRate, kRate * (1 + 400e-6));
  EXPECT_TRUE(d.use_tsc);
  EXPECT_NE(d.reason.find("agree within 0.1 % (400 ppm)"), std::string::npos) << d.reason;
  EXPECT_TRUE(ticks::decide(ticks::Source::Auto, true, false, kRate, kRate * (1 - 999e-6)).use_tsc);
}

TEST(ClockDecision, AutoFallsBackWhenANonInvariantTscDrifts) {
  ticks::Decision d = ticks::decide(ticks::Source::Auto, true, false, kRate, kRate * (1 + 1500e-6));
  EXPECT_FALSE(d.use_tsc);
  EXPECT_NE(d.reason.find("differ by 1500 ppm"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("clock_gettime"), std::string::npos) << d.reason;
  EXPECT_FALSE(ticks::decide(ticks::Source::Auto, true, false, kRate, kRate * (1 - 1500e-6)).use_tsc);
  // a TSC that did not advance during a calibration cannot be trusted either
  EXPECT_FALSE(ticks::decide(ticks::Source::Auto, true, false, kRate, 0).use_tsc);
}

TEST(ClockDecision, DriftInPartsPerMillion) {
  EXPECT_NEAR(ticks::drift_ppm(1.0, 1.001), 1000, 1e-6);
  EXPECT_NEAR(ticks::drift_ppm(2.0, 1.999), -500, 1e-6);
  EXPECT_TRUE(std::isinf(ticks::drift_ppm(0, 1)));
  EXPECT_TRUE(std::isinf(ticks::drift_ppm(1, NAN)));
}

// /proc/cpuinfo excerpts: a host with an invariant TSC (two CPUs, and Intel's "vmx
// flags" line), and a QEMU guest like the rxe lab's that declares neither flag.
static const char* kHostCpuinfo =
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\n"
    "flags\t\t: fpu vme tsc msr pae rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq\n"
    "vmx flags\t: vnmi preemption_timer\n\n"
    "processor\t: 1\n"
    "flags\t\t: fpu vme tsc msr pae rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq\n";
static const char* kGuestCpuinfo =
    "processor\t: 0\nmodel name\t: QEMU Virtual CPU version 2.5+\n"
    "flags\t\t: fpu de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 "
    "syscall nx lm rep_good nopl cpuid pni cx16 hypervisor lahf_lm\n";

TEST(ClockCpuinfo, ConstantAndNonstopTscMeanInvariant) {
  EXPECT_TRUE(ticks::invariant_tsc(kHostCpuinfo));
  EXPECT_FALSE(ticks::invariant_tsc(kGuestCpuinfo));
  EXPECT_FALSE(ticks::invariant_tsc(""));
  EXPECT_FALSE(ticks::invariant_tsc("flags\t\t: tsc constant_tsc\n"));                // not nonstop
  EXPECT_FALSE(ticks::invariant_tsc("flags\t\t: tsc constant_tsc_x nonstop_tsc\n"));  // whole words only
  // every CPU must declare it
  EXPECT_FALSE(ticks::invariant_tsc(std::string(kHostCpuinfo) + "processor\t: 2\nflags\t\t: tsc constant_tsc\n"));
}

// --- what the results' context records ---------------------------------------

TEST(ClockContext, SystemRecordsTheReasonAndNoRate) {
  ticks::init(ticks::Source::System);
  nlohmann::json c;
  ticks::add_context(c);
  EXPECT_EQ(c["clock"], "system");
  EXPECT_EQ(c["clock_reason"], "forced by --clock system");
  EXPECT_TRUE(c["clock_ghz"].is_null());
  EXPECT_TRUE(c["clock_drift_ppm"].is_null());
  ticks::check_at_end(c);
  EXPECT_FALSE(c.contains("clock_end_drift_ppm"));
}

#ifdef RDMASWEEP_HAVE_TSC
TEST(ClockContext, TscRecordsRateDriftAndTheEndCheck) {
  ticks::init(ticks::Source::Tsc);
  nlohmann::json c;
  ticks::add_context(c);
  EXPECT_EQ(c["clock"], "tsc");
  EXPECT_EQ(c["clock_reason"], "forced by --clock tsc");
  ASSERT_TRUE(c["clock_ghz"].is_number()) << c.dump();
  EXPECT_GT(c["clock_ghz"].get<double>(), 0.1);
  EXPECT_LT(c["clock_ghz"].get<double>(), 20.0);
  EXPECT_TRUE(c["clock_drift_ppm"].is_number()) << c.dump();
  ticks::check_at_end(c);
  EXPECT_TRUE(c["clock_end_drift_ppm"].is_number()) << c.dump();
  EXPECT_TRUE(ticks::calibration().end_checked);
}

// Whatever this machine is, auto's choice follows the rule and says why.
TEST(ClockContext, AutoFollowsTheRuleOnThisMachine) {
  ticks::init(ticks::Source::Auto);
  const ticks::Calibration& cal = ticks::calibration();
  EXPECT_EQ(cal.use_tsc, cal.invariant || std::fabs(cal.drift_ppm) <= ticks::kMaxDriftPpm) << cal.reason;
  EXPECT_GT(cal.ns_per_tick, 0.0);
  EXPECT_FALSE(cal.reason.empty());
  nlohmann::json c;
  ticks::add_context(c);
  EXPECT_EQ(c["clock"], cal.use_tsc ? "tsc" : "system");
  EXPECT_EQ(c["clock_reason"], cal.reason);
}
#endif

TEST(Ticks, ParsesSourceNames) {
  EXPECT_EQ(ticks::parse("tsc"), ticks::Source::Tsc);
  EXPECT_EQ(ticks::parse("auto"), ticks::Source::Auto);
  EXPECT_THROW(ticks::parse("rdtsc"), std::invalid_argument);
}

}  // namespace rdmasweep
