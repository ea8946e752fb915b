// libFuzzer target for the sweep configuration: JSON sweep files (configs/*.json)
// and command-line overrides. Contract under test: apply_json, apply_override,
// parse_axis and expand return or throw ConfigError, for any input; and every
// point expand() returns is valid. A crash, a sanitizer report or any other
// exception escaping is a bug.
//
// Input format: a JSON sweep file, optionally followed by a line "--" and then
// override lines "key=value" (as `--set key=value` would give). Lines without '='
// are parsed as axis text for "qps" and for "size" (sizes take units).
//
// Harness limit, not a bug: expand() legitimately makes the full product of the
// axes (up to a million points); sweeps over 10000 points are not expanded here,
// to keep each run fast.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/config/knobs.hpp"
#include "core/config/sweep.hpp"

using namespace rdmasweep;
using nlohmann::json;

namespace {

constexpr uint64_t kMaxPoints = 10000;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_sweep: %s\n", what.c_str());
  std::abort();
}

void check_axis(const std::string& key, const std::string& text) {
  std::vector<uint64_t> v;
  try {
    v = parse_axis(key, text);
  } catch (const ConfigError&) {
    return;
  }
  if (v.empty()) fail("parse_axis(" + key + ", '" + text + "') returned no value");
  if (v.size() > 100000) fail("parse_axis(" + key + ", '" + text + "') returned over 100000 values");
}

uint64_t points(const SweepSpec& s) {
  uint64_t n = 1;
  for (const Knob& kn : knobs()) {  // every axis of the sweep (core/config/knob_table.hpp)
    size_t k = kn.axis(s).size();
    if (k == 0) return 0;
    n *= k;  // n <= kMaxPoints before, k < 2^40: no overflow
    if (n > kMaxPoints) return kMaxPoints + 1;
  }
  return n;
}

void check_point(const TestConfig& c) {
  const std::string name = point_name(c);
  try {
    validate(c);
  } catch (const ConfigError& e) {
    fail("expand returned an invalid point " + name + ": " + e.what());
  }
  // validate()'s own rule, in arithmetic that cannot wrap: a window of post_list
  // WRs plus the unsignaled run before a signaled one must fit in the send queue.
  const LoopKnobs& k = c.knobs;
  if (uint64_t{k.signal_every} + k.post_list > uint64_t{k.tx_depth} + 1)
    fail("expand returned point " + name + " with signal_every " + std::to_string(k.signal_every) + " + post_list " +
         std::to_string(k.post_list) + " over tx_depth + 1 (" + std::to_string(uint64_t{k.tx_depth} + 1) + ")");
  if (k.cq_depth != 0 && k.cq_depth < required_cq_entries(c))
    fail("expand returned point " + name + " whose cq_depth cannot hold its completions");
  // A point goes to the server as JSON (SETUP): it must come back the same.
  json j = c;
  TestConfig back;
  try {
    from_json(j, back);
  } catch (const ConfigError& e) {
    fail("point " + name + " does not survive to_json/from_json: " + e.what());
  }
  if (json(back) != j) fail("point " + name + " changes in to_json/from_json");
}

void run(const std::string& in) {
  std::string file = in, overrides;
  size_t sep = in.find("\n--\n");
  if (in.compare(0, 3, "--\n") == 0) {
    file.clear();
    overrides = in.substr(3);
  } else if (sep != std::string::npos) {
    file = in.substr(0, sep);
    overrides = in.substr(sep + 4);
  }

  SweepSpec spec;
  if (file.find_first_not_of(" \t\r\n") != std::string::npos) {
    // As load_sweep_file() does, minus the file.
    json j = json::parse(file, nullptr, false);
    if (j.is_discarded()) return;
    try {
      apply_json(spec, j);
    } catch (const ConfigError&) {
      return;
    }
  }

  std::stringstream ss(overrides);
  std::string line;
  while (std::getline(ss, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) {
      check_axis("qps", line);
      check_axis("size", line);
      continue;
    }
    try {
      apply_override(spec, line.substr(0, eq), line.substr(eq + 1));
    } catch (const ConfigError&) {
      return;
    }
  }

  uint64_t n = points(spec);
  if (n == 0) fail("a sweep axis is empty after parsing");
  if (n > kMaxPoints) return;
  std::vector<TestConfig> out;
  try {
    out = expand(spec);
  } catch (const ConfigError&) {
    return;
  }
  // At most the product: expand() skips combinations that do not apply (srq off SEND).
  if (out.size() > n) fail("expand returned " + std::to_string(out.size()) + " points, over the product " + std::to_string(n));
  for (const TestConfig& c : out) check_point(c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
