#include "core/verbs/errors.hpp"

#include <cerrno>
#include <cstring>

namespace rdmasweep::verbs {

std::string describe_errno(int err) {
  if (err == 0) return "the provider gave no reason (errno 0)";
  std::string s = std::strerror(err);
  if (err == ENOMEM)
    s += " (if this was memory registration, the locked-memory limit is probably too low: "
         "check `ulimit -l` and raise it, e.g. `ulimit -l unlimited` or memlock in "
         "/etc/security/limits.conf)";
  else if (err == EPERM || err == EACCES)
    s += " (permission denied: check access to /dev/infiniband/uverbs*)";
  return s;
}

void check_errno(int rc, const std::string& call) {
  if (rc != 0) {
    int err = errno;
    throw Error(call + " failed: " + describe_errno(err), err);
  }
}

void check_rc(int rc, const std::string& call) {
  if (rc != 0) throw Error(call + " failed: " + describe_errno(rc), rc);
}

static const char* status_hint(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_RETRY_EXC_ERR:
      return "the peer did not answer: is it still running, and are both sides using the right GID "
             "index (-x) and a reachable address?";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "the receiver had no receive posted: raise --rx-depth";
    case IBV_WC_REM_ACCESS_ERR:
      return "the peer's memory region does not allow this access or the address/rkey is wrong";
    case IBV_WC_REM_INV_REQ_ERR:
      return "the peer rejected the request: its QP or memory region does not allow this access (remote access "
             "flags), or the message is larger than its receive buffer or max message size";
    case IBV_WC_LOC_LEN_ERR:
      return "message larger than the receive buffer or the port's max message size";
    case IBV_WC_WR_FLUSH_ERR:
      return "the QP went to the error state after an earlier failure";
    default:
      return nullptr;
  }
}

std::string completion_error(const ibv_wc& wc, unsigned qp_index, const char* posted) {
  // For failed completions only wr_id, status, qp_num and vendor_err are valid.
  std::string s = "work completion failed on QP " + std::to_string(qp_index) + " (qp_num " +
                  std::to_string(wc.qp_num) + ", " + posted + "): " + ibv_wc_status_str(wc.status) +
                  " (vendor_err " + std::to_string(wc.vendor_err) + ")";
  if (const char* h = status_hint(wc.status)) s += ": " + std::string(h);
  return s;
}

}  // namespace rdmasweep::verbs
