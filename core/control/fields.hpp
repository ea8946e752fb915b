// Typed access to a control message's JSON fields: every missing field, wrong type or
// value out of range becomes a ProtocolError, so nothing unchecked reaches the engine.
#pragma once

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/control/protocol_error.hpp"

namespace rdmasweep::control {

// Typed field access that turns every type or range problem into a ProtocolError.
template <typename T>
inline T field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw ProtocolError(std::string("control message lacks '") + key + "'");
  try {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string()) throw ProtocolError("");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) throw ProtocolError("");
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!it->is_number()) throw ProtocolError("");
    } else {
      if (!it->is_number_unsigned() || it->template get<uint64_t>() > std::numeric_limits<T>::max()) throw ProtocolError("");
    }
    return it->template get<T>();
  } catch (const std::exception&) {
    throw ProtocolError(std::string("control message field '") + key + "' has the wrong type or range");
  }
}

template <typename T>
inline std::vector<T> array_field(const nlohmann::json& j, const char* key, uint32_t expected) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) throw ProtocolError(std::string("control message lacks array '") + key + "'");
  if (it->size() != expected)
    throw ProtocolError(std::string("control message array '") + key + "' has " + std::to_string(it->size()) +
                        " entries, expected " + std::to_string(expected));
  std::vector<T> out;
  out.reserve(expected);
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > std::numeric_limits<T>::max())
      throw ProtocolError(std::string("control message array '") + key + "' holds a bad value");
    out.push_back(v.get<T>());
  }
  return out;
}

}  // namespace rdmasweep::control
