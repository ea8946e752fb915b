// What every control-message decoder throws on input it cannot take.
#pragma once

#include <stdexcept>

namespace rdmasweep::control {

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rdmasweep::control
