// `rdmasweep mesh --pattern multicast`: see multicast.hpp.
#include "bench/mesh/multicast.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/commands.hpp"
#include "bench/mesh/report.hpp"
#include "core/config/knobs.hpp"
#include "core/engine/multicast.hpp"
#include "core/results/model.hpp"

namespace rdmasweep::mesh_detail {

namespace {

// Runs `work` on a thread (it busy-polls its CQ) while this one keeps the heartbeats
// going; an exception becomes the returned error.
std::string on_thread(const std::function<void()>& work) {
  std::atomic<bool> done{false};
  std::string error;
  std::thread t([&] {
    try {
      work();
    } catch (const std::exception& e) {
      error = e.what();
    }
    done.store(true, std::memory_order_release);
  });
  wait_until([&] { return done.load(std::memory_order_acquire); });
  t.join();
  return error;
}

// Rank 0: the point's datagrams, then each receiver told how many went out.
json send_point(McastEnd& end, const TestConfig& c, uint32_t tag, int ranks) {
  McastSent s;
  std::string err = on_thread([&] { s = end.send(c, tag, g_interrupted); });
  json out = {{"sent", s.sent}, {"measured", s.measured}, {"seconds", s.seconds}, {"cpu_seconds", s.cpu_seconds}};
  if (!err.empty()) out["error"] = "rank 0: " + err;
  for (int r = 1; r < ranks; ++r) send_to(r, kTagMcastSent, json{{"sent", s.sent}}.dump());
  return out;
}

// A receiver: what arrived of the point, until rank 0's count says it is all there.
json receive_point(McastEnd& end, const TestConfig& c, uint32_t tag, const World& w, bool same_clock) {
  std::atomic<int64_t> expected{-1};
  std::atomic<bool> stop{false};
  McastReceived got;
  std::string err;
  std::thread t([&] {
    try {
      got = end.receive(c, tag, expected, same_clock, stop);
    } catch (const std::exception& e) {
      err = e.what();
    }
  });
  const std::set<int> gone = receive_from(
      {0}, kTagMcastSent, [&](int, const std::string& m) { expected = json::parse(m)["sent"].get<int64_t>(); },
      [&] { if (g_interrupted.load()) stop = true; });
  if (!gone.empty()) stop = true;
  t.join();
  if (!gone.empty()) throw RanksGone({0}, "rank 0 stopped answering during a multicast point");
  json out = {{"rank", w.rank},
              {"received", got.received},
              {"warmup_received", got.warmup_received},
              {"measured", got.measured},
              {"windowed", got.windowed},
              {"late", got.late},
              {"seconds", got.seconds},
              {"cpu_seconds", got.cpu_seconds},
              {"latency_measured", same_clock}};
  if (!err.empty()) out["error"] = "rank " + std::to_string(w.rank) + ": " + err;
  if (same_clock && got.hist.count() > 0) {
    json fig = json::object();
    for (const auto& [k, v] : latency_figures(got.hist)) fig[k] = v;
    out["latency"] = fig;
    out["histogram"] = histogram_json(got.hist);
  }
  return out;
}

// The rates and times of a row: `messages` over `seconds`.
void add_rates(json& b, const TestConfig& c, double messages, double seconds, double cpu) {
  b["iterations"] = 1;
  b["real_time"] = seconds * 1e3;
  b["cpu_time"] = cpu * 1e3;
  b["time_unit"] = "ms";
  b["bytes_per_second"] = seconds > 0 ? messages * static_cast<double>(c.work.size) / seconds : 0;
  b["items_per_second"] = seconds > 0 ? messages / seconds : 0;
  b["messages"] = messages;
  b["bytes"] = messages * static_cast<double>(c.work.size);
  b["seconds"] = seconds;
  b["cpu_seconds"] = cpu;
}

json sender_entry(const McastRun& run, const TestConfig& c, EntryPos& at, const json& s) {
  json b = base_entry(bench_name(Pattern::Multicast, c, "src:0"), at, c);
  if (s.contains("error")) mark_failed(b, s["error"]);
  else add_rates(b, c, number_in(s, "measured"), number_in(s, "seconds"), number_in(s, "cpu_seconds"));
  b["messages_sent"] = s["sent"];
  b["group"] = run.o.group;
  b["src_rank"] = 0;
  b["dst_rank"] = -1;
  b["phase"] = 0;
  b["src_host"] = run.hosts[0];
  return b;
}

// One receiver's row; `hist` gets its latency record when it has one.
json receiver_entry(const McastRun& run, const TestConfig& c, EntryPos& at, int r, const json& s, const json* got,
                    json& hist) {
  json b = base_entry(bench_name(Pattern::Multicast, c, "src:0/dst:" + std::to_string(r)), at, c);
  if (got == nullptr) {
    mark_failed(b, describe_ranks({r}, run.hosts) + " stopped answering during this point");
  } else if (s.contains("error") || got->contains("error")) {
    mark_failed(b, got->contains("error") ? (*got)["error"] : s["error"]);
  } else {
    const json& g = *got;
    // The arrivals after the first: what the window from first to last arrival holds.
    add_rates(b, c, number_in(g, "windowed"), number_in(g, "seconds"), number_in(g, "cpu_seconds"));
    const uint64_t sent = s["sent"].get<uint64_t>(), received = g["received"].get<uint64_t>();
    const uint64_t lost = sent > received ? sent - received : 0;
    b["messages_sent"] = sent;
    b["messages_received"] = received;
    b["messages_lost"] = lost;
    b["loss_ratio"] = sent > 0 ? static_cast<double>(lost) / static_cast<double>(sent) : 0;
    b["warmup_received"] = g["warmup_received"];
    b["late_from_earlier_point"] = g["late"];
    b["latency_measured"] = g.contains("latency");
    if (g.contains("latency")) {
      for (const auto& [k, v] : g["latency"].items()) b[k] = v;
      b["label"] = "one-way (send to arrival)";
      hist = {{"config", c}, {"latency_kind", "one-way (send to arrival)"}, {"histogram", g["histogram"]}};
    }
  }
  b["group"] = run.o.group;
  b["src_rank"] = 0;
  b["dst_rank"] = r;
  b["phase"] = 0;
  b["src_host"] = run.hosts[0];
  b["dst_host"] = run.hosts[r];
  return b;
}

// One repetition of one point on every rank; rank 0 returns its entries.
std::vector<json> run_once(const McastRun& run, McastEnd& end, const TestConfig& c, uint32_t tag, EntryPos& at) {
  const World& w = run.w;
  quiet_barrier();
  barrier();
  if (w.rank != 0) {
    json mine = receive_point(end, c, tag, w, run.hosts[w.rank] == run.hosts[0]);
    send_to(0, kTagResults, mine.dump());
    return {};
  }
  const json s = send_point(end, c, tag, w.size);
  std::set<int> receivers;
  for (int r = 1; r < w.size; ++r) receivers.insert(r);
  std::vector<json> got(static_cast<size_t>(w.size));
  const std::set<int> gone =
      receive_from(receivers, kTagResults, [&](int r, const std::string& m) { got[static_cast<size_t>(r)] = json::parse(m); });
  std::vector<json> entries{sender_entry(run, c, at, s)};
  run.report->add(entries.back());
  for (int r = 1; r < w.size; ++r) {
    json hist;
    const json& g = got[static_cast<size_t>(r)];
    entries.push_back(receiver_entry(run, c, at, r, s, g.is_null() ? nullptr : &g, hist));
    run.report->add(entries.back(), hist);
  }
  if (!gone.empty()) {
    std::vector<int> g(gone.begin(), gone.end());
    throw RanksGone(g, describe_ranks(g, run.hosts) + " stopped answering during " + point_name(c) + " (multicast)");
  }
  return entries;
}

}  // namespace

bool run_multicast(const McastRun& run, const std::vector<TestConfig>& points, uint32_t reps,
                   std::string* setup_error) {
  std::unique_ptr<McastEnd> end;
  std::string err;
  try {
    end = std::make_unique<McastEnd>(run.fabric.dev, run.fabric.gid, run.o.group, run.w.rank != 0, points,
                                     std::chrono::seconds(run.o.timeout_s));
  } catch (const std::exception& e) {
    err = e.what();
  }
  *setup_error = first_error(run.w, run.hosts, err);
  if (!setup_error->empty()) return true;
  uint32_t tag = 0;
  for (size_t pi = 0; pi < points.size(); ++pi) {
    std::vector<json> runs;
    EntryPos at;
    for (uint32_t rep = 0; rep < reps; ++rep) {
      at = EntryPos{pi, 0, rep, reps, 0};
      std::vector<json> entries = run_once(run, *end, points[pi], ++tag, at);
      runs.insert(runs.end(), entries.begin(), entries.end());
      if (run.w.rank == 0) run.report->write(false);
      if (any_rank(g_interrupted.load())) return false;
    }
    if (run.w.rank != 0) continue;
    for (json& a : aggregate_entries(runs)) run.report->add(std::move(a));
    run.report->write(false);
  }
  return true;
}

}  // namespace rdmasweep::mesh_detail
