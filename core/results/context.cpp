#include "core/results/context.hpp"

#include "core/measure/clock.hpp"
#include "core/measure/clock_context.hpp"
#include "core/results/document.hpp"
#include "core/results/model.hpp"
#include "core/version.hpp"

namespace rdmasweep {

using nlohmann::json;

json interval_context(double asked) {
  return {{"seconds", asked >= 0 ? asked : kDefaultInterval}, {"points", asked >= 0 ? "all" : "duration"}};
}

json end_context(const control::Hello& h) {
  return {{"host", h.host},         {"device", h.device},     {"firmware", h.firmware},
          {"link_layer", h.link_layer}, {"mtu", h.active_mtu}, {"rate_gbps", h.rate_gbps},
          {"kernel", h.kernel},     {"tool_version", h.tool_version},
          {"gid", h.gid},           {"gid_index", h.gid_index},   {"gid_type", h.gid_type},
          {"cpus", h.cpus},         {"capabilities", h.capabilities}};
}

json results_context(const RunContext& run, const SweepContext* sweep) {
  const control::Hello& me = run.me;
  json c = {{"schema_version", kResultsSchemaVersion},
            {"tool", "rdmasweep"},
            {"command", run.command},
            {"tool_version", RDMASWEEP_VERSION},
            {"git_revision", git_revision()},
            {"date", results_date()},
            {"executable", "rdmasweep"},
            {"library_build_type", RDMASWEEP_BUILD_TYPE},  // CMake's, as Google Benchmark writes its own
            {"host_name", me.host},
            {"device", me.device},
            {"firmware", me.firmware},
            {"link_layer", me.link_layer},
            {"mtu", me.active_mtu},
            {"rate_gbps", me.rate_gbps},
            {"kernel", me.kernel},
            {"port", run.port},
            {"gid_index", me.gid_index},
            {"gid", me.gid},
            {"gid_type", me.gid_type},
            {"transport", me.capabilities.value("transport", "")},  // InfiniBand, RoCE or iWARP
            {"labels", run.labels},  // what CI knows about the run
            // throughput over time: sampled every `seconds` (0: never) in all points or duration points only
            {"interval", interval_context(run.interval)},
            {"latency_note", run.latency_note},
            {"bytes_note", "bytes are payload bytes (messages x size), not wire bytes"}};
  ticks::add_context(c);  // clock, its rate, drift and why it was chosen
  if (sweep != nullptr) {
    c["sweep_file"] = sweep->file;
    c["sweep"] = sweep->sweep;  // every knob, as a sweep file (tests/unit/sweep_test.cpp)
    c["points"] = sweep->points;
    c["clock_choice"] = sweep->clock_choice;
    c["cq_policy"] = sweep->cap_to_cq ? "cap" : "error";
  }
  return c;
}

}  // namespace rdmasweep
