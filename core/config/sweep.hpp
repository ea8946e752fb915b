// A sweep: axes with lists of values, expanded into the points of their product.
// Read from a JSON file (configs/*.json) and/or overridden from the command line.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config/config.hpp"
#include "core/config/refusals.hpp"
#include "core/config/sweep_spec.hpp"

namespace rdmasweep {

// The axes (the knobs' keys), in the order they nest (last varies fastest).
const std::vector<std::string>& sweep_axes();
// Every key a sweep file takes (the axes, then iters, duration, warmup, repetitions,
// description): apply_json refuses any other, and sweep_json writes each of them.
const std::vector<std::string>& sweep_keys();
// The whole spec as a sweep file (every key of sweep_keys(), axes as lists): what a
// results context records, and what apply_json reads back into the same spec.
nlohmann::json sweep_json(const SweepSpec& spec);

// Parses one axis value from text: "4096", "1,2,4", "64:65536:x2" (x: multiply),
// "1:8:+1" (+: add), sizes with k/m/g units. Throws ConfigError naming `key`.
std::vector<uint64_t> parse_axis(const std::string& key, const std::string& text);

// Applies a JSON sweep file's keys onto `spec`. Unknown keys and bad values are
// rejected with the key's name and why.
void apply_json(SweepSpec& spec, const nlohmann::json& j);
SweepSpec load_sweep_file(const std::string& path);
// Applies one command-line override (`key` as in the file, e.g. "qps", "size").
void apply_override(SweepSpec& spec, const std::string& key, const std::string& text);

// Every point of the product, each validated (first failure throws with the point's name).
// A point paced at a share of its flat-out rate (--rate 50%) has its flat-out twin
// before it: the sweep's own copy moved there, else one added.
std::vector<TestConfig> expand(const SweepSpec& spec, const PointContext& ctx = {});

// The background workload of `client --beside TEXT` ("op=write,mode=bw,qps=8,size=64k":
// sweep keys, one value each, the rest their defaults). Throws ConfigError saying how.
TestConfig background_point(const std::string& text, const PointContext& ctx = {});

// The same point unpaced (rate none, constant arrivals).
TestConfig flat_out_twin(const TestConfig& c);
// `c` (a --rate share point) paced at its share of `flat_out` messages per second, its
// twin's rate. Throws ConfigError when there is no such rate.
TestConfig paced_at_share(TestConfig c, double flat_out);

}  // namespace rdmasweep
