// What every check of a configuration throws: one line naming the field and why.
#pragma once

#include <stdexcept>

namespace rdmasweep {

class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace rdmasweep
