// The result model, defined once: the figures of a point, their names (shared by
// the JSON writer, tools/plot and tools/compare), and the results and histogram
// files, written atomically after every point so an interrupted sweep loses nothing.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/host/counters.hpp"
#include "core/measure/histogram.hpp"
#include "core/measure/timeline.hpp"
#include "core/measure/wall_time.hpp"

namespace rdmasweep {

constexpr int kResultsSchemaVersion = 1;

struct PointResult {
  TestConfig cfg;
  std::string name;         // point_name(cfg)
  double seconds = 0;       // measured time, warm-up excluded
  uint64_t messages = 0;    // bw: messages; lat: round trips
  uint64_t bytes = 0;       // payload bytes (messages x size), not wire bytes
  std::vector<uint64_t> per_qp;
  bool latency = false;
  std::vector<uint64_t> qp_lat_min_ns, qp_lat_max_ns;  // lat only, per QP
  std::vector<double> qp_lat_mean_ns;
  Histogram hist;           // lat only, ns
  // User + system CPU over the measured window only (no warm-up, setup or control
  // waits). Client: the window of `seconds` (bw: first measured post to last
  // completion; lat: first QP's window start to last QP's end).
  double cpu_seconds = 0;
  // Server: SEND bw from warm-up received on every QP to the last message (or DONE);
  // SEND/WRITE lat from the first QP's last warm-up pong to DONE; passive targets
  // (WRITE/READ bw, READ lat) only wait for DONE, and report what that wait costs.
  double server_cpu_seconds = 0;
  double setup_seconds = 0; // from the request to both sides ready (QPs created and connected, or reused)
  bool reused = false;      // ran on the previous point's QPs
  WallTime wall;            // client: where the point's wall time went (not a figure)
  uint32_t inline_size = 0; // the QPs' inline limit (the knob, or auto resolved on this device)
  uint32_t outs = 0;        // RDMA READs (atomics) in flight per QP (READ, CAS, FAA points)
  uint32_t send_credit = 0; // SEND bw on iWARP: the credit window per QP (core/engine/send_credits.hpp); 0: none
  // CAS, FAA: the words the atomics hit in the server's buffer, summed after the test
  // (checked by the client: FAA adds 1 per operation, warm-up included).
  uint64_t atomic_sum = 0;
  // --bidir: the server's direction, measured by the server as the client measures its
  // own (messages in its window, and the window).
  uint64_t reverse_messages = 0;
  double reverse_seconds = 0;
  // Each side's port counter deltas over the point (raw driver names; sampled before
  // setup and after the result, outside the measured window), when its device has them.
  bool has_client_counters = false, has_server_counters = false;
  CounterValues client_counters, server_counters;
  // UD: messages sent (warm-up included) and received by the peer, all QPs; lost = the
  // difference. `messages` and `bytes` above are what was sent in the window; the rates
  // figures() gives are what arrived (arrived_in_window).
  bool datagram = false;
  uint64_t sent = 0, received = 0;
  // --rate: what the schedule offered (its messages over the gaps they span) and how the
  // sender kept it (messages posted more than 1 us after due, by how much; of those, the
  // ones whose QP was full once due: held by the device, not by the loop). `hist` then
  // holds each message's latency from when it was due, posted_hist from its post.
  bool paced = false;
  double offered_per_second = 0;
  uint64_t late_posts = 0, late_posts_queue_full = 0;
  double late_max_ns = 0, late_sum_ns = 0;
  std::optional<Histogram> posted_hist;
  Timeline timeline;        // --interval: messages (lat: round trips) over the measured window
  // The measured window on the steady clock (threads' windows combine into the point's).
  std::chrono::steady_clock::time_point began{}, ended{};
  // --threads > 1: each thread's messages (lat: round trips), its own window and CPU.
  std::vector<uint64_t> thread_messages;
  std::vector<double> thread_seconds, thread_cpu_seconds;
  std::vector<Histogram> thread_hist;  // lat: each thread's own (hist is their merge)
};

// Where `r`'s measured window lies on a clock started at `zero` (seconds from it to
// the window's start and end): mesh puts its flows' windows on the phase's clock.
std::pair<double, double> window_since(const PointResult& r, std::chrono::steady_clock::time_point zero);

// What the latency figures mean for this point.
// "one-way (round trip / 2)", "round trip", or for a paced point (--rate) from when each
// message was due to its completion.
const char* latency_kind(const TestConfig& c);

// UD bandwidth: the datagrams of the measured window that arrived. A UD SEND carries no
// sequence number, so the receiver cannot tell warm-up datagrams from measured ones: the
// window gets its share of the arrivals (messages x received / sent), all of them when
// none was lost. Otherwise (RC, latency) `messages`.
uint64_t arrived_in_window(const PointResult& r);
// "lost 70897 of 80400 (88%)" when a UD point lost datagrams, else "".
std::string loss_summary(double sent, double lost);

// Named figures of a point, in output order. Rates are per second of measured time;
// latency figures (lat mode only) are in microseconds. UD bandwidth: the headline
// rates, `messages` and `bytes` are what arrived (arrived_in_window), and
// sent_items_per_second is what was posted.
std::vector<std::pair<std::string, double>> figures(const PointResult& r);
// lat_min_us .. lat_stddev_us of `h` (nanoseconds), in output order.
std::vector<std::pair<std::string, double>> latency_figures(const Histogram& h);
// The normalized counters, both sides summed, as plain figures (part of figures()).
std::vector<std::pair<std::string, double>> counter_figures(const PointResult& r);
// {"client": {raw...}, "server": {raw...}, "normalized": {"client": {...}, "server": {...}}}
// with the sides that have counters; null when neither has.
nlohmann::json counters_json(const PointResult& r);
// What flags the point: non-zero retransmits, RNR NAKs, out-of-sequence or errors on
// either side, e.g. "retransmits=3 (server)".
std::vector<std::string> point_anomalies(const PointResult& r);

nlohmann::json histogram_json(const Histogram& h);
// {"interval_s", "t_s": [...], "messages": [...]}: cumulative samples (see Timeline).
nlohmann::json timeline_json(const Timeline& tl);  // non-empty buckets with bounds
// Adds histogram_json `more` into `into` (the JSON of the merged histograms), for
// results that arrive as JSON (a mesh's ranks send theirs to rank 0).
void merge_histogram_json(nlohmann::json& into, const nlohmann::json& more);

// Jain's fairness index of per-QP counts: 1 when every QP got the same share, 1/n
// when one QP got everything.
double jain_index(const std::vector<uint64_t>& v);
double jain_of_rates(const std::vector<double>& v);  // the same of rates
// --threads > 1: each thread's rate over its own window (messages per second).
std::vector<double> thread_rates(const PointResult& r);

// Writes `j` to `path` through a temporary file and rename, so a reader never
// sees a half-written file, nor a killed process a lost one. `durable` also syncs it
// to the disk first (tens of ms on some file systems: the final write, not every
// point's). Throws std::runtime_error with the reason.
void write_json_atomic(const std::string& path, const nlohmann::json& j, bool durable = true);

// Checks now that `path` can be written (directory exists and is writable).
void check_writable(const std::string& path);

}  // namespace rdmasweep
