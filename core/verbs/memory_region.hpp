// A page-aligned buffer and its registration. Registered once per test, never per
// operation, with only the remote access the test needs.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "core/verbs/errors.hpp"
#include "core/verbs/protection_domain.hpp"

namespace rdmasweep::verbs {

class MemoryRegion {
 public:
  MemoryRegion() = default;
  MemoryRegion(const ProtectionDomain& pd, size_t bytes, int access) : bytes_(bytes) {
    void* p = nullptr;
    size_t rounded = (bytes + 4095) / 4096 * 4096;
    if (posix_memalign(&p, 4096, rounded) != 0)
      throw Error("cannot allocate " + std::to_string(bytes) + " bytes for the benchmark buffer");
    buf_.reset(static_cast<char*>(p));
    std::memset(p, 0, rounded);
    mr_ = Handle<ibv_mr, ibv_dereg_mr>(
        check_ptr(ibv_reg_mr(pd.get(), p, bytes, access),
                  "ibv_reg_mr(" + std::to_string(bytes) + " bytes, access 0x" + hex(access) + ")"),
        "ibv_dereg_mr");
  }

  char* data() const { return buf_.get(); }
  size_t size() const { return bytes_; }
  uint32_t lkey() const { return mr_.get()->lkey; }
  uint32_t rkey() const { return mr_.get()->rkey; }

 private:
  static std::string hex(int v) {
    char b[16];
    std::snprintf(b, sizeof b, "%x", v);
    return b;
  }
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  // Declared before mr_ so the registration is dropped before the memory is freed.
  std::unique_ptr<char, Free> buf_;
  Handle<ibv_mr, ibv_dereg_mr> mr_;
  size_t bytes_ = 0;
};

}  // namespace rdmasweep::verbs
