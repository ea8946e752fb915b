#pragma once

#include <string>

#include "core/verbs/errors.hpp"
#include "core/verbs/protection_domain.hpp"

namespace rdmasweep::verbs {

// One receive queue shared by many QPs (--srq): receives are posted once for all of
// them, and a completion names its QP only by qp_num.
class SharedReceiveQueue {
 public:
  SharedReceiveQueue() = default;
  SharedReceiveQueue(const ProtectionDomain& pd, uint32_t max_wr) {
    ibv_srq_init_attr a{};
    a.attr.max_wr = max_wr;
    a.attr.max_sge = 1;
    srq_ = Handle<ibv_srq, ibv_destroy_srq>(
        check_ptr(create_clearing_errno([&] { return ibv_create_srq(pd.get(), &a); }), "ibv_create_srq(max_wr " + std::to_string(max_wr) + ")"),
        "ibv_destroy_srq");
  }
  ibv_srq* get() const { return srq_.get(); }

 private:
  Handle<ibv_srq, ibv_destroy_srq> srq_;
};

}  // namespace rdmasweep::verbs
