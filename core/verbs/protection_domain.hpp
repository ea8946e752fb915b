#pragma once

#include "core/verbs/device.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep::verbs {

class ProtectionDomain {
 public:
  ProtectionDomain() = default;
  explicit ProtectionDomain(const Device& dev)
      : pd_(check_ptr(ibv_alloc_pd(dev.get()), "ibv_alloc_pd(" + dev.name() + ")"), "ibv_dealloc_pd") {}
  ibv_pd* get() const { return pd_.get(); }

 private:
  Handle<ibv_pd, ibv_dealloc_pd> pd_;
};

}  // namespace rdmasweep::verbs
