// The clock as the results' context records it: which source, its rate, its drift
// at calibration and over the sweep, and why it was chosen.
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace rdmasweep::ticks {

// Adds clock, clock_ghz, clock_drift_ppm and clock_reason to a results context.
void add_context(nlohmann::json& context);
// At the sweep's end: measure_end_drift(), recorded as clock_end_drift_ppm; when the
// TSC was in use and has moved more than 0.1 %, clock_reason says so.
void check_at_end(nlohmann::json& context);

}  // namespace rdmasweep::ticks
