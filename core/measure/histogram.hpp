// Log-linear latency histogram (HdrHistogram-style): values in nanoseconds, exact
// below 2048 ns, then 1024 buckets per power of two, so every value above 2048 ns
// is kept within 1/1024 (0.1%, three significant digits) up to 2^37 ns (137 s).
// Constant memory, O(1) record, mergeable. No sample array anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmasweep {

class Histogram {
 public:
  static constexpr unsigned kSubBits = 11;                   // 2048 exact values
  static constexpr uint64_t kSubCount = uint64_t{1} << kSubBits;
  static constexpr uint64_t kHalf = kSubCount / 2;           // buckets per octave above that
  static constexpr unsigned kMaxExp = 37;                    // 2^37 ns ≈ 137 s
  static constexpr size_t kBuckets = kSubCount + (kMaxExp - kSubBits) * kHalf;

  Histogram() : counts_(kBuckets, 0) {}

  void record(uint64_t ns) {
    size_t i = index_of(ns);
    ++counts_[i];
    ++count_;
    sum_ += ns;
    sum_sq_ += static_cast<U128>(ns) * ns;
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
  }

  void merge(const Histogram& o);
  void reset();

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // The samples' standard deviation over n (population, as perftest's t_stdev), from
  // their exact sum of squares, not from the buckets.
  double stddev() const;
  // Value at quantile q in [0, 1] (0.99 = p99): the middle of the bucket that holds
  // the ceil(q * count)-th smallest sample, clamped to [min, max].
  double quantile(double q) const;

  static size_t index_of(uint64_t ns) {
    if (ns < kSubCount) return static_cast<size_t>(ns);
    unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(ns));  // >= kSubBits
    if (msb >= kMaxExp) return kBuckets - 1;
    unsigned shift = msb - (kSubBits - 1);                               // ns >> shift in [1024, 2048)
    return static_cast<size_t>(kSubCount + (msb - kSubBits) * kHalf + ((ns >> shift) - kHalf));
  }
  static uint64_t bucket_low(size_t i);   // smallest value in bucket i
  static uint64_t bucket_high(size_t i);  // largest value in bucket i

  const std::vector<uint64_t>& counts() const { return counts_; }

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  // Exact: 2^37 ns squared times 2^40 samples still fits in 128 bits.
  __extension__ typedef unsigned __int128 U128;
  U128 sum_sq_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace rdmasweep
