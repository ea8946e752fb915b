#include "core/results/model.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <algorithm>
#include <map>
#include <stdexcept>

namespace rdmasweep {

std::pair<double, double> window_since(const PointResult& r, std::chrono::steady_clock::time_point zero) {
  return {std::chrono::duration<double>(r.began - zero).count(), std::chrono::duration<double>(r.ended - zero).count()};
}

const char* latency_kind(const TestConfig& c) {
  if (c.knobs.rate != kRateNone) return "from when each message was due to its completion (the initiator's)";
  return fetches(c.work.op) ? "round trip" : "one-way (round trip / 2)";
}

std::vector<std::pair<std::string, double>> latency_figures(const Histogram& h) {
  return {{"lat_min_us", static_cast<double>(h.min()) / 1e3}, {"lat_p50_us", h.quantile(0.50) / 1e3},
          {"lat_p90_us", h.quantile(0.90) / 1e3},               {"lat_p99_us", h.quantile(0.99) / 1e3},
          {"lat_p999_us", h.quantile(0.999) / 1e3},             {"lat_p9999_us", h.quantile(0.9999) / 1e3},
          {"lat_max_us", static_cast<double>(h.max()) / 1e3},   {"lat_mean_us", h.mean() / 1e3},
          {"lat_stddev_us", h.stddev() / 1e3}};
}

static bool lossy(const PointResult& r) { return r.datagram && !r.latency; }

// --rate: the offered rate, how far the achieved one fell from it, the late posts, and
// the latency of every message from when it was due (lat_*) and from its post (posted_lat_*).
static void add_pacing(std::vector<std::pair<std::string, double>>& f, const PointResult& r, double achieved) {
  const double offered = r.offered_per_second;
  f.emplace_back("offered_items_per_second", offered);
  f.emplace_back("offered_bytes_per_second", offered * static_cast<double>(r.cfg.work.size));
  f.emplace_back("pacing_error_pct", offered > 0 ? (achieved / offered - 1) * 100 : NAN);
  f.emplace_back("late_posts", static_cast<double>(r.late_posts));
  f.emplace_back("late_posts_queue_full", static_cast<double>(r.late_posts_queue_full));
  f.emplace_back("late_max_us", r.late_max_ns / 1e3);
  f.emplace_back("late_mean_us", r.late_posts > 0 ? r.late_sum_ns / static_cast<double>(r.late_posts) / 1e3 : 0);
  if (r.hist.count() > 0)
    for (auto& kv : latency_figures(r.hist)) f.push_back(std::move(kv));
  if (r.posted_hist && r.posted_hist->count() > 0)
    for (auto& [k, v] : latency_figures(*r.posted_hist)) f.emplace_back("posted_" + k, v);
}

uint64_t arrived_in_window(const PointResult& r) {
  if (!lossy(r) || r.received >= r.sent) return r.messages;
  const long double share = static_cast<long double>(r.messages) * r.received / r.sent;
  return static_cast<uint64_t>(std::llround(share));
}

std::string loss_summary(double sent, double lost) {
  if (!(lost > 0)) return "";
  const double pct = sent > 0 ? 100 * lost / sent : 100;
  char b[96];
  std::snprintf(b, sizeof b, pct >= 1 ? "lost %.0f of %.0f (%.0f%%)" : "lost %.0f of %.0f (%.2g%%)", lost, sent, pct);
  return b;
}

// --bidir: each direction in its own window: client to server in f[0] and f[1], server
// to client here, and their sum.
static void add_reverse(std::vector<std::pair<std::string, double>>& f, const PointResult& r) {
  const double rs = r.reverse_seconds > 0 ? r.reverse_seconds : 0;
  const double rb = rs > 0 ? static_cast<double>(r.reverse_messages * r.cfg.work.size) / rs : 0;
  const double rm = rs > 0 ? static_cast<double>(r.reverse_messages) / rs : 0;
  f.emplace_back("reverse_messages", static_cast<double>(r.reverse_messages));
  f.emplace_back("reverse_bytes_per_second", rb);
  f.emplace_back("reverse_items_per_second", rm);
  f.emplace_back("total_bytes_per_second", f[0].second + rb);
  f.emplace_back("total_items_per_second", f[1].second + rm);
}

// UD may lose messages: what the peer got of what was sent, warm-up included, and (bw)
// the rate the sender posted at, beside the headline rates of what arrived.
static void add_datagrams(std::vector<std::pair<std::string, double>>& f, const PointResult& r, double s) {
  if (lossy(r)) f.emplace_back("sent_items_per_second", s > 0 ? static_cast<double>(r.messages) / s : 0);
  f.emplace_back("messages_sent", static_cast<double>(r.sent));
  f.emplace_back("messages_received", static_cast<double>(r.received));
  f.emplace_back("messages_lost", static_cast<double>(r.sent - std::min(r.sent, r.received)));
}

std::vector<std::pair<std::string, double>> figures(const PointResult& r) {
  std::vector<std::pair<std::string, double>> f;
  double s = r.seconds > 0 ? r.seconds : 0;
  // UD: what arrived, as perftest's receiver reports; RC: every message arrived.
  const double messages = static_cast<double>(arrived_in_window(r));
  const double bytes = lossy(r) ? messages * static_cast<double>(r.cfg.work.size) : static_cast<double>(r.bytes);
  f.emplace_back("bytes_per_second", s > 0 ? bytes / s : 0);
  f.emplace_back("items_per_second", s > 0 ? messages / s : 0);
  f.emplace_back("messages", messages);
  f.emplace_back("bytes", bytes);
  f.emplace_back("seconds", r.seconds);
  if (!r.per_qp.empty()) {
    uint64_t mn = UINT64_MAX, mx = 0;
    for (uint64_t v : r.per_qp) {
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    f.emplace_back("qp_messages_min", static_cast<double>(mn));
    f.emplace_back("qp_messages_max", static_cast<double>(mx));
    f.emplace_back("qp_max_min_ratio", mn > 0 ? static_cast<double>(mx) / static_cast<double>(mn) : NAN);
    f.emplace_back("qp_jain_index", jain_index(r.per_qp));
  }
  // Threads: how evenly they fared, each over its own window (the totals above are
  // over the threads' common window, first start to last end).
  const std::vector<double> tr = thread_rates(r);
  if (tr.size() > 1) {
    f.emplace_back("thread_rate_min", *std::min_element(tr.begin(), tr.end()));
    f.emplace_back("thread_rate_max", *std::max_element(tr.begin(), tr.end()));
    f.emplace_back("thread_jain_index", jain_of_rates(tr));
    f.emplace_back("cpu_ns_per_message", r.messages > 0 ? r.cpu_seconds * 1e9 / static_cast<double>(r.messages) : NAN);
  }
  if (r.latency && r.hist.count() > 0)
    for (auto& kv : latency_figures(r.hist)) f.push_back(std::move(kv));
  if (r.paced) add_pacing(f, r, s > 0 ? messages / s : 0);
  // Throughput over time: the slowest and fastest interval, in messages (lat: round
  // trips) per second, what a flaky link shows and the whole window's mean hides.
  const std::vector<double> rates = interval_rates(r.timeline);
  if (!rates.empty()) {
    f.emplace_back("interval_min", *std::min_element(rates.begin(), rates.end()));
    f.emplace_back("interval_max", *std::max_element(rates.begin(), rates.end()));
  }
  if (r.cfg.knobs.bidir) add_reverse(f, r);
  if (r.datagram) add_datagrams(f, r, s);
  f.emplace_back("cpu_seconds", r.cpu_seconds);
  f.emplace_back("server_cpu_seconds", r.server_cpu_seconds);
  f.emplace_back("setup_seconds", r.setup_seconds);
  f.emplace_back("reused_qps", r.reused ? 1 : 0);
  // The point's resolved knobs: what "auto" and "0 = the devices' limit" became.
  if (!fetches(r.cfg.work.op)) f.emplace_back("inline_size", r.inline_size);
  if (fetches(r.cfg.work.op)) f.emplace_back("outs", r.outs);
  if (r.send_credit != 0) f.emplace_back("send_credit", r.send_credit);
  if (is_atomic(r.cfg.work.op)) f.emplace_back("server_atomic_sum", static_cast<double>(r.atomic_sum));
  for (auto& kv : counter_figures(r)) f.push_back(std::move(kv));
  return f;
}

std::vector<std::pair<std::string, double>> counter_figures(const PointResult& r) {
  std::vector<std::pair<std::string, double>> f;
  // The normalized counters, both sides summed, as plain figures: what tools/compare
  // gates on (--threshold retransmits=0) and tools/plot charts.
  if (r.has_client_counters || r.has_server_counters) {
    nlohmann::json cl = r.has_client_counters ? normalize_counters(r.client_counters) : nlohmann::json::object();
    nlohmann::json sv = r.has_server_counters ? normalize_counters(r.server_counters) : nlohmann::json::object();
    for (const NormalizedCounter& n : counter_map()) {
      if (!cl.contains(n.name) && !sv.contains(n.name)) continue;
      f.emplace_back(n.name, static_cast<double>(cl.value(n.name, uint64_t{0}) + sv.value(n.name, uint64_t{0})));
    }
  }
  return f;
}

nlohmann::json counters_json(const PointResult& r) {
  if (!r.has_client_counters && !r.has_server_counters) return nullptr;
  nlohmann::json j = {{"normalized", nlohmann::json::object()}};
  if (r.has_client_counters) {
    j["client"] = r.client_counters;
    j["normalized"]["client"] = normalize_counters(r.client_counters);
  }
  if (r.has_server_counters) {
    j["server"] = r.server_counters;
    j["normalized"]["server"] = normalize_counters(r.server_counters);
  }
  return j;
}

std::vector<std::string> point_anomalies(const PointResult& r) {
  std::vector<std::string> out;
  if (r.has_client_counters) out = counter_anomalies(normalize_counters(r.client_counters), "client");
  if (r.has_server_counters)
    for (std::string& a : counter_anomalies(normalize_counters(r.server_counters), "server")) out.push_back(std::move(a));
  return out;
}

double jain_of_rates(const std::vector<double>& v) {
  double sum = 0, sq = 0;
  for (double x : v) {
    sum += x;
    sq += x * x;
  }
  return sq > 0 ? sum * sum / (static_cast<double>(v.size()) * sq) : NAN;
}

double jain_index(const std::vector<uint64_t>& v) { return jain_of_rates(std::vector<double>(v.begin(), v.end())); }

std::vector<double> thread_rates(const PointResult& r) {
  std::vector<double> out;
  for (size_t t = 0; t < r.thread_messages.size() && t < r.thread_seconds.size(); ++t)
    out.push_back(r.thread_seconds[t] > 0 ? static_cast<double>(r.thread_messages[t]) / r.thread_seconds[t] : 0);
  return out;
}

nlohmann::json histogram_json(const Histogram& h) {
  nlohmann::json buckets = nlohmann::json::array();
  const auto& c = h.counts();
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] != 0) buckets.push_back({Histogram::bucket_low(i), Histogram::bucket_high(i), c[i]});
  return {{"unit", "ns"},       {"count", h.count()}, {"min", h.min()}, {"max", h.max()},
          {"mean", h.mean()},   {"buckets_format", "[low, high, count]"}, {"buckets", buckets}};
}

