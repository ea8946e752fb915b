// The knob table at run time: one Knob per row of core/config/knob_table.hpp, with its
// accessors on TestConfig and SweepSpec, and what is generated from it: point names,
// the TestConfig JSON, the range checks, `help --knobs`.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config/knob_table.hpp"

namespace rdmasweep {

// Kinds whose values are names (Op, Mode, Scope, Transport, Arrivals): sweeps and JSON hold the names.
bool named_kind(KnobKind kind);
uint64_t parse_named(KnobKind kind, const std::string& name);  // ConfigError for an unknown name
const char* named_value(KnobKind kind, uint64_t v);

struct TestConfig;
struct SweepSpec;

// One row of the table at run time. Every value goes through uint64_t: an Op,
// Mode or Scope as its enumerator, a Flag as 0 or 1, inline "auto" as kInlineAuto.
struct Knob {
  const char* key;
  KnobKind kind;
  bool loop;         // a LoopKnobs field (a loop knob option), not a Workload one
  uint64_t def;
  const char* tag;   // nullptr: in the fixed head of the name
  int nest;
  const char* option;
  uint64_t lo, hi;
  bool shapes;
  const char* help;
  uint64_t (*get)(const TestConfig&);
  void (*set)(TestConfig&, uint64_t);
  std::vector<uint64_t> (*axis)(const SweepSpec&);           // the sweep's values
  void (*set_axis)(SweepSpec&, const std::vector<uint64_t>&);
};

const std::array<Knob, kKnobCount>& knobs();  // in table (--help and name) order
const Knob* find_knob(const std::string& key);  // nullptr: not a knob
const Knob& knob(const std::string& key);       // a key that must exist (std::out_of_range)
std::string knob_flag(const Knob& k);           // "--tx-depth"

// A value as a point's name and a refusal say it: "send", "auto", "10gbps", "128".
std::string knob_text(const Knob& k, uint64_t v);
// A value as TestConfig JSON writes it ("send", "auto", true, 128) and reads it back
// (ConfigError naming the key).
nlohmann::json knob_json(const Knob& k, uint64_t v);
uint64_t knob_from_json(const Knob& k, const nlohmann::json& v);
// validate()'s check of one value against [lo, hi] (ConfigError naming the key).
void check_knob_range(const Knob& k, uint64_t v);

// `rdmasweep help --knobs`: one object per knob, {key, tag, flag, default, help}.
nlohmann::json knobs_table_json();

// Benchmark name that encodes the point, e.g. "write/bw/qps:16/size:4096/cq:1024".
std::string point_name(const TestConfig& c);

void to_json(nlohmann::json& j, const TestConfig& c);
void from_json(const nlohmann::json& j, TestConfig& c);  // strict: unknown keys rejected

}  // namespace rdmasweep
