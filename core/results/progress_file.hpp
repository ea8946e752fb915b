// --progress-file FILE: one line per step of a run, appended as the step happens, so that a
// script (a lab test, a fault injector, a monitor) can act at a known moment of a
// point — a fault while its traffic flows, a signal to a rank that has a flow — from
// what the run says, instead of guessing the moment from outside. Each line:
//
//   EVENT NAME pid=PID [rank=R] t=SECONDS
//
// EVENT: start (a point begins), traffic (its QPs are connected and its loops post
// from now on, warm-up first), done, failed (the point's result or error is in), end
// (the run is over). NAME is the point's name; t the monotonic clock, for the time
// between steps. Every line is one write() to a file opened O_APPEND, so the lines of
// several processes (mesh ranks on one host) never interleave.
#pragma once

#include <string>

namespace rdmasweep {

class ProgressFile {
 public:
  ProgressFile() = default;  // says nothing
  // Opens (creates) `path` for appending; throws std::runtime_error naming it when it
  // cannot. `tag` follows the pid on every line (mesh: "rank=R").
  explicit ProgressFile(const std::string& path, const std::string& tag = "");
  ~ProgressFile();
  ProgressFile(const ProgressFile&) = delete;
  ProgressFile& operator=(const ProgressFile&) = delete;

  void say(const char* event, const std::string& name) const;
  bool on() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string tail_;  // " pid=PID[ TAG]"
};

}  // namespace rdmasweep
