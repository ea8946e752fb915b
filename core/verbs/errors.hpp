// The three verbs error conventions, each with its own small checker:
//   1. calls that return NULL (or -1) and set errno        -> check_ptr / check_errno
//   2. calls that return the error number (ibv_post_*, ibv_modify_qp) -> check_rc
//   3. a failed work completion                              -> completion_error
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <stdexcept>
#include <string>

namespace rdmasweep::verbs {

// A setup or run-time failure of the RDMA stack. The message names the call and
// the arguments that matter, and says how to fix it where we know.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int err = 0) : std::runtime_error(what), errnum_(err) {}
  int errnum() const { return errnum_; }

 private:
  int errnum_;
};

// A failed work completion, with its status: a flush is the effect of an earlier
// failure, whose cause a caller may find elsewhere (the peer's report).
class CompletionError : public Error {
 public:
  CompletionError(const std::string& what, ibv_wc_status status) : Error(what), status_(status) {}
  ibv_wc_status status() const { return status_; }

 private:
  ibv_wc_status status_;
};

// Text for an errno value, with a hint for the errors users hit most often.
std::string describe_errno(int err);

// Calls a create (QP, CQ, SRQ) with errno cleared: a provider can fail one without
// setting errno (Soft-iWARP's did, see Device), and a stale errno from an earlier
// call would then name the wrong cause.
template <typename Create>
auto create_clearing_errno(Create create) -> decltype(create()) {
  errno = 0;
  return create();
}

// Convention 1: the call returned NULL and set errno.
template <typename T>
T* check_ptr(T* p, const std::string& call) {
  if (p == nullptr) {
    int err = errno;
    throw Error(call + " failed: " + describe_errno(err), err);
  }
  return p;
}

// Convention 1b: the call returned non-zero (usually -1) and set errno.
void check_errno(int rc, const std::string& call);

// Convention 2: the call returned the error number itself (errno is not set).
void check_rc(int rc, const std::string& call);

// Convention 3: a work completion with a non-success status.
// `posted` names what the failed WR was ("RDMA_WRITE", "RECV"...): a failed
// completion's own opcode field is not valid.
std::string completion_error(const ibv_wc& wc, unsigned qp_index, const char* posted);


}  // namespace rdmasweep::verbs
