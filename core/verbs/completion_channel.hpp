#pragma once

#include <fcntl.h>

#include "core/verbs/device.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep::verbs {

// Where a CQ armed with ibv_req_notify_cq signals new completions (--events). Its fd
// is non-blocking: the loops wait on it with poll() and a timeout, never forever.
class CompletionChannel {
 public:
  CompletionChannel() = default;
  explicit CompletionChannel(const Device& dev)
      : ch_(check_ptr(ibv_create_comp_channel(dev.get()), "ibv_create_comp_channel(" + dev.name() + ")"),
            "ibv_destroy_comp_channel") {
    int fd = ch_.get()->fd;
    check_errno(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1 ? -1 : 0, "fcntl(completion channel)");
  }
  ibv_comp_channel* get() const { return ch_.get(); }

 private:
  Handle<ibv_comp_channel, ibv_destroy_comp_channel> ch_;
};

}  // namespace rdmasweep::verbs
