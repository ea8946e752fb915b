// qp_num -> QP index in O(1): an open-addressing hash table built once when the QPs
// are created. With a shared receive queue a receive completion names its QP only
// by qp_num; rdma-core's srq_pingpong scans all QPs and SPDK walks a tree instead.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace rdmasweep {

class QpnTable {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  QpnTable() = default;
  explicit QpnTable(const std::vector<uint32_t>& qpns) {
    size_t cap = 16;
    while (cap < 2 * qpns.size()) cap <<= 1;  // at most half full: short probe runs
    mask_ = cap - 1;
    slots_.assign(cap, Slot{kEmpty, 0});
    for (uint32_t i = 0; i < qpns.size(); ++i) {
      size_t s = home(qpns[i]);
      while (slots_[s].qpn != kEmpty) {
        if (slots_[s].qpn == qpns[i]) throw std::invalid_argument("duplicate qp_num in QpnTable");
        s = (s + 1) & mask_;
      }
      slots_[s] = Slot{qpns[i], i};
    }
  }

  // The QP index of `qpn`, or kMissing.
  uint32_t find(uint32_t qpn) const {
    for (size_t s = home(qpn);; s = (s + 1) & mask_) {
      if (slots_[s].qpn == qpn) return slots_[s].index;
      if (slots_[s].qpn == kEmpty) return kMissing;
    }
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;  // qp_num is 24 bits: never this
  struct Slot {
    uint32_t qpn;
    uint32_t index;
  };
  size_t home(uint32_t qpn) const { return (static_cast<uint64_t>(qpn) * 0x9E3779B97F4A7C15ull >> 32) & mask_; }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace rdmasweep
