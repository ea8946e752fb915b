#include "core/measure/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace rdmasweep {

// The exact q-quantile as the histogram defines it: the ceil(q*n)-th smallest sample.
static double exact_quantile(std::vector<uint64_t> v, double q) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return static_cast<double>(v[std::max<size_t>(rank, 1) - 1]);
}

static void expect_within_precision(const std::vector<uint64_t>& samples) {
  Histogram h;
  for (uint64_t s : samples) h.record(s);
  ASSERT_EQ(h.count(), samples.size());
  for (double q : {0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    double exact = exact_quantile(samples, q);
    // Stated precision: 1/1024 of the value above 2048 ns, exact (±0.5) below.
    EXPECT_NEAR(h.quantile(q), exact, exact / 1024 + 0.5) << "q=" << q;
  }
  EXPECT_EQ(h.min(), *std::min_element(samples.begin(), samples.end()));
  EXPECT_EQ(h.max(), *std::max_element(samples.begin(), samples.end()));
}

TEST(Histogram, UniformMicroseconds) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<uint64_t> d(1000, 1000000);
  std::vector<uint64_t> v(200000);
  for (auto& x : v) x = d(rng);
  expect_within_precision(v);
}

TEST(Histogram, ExponentialTail) {
  std::mt19937_64 rng(2);
  std::exponential_distribution<double> d(1.0 / 50000.0);
  std::vector<uint64_t> v(200000);
  for (auto& x : v) x = static_cast<uint64_t>(d(rng)) + 100;
  expect_within_precision(v);
}

TEST(Histogram, LogNormalAcrossDecades) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> d(10.0, 2.5);  // ~100 ns to seconds
  std::vector<uint64_t> v(200000);
  for (auto& x : v) x = std::min<uint64_t>(static_cast<uint64_t>(d(rng)) + 100, 100'000'000'000ull);
  expect_within_precision(v);
}

TEST(Histogram, ExtremesOfTheRange) {
  expect_within_precision({100, 100, 101, 2047, 2048, 2049, 100'000'000'000ull});
}

TEST(Histogram, MergeEqualsRecordingEverything) {
  Histogram a, b, all;
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<uint64_t> d(100, 10'000'000);
  for (int i = 0; i < 50000; ++i) {
    uint64_t x = d(rng);
    (i % 3 ? a : b).record(x);
    all.record(x);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.counts(), all.counts());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  EXPECT_DOUBLE_EQ(a.stddev(), all.stddev());
  EXPECT_EQ(a.quantile(0.99), all.quantile(0.99));
}

// Population standard deviation (over n, as perftest's t_stdev) of the samples
// themselves, not of their buckets: exact where the buckets are 0.1% wide, and where a
// tiny spread sits on a large value (a double's E[x^2] - mean^2 would lose it).
TEST(Histogram, StddevIsTheSamplesOwn) {
  Histogram h;
  EXPECT_EQ(h.stddev(), 0.0) << "no samples";
  for (uint64_t x : {2000, 4000, 4000, 4000, 5000, 5000, 7000, 9000}) h.record(x);
  EXPECT_DOUBLE_EQ(h.stddev(), 2000.0);  // mean 5000, squares' mean 4e6
  Histogram big;
  for (int i = 0; i < 1000000; ++i) big.record(100'000'000'000ull + (i % 2 ? 3 : 1));
  EXPECT_NEAR(big.stddev(), 1.0, 1e-6) << "1 ns of spread on 100 s";
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> d(10.0, 2.0);
  Histogram wide;
  double sum = 0, sum_sq = 0;
  std::vector<uint64_t> v(100000);
  for (auto& x : v) {
    x = static_cast<uint64_t>(d(rng)) + 100;
    wide.record(x);
    sum += static_cast<double>(x);
  }
  const double mean = sum / static_cast<double>(v.size());
  for (uint64_t x : v) sum_sq += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
  EXPECT_NEAR(wide.stddev(), std::sqrt(sum_sq / static_cast<double>(v.size())), 1e-9 * wide.stddev());
  wide.reset();
  EXPECT_EQ(wide.stddev(), 0.0);
}

TEST(Histogram, BucketBoundsTileTheRange) {
  for (size_t i = 0; i + 1 < Histogram::kBuckets - 1; ++i) {
    ASSERT_EQ(Histogram::bucket_high(i) + 1, Histogram::bucket_low(i + 1)) << i;
    ASSERT_EQ(Histogram::index_of(Histogram::bucket_low(i)), i);
    ASSERT_EQ(Histogram::index_of(Histogram::bucket_high(i)), i);
  }
}

// The last bucket takes every value at or above the top of the range (2^37 ns), as
// well as the top of the last octave: it is open-ended, its quantiles stay within
// [its low bound, the largest value recorded], and the maximum is kept exactly.
TEST(Histogram, LastBucketHoldsEverythingFromTheTopUp) {
  const size_t last = Histogram::kBuckets - 1;
  const uint64_t top = uint64_t{1} << Histogram::kMaxExp;
  EXPECT_EQ(Histogram::index_of(top - 1), last);
  EXPECT_EQ(Histogram::index_of(top), last);
  EXPECT_EQ(Histogram::index_of(top * 8), last);
  EXPECT_EQ(Histogram::index_of(UINT64_MAX), last);
  EXPECT_LT(Histogram::index_of(Histogram::bucket_low(last) - 1), last);
  EXPECT_EQ(Histogram::bucket_high(last - 1) + 1, Histogram::bucket_low(last));
  EXPECT_EQ(Histogram::bucket_high(last), UINT64_MAX);

  Histogram h;
  for (int i = 0; i < 98; ++i) h.record(1000);
  h.record(top);
  h.record(top * 8);
  EXPECT_EQ(h.counts()[last], 2u);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.max(), top * 8);
  EXPECT_EQ(h.quantile(0.5), 1000.0);
  for (double q : {0.99, 0.999, 1.0}) {
    EXPECT_GE(h.quantile(q), static_cast<double>(Histogram::bucket_low(last))) << q;
    EXPECT_LE(h.quantile(q), static_cast<double>(top * 8)) << q;
  }
  Histogram one;
  one.record(top * 4);  // alone in the bucket: reported exactly
  EXPECT_EQ(one.quantile(0.5), static_cast<double>(top * 4));
  EXPECT_DOUBLE_EQ(one.mean(), static_cast<double>(top * 4));
}

TEST(Histogram, EmptyAndReset) {
  Histogram h;
  EXPECT_EQ(h.quantile(0.5), 0.0);
  h.record(5000);
  EXPECT_EQ(h.count(), 1u);
  h.reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.max(), 0u);
}

}  // namespace rdmasweep
