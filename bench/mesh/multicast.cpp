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
#include "core/point/multicast_session.hpp"
#include "core/results/model.hpp"
#include "core/results/records.hpp"

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

// The clock offset of each receiver on another host from rank 0's, estimated as the
// client estimates a server's (core/point/multicast_session.hpp), the PROBEs carried
// by MPI: rank 0 probes each in turn and tells it the estimate. On rank 0 every
// receiver's; on a receiver, its own at [rank]. A receiver on rank 0's host shares
// its clock: no estimate.
std::vector<ClockOffset> estimate_offsets(const McastRun& run) {
  const World& w = run.w;
  std::vector<ClockOffset> clocks(static_cast<size_t>(w.size));
  auto from = [&](int r) {
    std::string got;
    if (!receive_from({r}, kTagProbe, [&](int, const std::string& m) { got = m; }).empty())
      throw RanksGone({r}, describe_ranks({r}, run.hosts) + " stopped answering while its clock was probed");
    return json::parse(got);
  };
  for (int r = 1; r < w.size; ++r) {
    if (run.hosts[static_cast<size_t>(r)] == run.hosts[0] || (w.rank != 0 && w.rank != r)) continue;
    ClockOffset& clock = clocks[static_cast<size_t>(r)];
    if (w.rank == r) {
      for (uint32_t i = 0; i < kProbeRounds; ++i)
        send_to(0, kTagProbe, control::to_json(answer_probe(control::probe_from_json(from(0)))).dump());
      const json j = from(0);
      clock = ClockOffset{j["known"], j["offset_ns"], j["uncertainty_ns"], kProbeRounds};
      continue;
    }
    clock = estimate_clock_offset(kProbeRounds, [&](const control::Probe& p) {
      send_to(r, kTagProbe, control::to_json(p).dump());
      return control::probe_from_json(from(r));
    });
    send_to(r, kTagProbe,
            json{{"known", clock.known}, {"offset_ns", clock.offset_ns}, {"uncertainty_ns", clock.uncertainty_ns}}.dump());
  }
  return clocks;
}

// A receiver: what arrived of the point, until rank 0's count says it is all there;
// one-way latency recorded when it shares rank 0's clock or has an offset from it.
json receive_point(McastEnd& end, const TestConfig& c, uint32_t tag, const World& w, bool same_host,
                   const ClockOffset& clock) {
  const bool latency = same_host || clock.known;
  McastReception reception(end, c, tag, latency, same_host ? 0 : clock.offset_ns);
  const std::set<int> gone = receive_from(
      {0}, kTagMcastSent, [&](int, const std::string& m) { reception.expect(json::parse(m)["sent"].get<uint64_t>()); },
      [&] { if (g_interrupted.load()) reception.stop(); });
  if (!gone.empty()) reception.stop();
  const McastReceived& got = reception.finish();
  const std::string& err = reception.error();
  if (!gone.empty()) throw RanksGone({0}, "rank 0 stopped answering during a multicast point");
  if (!err.empty()) return {{"error", "rank " + std::to_string(w.rank) + ": " + err}};
  return control::to_json(mcast_arrived(got, latency));
}

json sender_entry(const McastRun& run, const TestConfig& c, EntryPos& at, const json& s) {
  json b = base_entry(bench_name(Pattern::Multicast, c, "src:0"), at, c);
  if (s.contains("error")) mark_failed(b, s["error"]);
  else add_mcast_rates(b, c, number_in(s, "measured"), number_in(s, "seconds"), number_in(s, "cpu_seconds"));
  b["messages_sent"] = s["sent"];
  b["group"] = run.o.group;
  b["src_rank"] = 0;
  b["dst_rank"] = -1;
  b["phase"] = 0;
  b["src_host"] = run.hosts[0];
  return b;
}

// One receiver's row; `hist` gets its latency record when it has one.
json receiver_entry(const McastRun& run, const TestConfig& c, EntryPos& at, int r, const ClockOffset& clock,
                    const json& s, const json* got, json& hist) {
  const bool same_host = run.hosts[static_cast<size_t>(r)] == run.hosts[0];
  json b = base_entry(bench_name(Pattern::Multicast, c, "src:0/dst:" + std::to_string(r)), at, c);
  if (got == nullptr) {
    mark_failed(b, describe_ranks({r}, run.hosts) + " stopped answering during this point");
  } else if (s.contains("error") || got->contains("error")) {
    mark_failed(b, got->contains("error") ? (*got)["error"] : s["error"]);
  } else {
    hist = add_mcast_receiver(b, c, s["sent"].get<uint64_t>(), control::mcast_arrived_from_json(*got),
                              mcast_latency_kind(same_host, clock));
  }
  if (!same_host && clock.known) {
    b["clock_offset_us"] = static_cast<double>(clock.offset_ns) / 1e3;
    b["clock_offset_uncertainty_us"] = static_cast<double>(clock.uncertainty_ns) / 1e3;
  } else if (!same_host) {
    b["clock_offset"] = kNoOffsetEstimate;
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
std::vector<json> run_once(const McastRun& run, McastEnd& end, const std::vector<ClockOffset>& clocks,
                           const TestConfig& c, uint32_t tag, EntryPos& at) {
  const World& w = run.w;
  quiet_barrier();
  barrier();
  if (w.rank != 0) {
    const size_t me = static_cast<size_t>(w.rank);
    json mine = receive_point(end, c, tag, w, run.hosts[me] == run.hosts[0], clocks[me]);
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
    entries.push_back(receiver_entry(run, c, at, r, clocks[static_cast<size_t>(r)], s, g.is_null() ? nullptr : &g, hist));
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
  const std::vector<ClockOffset> clocks = estimate_offsets(run);
  uint32_t tag = 0;
  for (size_t pi = 0; pi < points.size(); ++pi) {
    std::vector<json> runs;
    EntryPos at;
    for (uint32_t rep = 0; rep < reps; ++rep) {
      at = EntryPos{pi, 0, rep, reps, 0};
      std::vector<json> entries = run_once(run, *end, clocks, points[pi], ++tag, at);
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
