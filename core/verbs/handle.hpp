// Move-only ownership of one verbs object. Each RAII type in this folder wraps one
// of these; the destructor logs a failed destroy and never throws.
#pragma once

#include <cstdio>
#include <cstring>
#include <utility>

namespace rdmasweep::verbs {

template <typename T, int (*Destroy)(T*)>
class Handle {
 public:
  Handle() = default;
  Handle(T* p, const char* destroy_name) : p_(p), name_(destroy_name) {}
  Handle(Handle&& o) noexcept : p_(std::exchange(o.p_, nullptr)), name_(o.name_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      name_ = o.name_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  T* get() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

  void reset() {
    if (p_ == nullptr) return;
    if (int rc = Destroy(p_); rc != 0)
      std::fprintf(stderr, "rdmasweep: warning: %s failed: %s\n", name_, std::strerror(rc < 0 ? -rc : rc));
    p_ = nullptr;
  }

 private:
  T* p_ = nullptr;
  const char* name_ = "";
};

}  // namespace rdmasweep::verbs
