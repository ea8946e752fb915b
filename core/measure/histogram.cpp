#include "core/measure/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace rdmasweep {

uint64_t Histogram::bucket_low(size_t i) {
  if (i < kSubCount) return i;
  size_t k = i - kSubCount;
  unsigned msb = static_cast<unsigned>(kSubBits + k / kHalf);
  unsigned shift = msb - (kSubBits - 1);
  return (kHalf + k % kHalf) << shift;
}

uint64_t Histogram::bucket_high(size_t i) {
  if (i < kSubCount) return i;
  if (i == kBuckets - 1) return UINT64_MAX;
  return bucket_low(i + 1) - 1;
}

void Histogram::merge(const Histogram& o) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  sum_sq_ += o.sum_sq_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

void Histogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = sum_ = max_ = 0;
  sum_sq_ = 0;
  min_ = UINT64_MAX;
}

double Histogram::stddev() const {
  if (count_ == 0) return 0.0;
  // Around m, the mean rounded down, in exact integers: sum (x-m)^2 = sum x^2 - 2m sum x
  // + n m^2 (in 128 bits, wrapping on the way to a result that fits), so a small spread
  // on large values is not lost as E[x^2] - mean^2 in floating point would lose it.
  const uint64_t m = sum_ / count_;
  const U128 around = sum_sq_ - 2 * static_cast<U128>(m) * sum_ + static_cast<U128>(count_) * m * m;
  const long double n = static_cast<long double>(count_);
  const long double off = static_cast<long double>(sum_ - count_ * m) / n;  // the mean less m, in [0, 1)
  const long double var = static_cast<long double>(around) / n - off * off;
  return var > 0 ? static_cast<double>(std::sqrt(var)) : 0.0;
}

double Histogram::quantile(double q) const {
  if (count_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      double lo = static_cast<double>(bucket_low(i));
      double hi = i == kBuckets - 1 ? static_cast<double>(max_) : static_cast<double>(bucket_high(i));
      double mid = (lo + hi) / 2.0;
      return std::clamp(mid, static_cast<double>(min()), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace rdmasweep
