// --rate and --arrivals: the load a bandwidth point offers, as the knob table holds it.
// A rate is one uint64_t knob value like every other: its unit in the top two bits,
// its amount below (bits or messages per second), 0 for none (flat out).
#pragma once

#include <cstdint>
#include <string>

namespace rdmasweep {

// --arrivals: when each message of a paced point is due. Constant: every 1/rate;
// Poisson: exponentially distributed gaps of mean 1/rate (seeded: the same schedule
// on every run of a point).
enum class ArrivalProcess : uint8_t { Constant, Poisson };
const char* to_string(ArrivalProcess a);
ArrivalProcess parse_arrivals(const std::string& s);  // throws ConfigError

// Share: a part of the point's own flat-out rate, in thousandths of a percent (its
// flat-out twin runs first, and the client paces at that part of the rate it achieved).
enum class RateUnit : uint8_t { None = 0, Bits = 1, Messages = 2, Share = 3 };
constexpr uint64_t kSharePerPercent = 1000;
constexpr uint64_t kRateNone = 0;
constexpr int kRateUnitShift = 62;
constexpr uint64_t kRateAmountMask = (uint64_t{1} << kRateUnitShift) - 1;
inline RateUnit rate_unit(uint64_t v) { return static_cast<RateUnit>(v >> kRateUnitShift); }
inline uint64_t rate_amount(uint64_t v) { return v & kRateAmountMask; }
inline uint64_t make_rate(RateUnit u, uint64_t amount) {
  return amount == 0 ? kRateNone : (uint64_t{static_cast<uint8_t>(u)} << kRateUnitShift) | (amount & kRateAmountMask);
}

// "10gbps", "2.5gbps", "800mbps", "1.5mpps", "200kpps", "50000pps" (bits or messages
// per second, over all the point's QPs and threads); "50%", "12.5%" (of the point's own
// flat-out rate, at most 100%); "0" or "none": flat out. Throws ConfigError naming the
// text and the units.
uint64_t parse_rate(const std::string& s);
// The value back as the largest unit that says it exactly ("2.5gbps", "1.5mpps", "50%"), "none" for 0.
std::string rate_string(uint64_t v);
inline bool is_share(uint64_t v) { return rate_unit(v) == RateUnit::Share; }
// A Share rate made absolute: that part of `flat_out` messages per second, as a
// messages-per-second rate (at least 1 pps).
uint64_t share_of(uint64_t share, double flat_out);
// Messages per second a point of `size` bytes is offered at (0: flat out). A Share
// rate has none until share_of() made it absolute: std::logic_error.
double rate_messages_per_second(uint64_t v, uint64_t size);

}  // namespace rdmasweep
