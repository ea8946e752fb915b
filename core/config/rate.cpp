#include "core/config/rate.hpp"

#include <cmath>
#include <cstdio>

#include "core/config/config_error.hpp"

namespace rdmasweep {

const char* to_string(ArrivalProcess a) { return a == ArrivalProcess::Poisson ? "poisson" : "constant"; }

ArrivalProcess parse_arrivals(const std::string& s) {
  if (s == "constant") return ArrivalProcess::Constant;
  if (s == "poisson") return ArrivalProcess::Poisson;
  throw ConfigError("arrivals: '" + s + "' is not one of constant, poisson");
}

namespace {

struct Unit {
  const char* suffix;
  RateUnit unit;
  double scale;  // per second of the amount
};
// Longest suffix first, so "mbps" is not read as "bps" after "m".
constexpr Unit kUnits[] = {{"gbps", RateUnit::Bits, 1e9},     {"mbps", RateUnit::Bits, 1e6},
                           {"kbps", RateUnit::Bits, 1e3},     {"mpps", RateUnit::Messages, 1e6},
                           {"kpps", RateUnit::Messages, 1e3}, {"bps", RateUnit::Bits, 1},
                           {"pps", RateUnit::Messages, 1}};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

uint64_t parse_rate(const std::string& s) {
  if (s == "0" || s == "none") return kRateNone;
  const std::string units = "a rate like 10gbps, 800mbps, 1.5mpps or 200kpps (bits or messages per second), or none";
  if (!s.empty() && s.back() == '%')
    throw ConfigError("rate: '" + s + "': a rate relative to the point's own flat-out rate is not supported; give " +
                      units);
  for (const Unit& u : kUnits) {
    if (!ends_with(s, u.suffix)) continue;
    const std::string number = s.substr(0, s.size() - std::string(u.suffix).size());
    char* end = nullptr;
    const double x = number.empty() ? NAN : std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(x > 0) || !std::isfinite(x) ||
        number.find_first_not_of("0123456789.") != std::string::npos)
      break;
    const double amount = std::round(x * u.scale);
    if (amount < 1 || amount > static_cast<double>(kRateAmountMask))
      throw ConfigError("rate: '" + s + "' is out of range");
    return make_rate(u.unit, static_cast<uint64_t>(amount));
  }
  throw ConfigError("rate: '" + s + "' is not " + units);
}

std::string rate_string(uint64_t v) {
  if (v == kRateNone) return "none";
  const RateUnit unit = rate_unit(v);
  const uint64_t amount = rate_amount(v);
  for (const Unit& u : kUnits) {
    if (u.unit != unit) continue;
    const double x = static_cast<double>(amount) / u.scale;
    // The largest unit that gives a short exact decimal: 2.5gbps, not 2500mbps.
    if (x < 1 && u.scale > 1) continue;
    char buf[48];
    for (int digits = 0; digits <= 3; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*f", digits, x);
      if (std::llround(std::strtod(buf, nullptr) * u.scale) == static_cast<long long>(amount))
        return std::string(buf) + u.suffix;
    }
  }
  return std::to_string(amount) + (unit == RateUnit::Bits ? "bps" : "pps");
}

double rate_messages_per_second(uint64_t v, uint64_t size) {
  switch (rate_unit(v)) {
    case RateUnit::Bits: return static_cast<double>(rate_amount(v)) / (8.0 * static_cast<double>(size));
    case RateUnit::Messages: return static_cast<double>(rate_amount(v));
    default: return 0;
  }
}

}  // namespace rdmasweep
