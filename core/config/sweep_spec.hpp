// A sweep's axes as a struct: one list of values per knob of the table
// (core/config/knob_table.hpp), plus the counts every point shares. core/config/sweep.hpp reads and
// expands it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config.hpp"

namespace rdmasweep {

// Op, Mode, Scope, Transport and Arrivals axes hold names as the file gives them; the others numbers (a
// Flag 0 or 1, inline "auto" as kInlineAuto, a rate as core/config/rate.hpp encodes it).
#define RDMASWEEP_AXIS_TYPE_Op std::string
#define RDMASWEEP_AXIS_TYPE_Mode std::string
#define RDMASWEEP_AXIS_TYPE_Scope std::string
#define RDMASWEEP_AXIS_TYPE_Transport std::string
#define RDMASWEEP_AXIS_TYPE_Count uint64_t
#define RDMASWEEP_AXIS_TYPE_Bytes uint64_t
#define RDMASWEEP_AXIS_TYPE_Inline uint64_t
#define RDMASWEEP_AXIS_TYPE_Flag uint64_t
#define RDMASWEEP_AXIS_TYPE_Arrivals std::string
#define RDMASWEEP_AXIS_TYPE_Rate uint64_t
inline std::string axis_default(Op o) { return to_string(o); }
inline std::string axis_default(Mode m) { return to_string(m); }
inline std::string axis_default(CqScope s) { return to_string(s); }
inline std::string axis_default(Transport t) { return to_string(t); }
inline std::string axis_default(ArrivalProcess a) { return to_string(a); }
inline uint64_t axis_default(uint64_t v) { return v; }

// One axis per knob of the table (core/config/knob_table.hpp), holding its default alone.
#define RDMASWEEP_SWEEP_AXIS(key, in, kind, def, ...) std::vector<RDMASWEEP_AXIS_TYPE_##kind> key{axis_default(def)};
struct SweepSpec {
  RDMASWEEP_KNOBS(RDMASWEEP_SWEEP_AXIS)
  uint64_t iters = 1000;
  double duration = 0;
  uint64_t warmup = 100;
  uint32_t repetitions = 1;
  std::string description;
  // No size given (file or command line; code that fills `size` by hand sets it too):
  // latency points measure perftest's 2 B, bandwidth points the size axis' default.
  bool size_given = false;
};

}  // namespace rdmasweep
