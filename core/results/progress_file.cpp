#include "core/results/progress_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace rdmasweep {

ProgressFile::ProgressFile(const std::string& path, const std::string& tag) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("--progress-file: cannot open " + path + " for appending: " + std::strerror(errno) +
                             " (give a file in a writable directory)");
  tail_ = " pid=" + std::to_string(::getpid()) + (tag.empty() ? "" : " " + tag);
}

ProgressFile::~ProgressFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ProgressFile::say(const char* event, const std::string& name) const {
  if (fd_ < 0) return;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  char t[32];
  std::snprintf(t, sizeof t, " t=%lld.%03ld\n", static_cast<long long>(ts.tv_sec), ts.tv_nsec / 1000000);
  const std::string line = std::string(event) + " " + name + tail_ + t;
  // One write: O_APPEND keeps it whole beside other writers'. A failed write loses
  // only this line; the run itself goes on.
  [[maybe_unused]] ssize_t n = ::write(fd_, line.data(), line.size());
}

}  // namespace rdmasweep
