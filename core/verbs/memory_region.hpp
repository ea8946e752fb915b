// A page-aligned buffer and its registration, never made per operation. A second
// registration of the same memory (`over`) can carry the remote access of one test
// and be dropped when it ends, so its rkey dies with the test.
#pragma once

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "core/verbs/errors.hpp"
#include "core/verbs/protection_domain.hpp"

namespace rdmasweep::verbs {

class MemoryRegion {
 public:
  MemoryRegion() = default;
  // `huge`: on 2 MiB huge pages (--hugepages), mapped from the reserved pool.
  MemoryRegion(const ProtectionDomain& pd, size_t bytes, int access, bool huge = false) : bytes_(bytes) {
    const size_t page = huge ? kHugePage : 4096;
    const size_t rounded = (bytes + page - 1) / page * page;
    void* p = nullptr;
    if (huge) {
      p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
      if (p == MAP_FAILED)
        throw Error("--hugepages: cannot map " + std::to_string(rounded >> 20) + " MiB of 2 MiB huge pages (" +
                    describe_errno(errno) + "): too few are free (HugePages_Free in /proc/meminfo); reserve more "
                    "with sysctl vm.nr_hugepages=N");
    } else if (posix_memalign(&p, 4096, rounded) != 0) {
      throw Error("cannot allocate " + std::to_string(bytes) + " bytes for the benchmark buffer");
    }
    buf_ = std::unique_ptr<char, Free>(static_cast<char*>(p), Free{rounded, huge});
    std::memset(p, 0, rounded);
    data_ = buf_.get();
    reg(pd, access);
  }
  static constexpr size_t kHugePage = size_t{2} << 20;
  // Registers `bytes` at `p`, owned by someone else (who must outlive this).
  static MemoryRegion over(const ProtectionDomain& pd, char* p, size_t bytes, int access) {
    MemoryRegion m;
    m.data_ = p;
    m.bytes_ = bytes;
    m.reg(pd, access);
    return m;
  }

  MemoryRegion(MemoryRegion&&) = default;
  MemoryRegion& operator=(MemoryRegion&& o) noexcept {
    mr_ = {};  // deregister before the old memory may be freed
    buf_ = std::move(o.buf_);
    mr_ = std::move(o.mr_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    return *this;
  }

  explicit operator bool() const { return static_cast<bool>(mr_); }
  char* data() const { return data_; }
  size_t size() const { return bytes_; }
  uint32_t lkey() const { return mr_.get()->lkey; }
  uint32_t rkey() const { return mr_.get()->rkey; }

 private:
  void reg(const ProtectionDomain& pd, int access) {
    mr_ = Handle<ibv_mr, ibv_dereg_mr>(
        check_ptr(ibv_reg_mr(pd.get(), data_, bytes_, access),
                  "ibv_reg_mr(" + std::to_string(bytes_) + " bytes, access 0x" + hex(access) + ")"),
        "ibv_dereg_mr");
  }
  static std::string hex(int v) {
    char b[16];
    std::snprintf(b, sizeof b, "%x", v);
    return b;
  }
  struct Free {  // no member initializers: unique_ptr needs it default-constructible here
    size_t bytes;
    bool huge;
    void operator()(char* p) const {
      if (huge) munmap(p, bytes);
      else std::free(p);
    }
  };
  // Declared before mr_ so the registration is dropped before the memory is freed.
  std::unique_ptr<char, Free> buf_;
  Handle<ibv_mr, ibv_dereg_mr> mr_;
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace rdmasweep::verbs
