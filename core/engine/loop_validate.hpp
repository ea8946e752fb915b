// --validate's device calls: the real ones (VerbsOps) with the pattern written before
// each post and checked where the data lands. The loops are the same templates; a
// point without --validate runs them on VerbsOps itself and pays nothing for this.
// Internal to core/loop_*.cpp.
//   SEND: each message is filled in its own send buffer (message_slots) before the
//     post; each receive's buffer is checked on completion, before it is reposted.
//   WRITE (lat only): the ping is filled except its last byte (the arrival tag); the
//     responder checks it before it answers.
//   READ: the target's regions hold message 0's pattern from setup; each completion
//     the initiator sees (every signaled READ) is checked in its landing buffer.
#pragma once

#include <cstdlib>
#include <string>

#include "core/engine/loop_common.hpp"
#include "core/engine/validate.hpp"

namespace rdmasweep::detail {

class CheckedOps {
 public:
  static constexpr bool kReadsEveryWrId = true;  // each message's pattern is a function of its sequence

  CheckedOps(LoopResources& r, VerbsOps& ops, Receives* rx)
      : ops_(ops), rx_(rx), r_(r), seen_(r.validate_seen), size_(r.cfg.work.size), stride_(r.msg_stride),
        slots_(r.msg_slots), op_(r.cfg.work.op), initiator_(r.role == Role::Initiator) {
    // WRITE's last byte is the tag the loops watch for; the pattern leaves it alone.
    check_len_ = op_ == Op::Write ? size_ - 1 : size_;
    // Tests prove a mismatch is caught: the sender changes one byte of this message on QP 0.
    if (const char* m = std::getenv("RDMASWEEP_TEST_CORRUPT_MESSAGE")) corrupt_ = std::strtoul(m, nullptr, 10);
  }

  int post(uint32_t q, ibv_send_wr* chain) {
    if (WrId::is_credit(chain->wr_id)) return ops_.post(q, chain);  // a credit READ carries no message
    for (ibv_send_wr* w = chain; w != nullptr; w = w->next) {
      const uint32_t seq = WrId::seq(w->wr_id);
      if (op_ == Op::Send || (op_ == Op::Write && initiator_)) {
        char* buf = r_.tx_region(q) + (slots_ > 1 ? (seq % slots_) * stride_ : 0);
        w->sg_list->addr = reinterpret_cast<uint64_t>(buf);
        fill_pattern(buf, check_len_, q, seq);
        if (seq == corrupt_ && q == 0 && check_len_ > 0) buf[check_len_ / 2] ^= 0x5a;
      } else if (op_ == Op::Write) {  // the responder's pong n answers ping n
        check_pattern(r_.rx_region(q), check_len_, q, seq, seq, "WRITE landed on");
      }
    }
    return ops_.post(q, chain);
  }

  int poll(int n, ibv_wc* wc) {
    const int got = ops_.poll(n, wc);
    if (op_ == Op::Read && initiator_) {
      for (int i = 0; i < got; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS || (wc[i].opcode & IBV_WC_RECV)) continue;  // the loop reports failures
        const uint32_t q = WrId::qp(wc[i].wr_id);
        check_pattern(r_.rx_region(q), size_, q, 0, WrId::seq(wc[i].wr_id), "READ returned on");
      }
    }
    return got;
  }

  uint32_t recv(const ibv_wc& wc) {
    if (op_ != Op::Send) return ops_.recv(wc);  // WRITE WITH IMMEDIATE: checked on post
    const uint32_t q = rx_->qp_of(wc);
    const uint32_t seq = seen_[q]++;
    if (wc.byte_len != size_)
      throw verbs::Error("--validate: SEND received on QP " + std::to_string(q) + " message " + std::to_string(seq) +
                         " has " + std::to_string(wc.byte_len) + " bytes, not " + std::to_string(size_) +
                         ": both sides must run the same rdmasweep version");
    char* buf = r_.rx_region(rx_->shared() ? 0 : q) + WrId::seq(wc.wr_id) * stride_;
    check_pattern(buf, size_, q, seq, seq, "SEND received on");
    return rx_->complete_at(wc, buf, static_cast<uint32_t>(stride_));
  }

 private:
  VerbsOps& ops_;
  Receives* rx_;
  LoopResources& r_;
  std::vector<uint32_t>& seen_;
  const uint64_t size_, stride_;
  const uint32_t slots_;
  const Op op_;
  const bool initiator_;
  uint64_t check_len_;
  uint64_t corrupt_ = UINT64_MAX;
};

// The device calls an initiator's loop (flat out or paced) runs on, chosen once before
// it: the peer's SENDs taken on the same CQ (--bidir SEND, counted in r.arrivals), or
// every message checked (--validate, never with --bidir), or the device's own. `run` is
// called as run(ops, arrivals), arrivals null but with --bidir SEND.
template <class Run>
auto with_initiator_ops(LoopResources& r, Poller& poller, Run&& run) {
  if (both_ways_send(r.cfg)) {
    Receives receives(r);
    VerbsOps ops(r, poller, &receives);
    return run(ops, &r.arrivals);
  }
  VerbsOps ops(r, poller, nullptr);
  if (r.cfg.knobs.validate) {
    CheckedOps checked(r, ops, nullptr);
    return run(checked, static_cast<Arrivals*>(nullptr));
  }
  return run(ops, static_cast<Arrivals*>(nullptr));
}

}  // namespace rdmasweep::detail
