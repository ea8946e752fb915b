#pragma once

#include "core/verbs/device.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep::verbs {

class CompletionQueue {
 public:
  CompletionQueue() = default;
  CompletionQueue(const Device& dev, int depth, ibv_comp_channel* channel = nullptr)
      : cq_(check_ptr(create_clearing_errno([&] { return ibv_create_cq(dev.get(), depth, nullptr, channel, 0); }),
                      "ibv_create_cq(depth " + std::to_string(depth) + ", device max_cqe " +
                          std::to_string(dev.attr().max_cqe) + ")"),
            "ibv_destroy_cq"),
        depth_(depth) {}
  ibv_cq* get() const { return cq_.get(); }
  int depth() const { return depth_; }

 private:
  Handle<ibv_cq, ibv_destroy_cq> cq_;
  int depth_ = 0;
};

}  // namespace rdmasweep::verbs
