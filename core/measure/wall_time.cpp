#include "core/measure/wall_time.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace rdmasweep {

namespace {

struct Part {
  const char* name;  // in the summary line
  const char* key;   // in JSON
  double WallTime::*field;
};
constexpr Part kParts[] = {{"setup", "setup_seconds", &WallTime::setup},
                           {"warm-up", "warmup_seconds", &WallTime::warmup},
                           {"measured", "measured_seconds", &WallTime::measured},
                           {"counters", "counters_seconds", &WallTime::counters},
                           {"control", "control_seconds", &WallTime::control},
                           {"writing", "writing_seconds", &WallTime::writing}};

}  // namespace

WallTime& WallTime::operator+=(const WallTime& o) {
  for (const Part& p : kParts) this->*p.field += o.*p.field;
  return *this;
}

double WallTime::sum() const {
  double s = 0;
  for (const Part& p : kParts) s += this->*p.field;
  return s;
}

static std::string share(const char* name, double seconds, double wall) {
  char b[80];
  std::snprintf(b, sizeof b, "%s %.2f s (%.1f%%)", name, seconds, wall > 0 ? 100 * seconds / wall : 0);
  return b;
}

std::string wall_summary(const WallTime& parts, double wall) {
  char b[32];
  std::snprintf(b, sizeof b, "wall %.1f s: ", wall);
  std::string s = b;
  for (const Part& p : kParts) s += share(p.name, parts.*p.field, wall) + ", ";
  return s + share("other", wall - parts.sum(), wall);
}

nlohmann::json wall_json(const WallTime& parts, double wall) {
  nlohmann::json j = {{"wall_seconds", wall}};
  for (const Part& p : kParts) j[p.key] = parts.*p.field;
  j["other_seconds"] = wall - parts.sum();
  return j;
}

}  // namespace rdmasweep
