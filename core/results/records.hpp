// What a point's results become in the files, built once for every command that
// writes them (client, mesh, hunt): the entry's measured part, its counters and the
// anomalies they flag, and the point's histogram record.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/control/mcast_messages.hpp"
#include "core/engine/multicast.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

// One run of a point as a results entry's measured part: iterations 1, real_time and
// cpu_time in ms over the measured window, every figure, the latency label. (The
// client's entries get the same from Google Benchmark's own run.)
void add_run_figures(nlohmann::json& b, const PointResult& r);

// The ports' own account of the point into the entry: raw deltas per side and their
// normalized view, and the anomalies they flag (returned: printed under its row).
std::vector<std::string> add_counters(nlohmann::json& b, const PointResult& r);

// A point's histogram record from its repetitions' results (in order): per-QP
// messages, per-QP latency and the merged latency histogram, each thread's figures
// (--threads > 1), counters and timelines, one per repetition where each has one.
nlohmann::json histogram_record(const std::vector<PointResult>& runs);

// Multicast rows (mesh --pattern multicast, client --multicast). A row's rates:
// `messages` datagrams of the point's size over `seconds`.
void add_mcast_rates(nlohmann::json& b, const TestConfig& c, double messages, double seconds, double cpu_seconds);
// A receiver's row: sent, received, lost (warm-up included, so received + lost ==
// sent), its rates over its arrivals' window, and its one-way latency when it recorded
// it (`latency_kind` says against which clock). Returns the row's histogram record, or
// null.
nlohmann::json add_mcast_receiver(nlohmann::json& b, const TestConfig& c, uint64_t sent,
                                  const control::McastArrived& got, const std::string& latency_kind);
// What a receiver got, for the wire (MCAST_RESULT, the mesh's results message).
control::McastArrived mcast_arrived(const McastReceived& got, bool latency);

}  // namespace rdmasweep
