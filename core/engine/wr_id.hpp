// The 64-bit wr_id packs (QP index, sequence number) so every completion on the
// shared CQ is routed back to its QP with one shift: no lookup, no scan.
#pragma once

#include <cstdint>

namespace rdmasweep {

struct WrId {
  static constexpr unsigned kSeqBits = 32;
  static constexpr uint64_t kSeqMask = (uint64_t{1} << kSeqBits) - 1;
  static constexpr uint32_t kMaxQps = uint32_t{1} << 24;

  static constexpr uint64_t encode(uint32_t qp_index, uint32_t seq) {
    return (static_cast<uint64_t>(qp_index) << kSeqBits) | seq;
  }
  static constexpr uint32_t qp(uint64_t wr_id) { return static_cast<uint32_t>(wr_id >> kSeqBits); }
  static constexpr uint32_t seq(uint64_t wr_id) { return static_cast<uint32_t>(wr_id & kSeqMask); }

  // A credit READ (core/engine/send_credits.hpp) of QP `qp_index`: its top bit sets it apart
  // from the loop's own WRs (the QP field never reaches it: kMaxQps).
  static constexpr uint64_t kCreditBit = uint64_t{1} << 63;
  static constexpr uint64_t credit(uint32_t qp_index) { return kCreditBit | encode(qp_index, 0); }
  static constexpr bool is_credit(uint64_t wr_id) { return (wr_id & kCreditBit) != 0; }
  static constexpr uint32_t credit_qp(uint64_t wr_id) { return qp(wr_id & ~kCreditBit); }
};

}  // namespace rdmasweep
