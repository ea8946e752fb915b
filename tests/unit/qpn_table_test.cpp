#include "core/engine/qpn_table.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace rdmasweep {

TEST(QpnTable, FindsEveryQpAndNothingElse) {
  std::mt19937 rng(7);
  std::set<uint32_t> seen;
  std::vector<uint32_t> qpns;
  while (qpns.size() < 4096) {
    uint32_t q = rng() & 0xffffff;
    if (seen.insert(q).second) qpns.push_back(q);
  }
  QpnTable t(qpns);
  for (uint32_t i = 0; i < qpns.size(); ++i) ASSERT_EQ(t.find(qpns[i]), i);
  int missing = 0;
  for (int k = 0; k < 10000; ++k) {
    uint32_t q = rng() & 0xffffff;
    if (!seen.count(q)) missing += t.find(q) == QpnTable::kMissing;
    else ++missing;
  }
  EXPECT_EQ(missing, 10000);
}

TEST(QpnTable, SequentialQpnsAsDevicesHandThemOut) {
  std::vector<uint32_t> qpns;
  for (uint32_t q = 17; q < 17 + 1024; ++q) qpns.push_back(q);
  QpnTable t(qpns);
  for (uint32_t i = 0; i < qpns.size(); ++i) ASSERT_EQ(t.find(qpns[i]), i);
  EXPECT_EQ(t.find(16), QpnTable::kMissing);
  EXPECT_EQ(t.find(17 + 1024), QpnTable::kMissing);
}

TEST(QpnTable, RejectsDuplicates) { EXPECT_THROW(QpnTable({5, 9, 5}), std::invalid_argument); }

}  // namespace rdmasweep
