// The combinations that cannot run, in one table: which knobs (or options) meet,
// when, and the one-line reason with its fix. validate() refuses a point from it,
// the client's option checks take their words from it, `rdmasweep help --refusals`
// prints it for tools (tools/combos), and docs/usage.md's "cannot combine" list is
// rendered from it (tests/unit/refusals_test.cpp keeps the two equal).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace rdmasweep {

struct TestConfig;

// What a row looks at beyond the point's knobs: how the client connects the QPs.
struct PointContext {
  bool cm = false;  // client --cm: RDMA-CM connects RC QPs
};

// Throws ConfigError naming the field and why: each knob's range, then the table of
// combinations that cannot run (core/config/refusals.hpp). Device limits are checked later,
// by the connection, against the opened device.
void validate(const TestConfig& c, const PointContext& ctx = {});

struct Refusal {
  const char* id;      // stable name, e.g. "validate-bidir"
  const char* knobs;   // knob keys and options involved, comma-separated
  const char* when;    // the condition, for people
  const char* reason;  // one line with its fix; {key} stands for the point's value of key
  // True when the point cannot run. nullptr: a pair of command-line options, checked
  // by the parser, which takes the row's words (refusal_text(id)).
  bool (*refuses)(const TestConfig&, const PointContext&);
};

const std::vector<Refusal>& refusals();  // in the order validate() checks them
const Refusal& refusal(const std::string& id);  // std::out_of_range for an unknown id

// The row's reason with {key} filled from `c`: a knob's value (named kinds by name),
// {cq_need} (required_cq_entries) or {tx_depth_plus_1}.
std::string refusal_text(const Refusal& r, const TestConfig& c);
// A row without placeholders (the option pairs).
std::string refusal_text(const std::string& id);

// Throws ConfigError with the first row that refuses `c`.
void check_refusals(const TestConfig& c, const PointContext& ctx = {});

// `rdmasweep help --refusals`: [{id, knobs, when, reason}], reason with its {key}s.
nlohmann::json refusals_json();
// docs/usage.md's generated "cannot combine" table (between its marker lines).
std::string refusals_markdown();

}  // namespace rdmasweep
