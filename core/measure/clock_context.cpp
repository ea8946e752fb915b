#include "core/measure/clock_context.hpp"

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "core/measure/clock.hpp"

namespace rdmasweep::ticks {

static nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

void add_context(nlohmann::json& c) {
  const Calibration& cal = calibration();
  const bool calibrated = cal.ns_per_tick > 0;
  c["clock"] = source_name();
  c["clock_reason"] = cal.reason;
  c["clock_ghz"] = calibrated ? nlohmann::json(1.0 / cal.ns_per_tick) : nlohmann::json(nullptr);
  c["clock_drift_ppm"] = calibrated ? finite_or_null(cal.drift_ppm) : nlohmann::json(nullptr);
}

void check_at_end(nlohmann::json& c) {
  const std::string moved = measure_end_drift();
  const Calibration& cal = calibration();
  if (!cal.end_checked) return;  // no TSC, or nothing calibrated
  c["clock_end_drift_ppm"] = finite_or_null(cal.end_drift_ppm);
  if (!moved.empty()) c["clock_reason"] = cal.reason + "; " + moved;
}

}  // namespace rdmasweep::ticks
