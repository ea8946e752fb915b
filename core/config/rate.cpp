#include "core/config/rate.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

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

// "50%", "12.5%": a part of the point's flat-out rate, to a thousandth of a percent.
uint64_t parse_share(const std::string& s) {
  const std::string number = s.substr(0, s.size() - 1);
  char* end = nullptr;
  const double x = number.empty() ? NAN : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() ||
      number.find_first_not_of("0123456789.") != std::string::npos || !(x > 0) || x > 100)
    throw ConfigError("rate: '" + s + "' is not a share of the point's flat-out rate above 0% and at most 100%");
  const double amount = std::round(x * kSharePerPercent);
  if (amount < 1) throw ConfigError("rate: '" + s + "' is below 0.001%");
  return make_rate(RateUnit::Share, static_cast<uint64_t>(amount));
}

}  // namespace

uint64_t parse_rate(const std::string& s) {
  if (s == "0" || s == "none") return kRateNone;
  const std::string units = "a rate like 10gbps, 800mbps, 1.5mpps or 200kpps (bits or messages per second), 50% (of the "
      "point's flat-out rate), or none";
  if (!s.empty() && s.back() == '%') return parse_share(s);
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
  if (unit == RateUnit::Share) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(amount) / kSharePerPercent);
    std::string t = buf;
    t.erase(t.find_last_not_of('0') + 1);  // 12.500 -> 12.5, 50.000 -> 50.
    if (t.back() == '.') t.pop_back();
    return t + "%";
  }
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
    case RateUnit::Share: throw std::logic_error("a share rate (" + rate_string(v) + ") paced before share_of()");
    default: return 0;
  }
}

uint64_t share_of(uint64_t share, double flat_out) {
  const double pps = std::round(flat_out * static_cast<double>(rate_amount(share)) / (100.0 * kSharePerPercent));
  return make_rate(RateUnit::Messages, pps < 1 ? 1 : static_cast<uint64_t>(pps));
}

}  // namespace rdmasweep
