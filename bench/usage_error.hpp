// A bad command line: entry.cpp prints its one line and exits 2.
#pragma once

#include <stdexcept>

namespace rdmasweep::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rdmasweep::cli