nlohmann::json timeline_json(const Timeline& tl) {
  return {{"interval_s", tl.interval}, {"t_s", tl.t}, {"messages", tl.messages}};
}

void merge_histogram_json(nlohmann::json& into, const nlohmann::json& more) {
  const uint64_t n1 = into.value("count", uint64_t{0}), n2 = more.value("count", uint64_t{0});
  if (n2 == 0) return;
  if (n1 == 0) {
    into = more;
    return;
  }
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> by_low;  // low -> (high, count)
  for (const nlohmann::json& h : {std::cref(into), std::cref(more)})
    for (const auto& b : h["buckets"]) {
      auto& slot = by_low[b[0].get<uint64_t>()];
      slot.first = b[1].get<uint64_t>();
      slot.second += b[2].get<uint64_t>();
    }
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& [low, hc] : by_low) buckets.push_back({low, hc.first, hc.second});
  const double mean = (into["mean"].get<double>() * static_cast<double>(n1) + more["mean"].get<double>() * static_cast<double>(n2)) /
                      static_cast<double>(n1 + n2);
  into["count"] = n1 + n2;
  into["min"] = std::min(into["min"].get<uint64_t>(), more["min"].get<uint64_t>());
  into["max"] = std::max(into["max"].get<uint64_t>(), more["max"].get<uint64_t>());
  into["mean"] = mean;
  into["buckets"] = std::move(buckets);
}

void write_json_atomic(const std::string& path, const nlohmann::json& j, bool durable) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::string text = j.dump(2) + "\n";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(err) +
                               (err == ENOSPC ? " (disk full: free space; the previous version of the file is intact)" : ""));
    }
    off += static_cast<size_t>(n);
  }
  if ((durable && ::fsync(fd) != 0) || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
  }
}

void check_writable(const std::string& path) {
  std::string probe = path + ".probe." + std::to_string(::getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot write results to " + path + ": " + std::strerror(errno) +
                             " (does the directory exist and is it writable?)");
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace rdmasweep
