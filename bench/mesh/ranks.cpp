// One rank of `rdmasweep mesh`, in the rdmasweep-mesh program (bench/mesh/main.cpp):
// MPI's start and end, and the run (options to every rank, fabrics opened, points run
// phase by phase, the exit code). MPI only starts the processes, swaps connection
// data (each rank's serialized Endpoint JSON, host names) and synchronizes
// them; every measured byte moves over our own verbs QPs through core's engine.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "bench/mesh/multicast.hpp"
#include "bench/mesh/options.hpp"
#include "bench/mesh/phase.hpp"
#include "bench/mesh/report.hpp"
#include "bench/mesh/world.hpp"
#include "core/config/config.hpp"
#include "core/config/refusals.hpp"
#include "core/config/sweep.hpp"
#include "core/setup/device_checks.hpp"
#include "core/measure/clock.hpp"
#include "core/measure/clock_context.hpp"
#include "core/point/beside.hpp"
#include "core/point/session.hpp"
#include "core/results/aggregates.hpp"
#include "core/results/context.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

namespace mesh_detail {
namespace {

std::string hostname() {
  char b[256] = {};
  gethostname(b, sizeof b - 1);
  return b;
}

// How long a rank may be silent before the others call it gone: well above the
// longest wait without heartbeats (creating many QPs under emulation).
std::chrono::milliseconds liveness_silence(int timeout_s) {
  return std::chrono::seconds(std::max(3 * timeout_s, 10));
}

// A rank stopped answering: rank 0 writes the results (the phase's entries are in,
// the run marked incomplete with the reason) and exits non-zero, which makes mpirun
// end the job; the others wait for that (their results may still be on their way to
// rank 0), or exit at once when rank 0 is the one gone. Exits rather than calling
// MPI_Abort, whose status mpirun --enable-recovery does not pass on. Never hangs.
[[noreturn]] void rank_gone(const World& w, const std::vector<std::string>& hosts, const RanksGone& e,
                            MeshReport* report) {
  const bool root_gone = std::find(e.ranks.begin(), e.ranks.end(), 0) != e.ranks.end();
  if (w.rank == 0) {
    report->write(true, e.what());
    std::fprintf(stderr, "rdmasweep mesh: %s; results so far: %s (marked incomplete)\n", e.what(),
                 report->path().c_str());
  } else if (root_gone) {
    std::fprintf(stderr,
                 "rdmasweep mesh: rank %d: %s stopped answering: rank 0 writes the results, so they hold only the "
                 "phases before\n",
                 w.rank, describe_ranks(e.ranks, hosts).c_str());
  } else {
    wait_until([] { return poll_liveness().count(0) > 0; });
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(kFailed);
}

// What every rank runs: rank 0 parses the command line and the sweep file and sends
// the points (code != 0: the run stops with `error`); each rank parses its own fabric
// options, since with mpirun's A : B launches they may differ.
struct Sweep {
  MeshOptions o;
  std::vector<TestConfig> points;
  bool cap_to_cq = false;
  uint32_t reps = 1;
  int code = 0;
  std::string error;
};

Sweep agree_on_sweep(const World& w, int argc, char** argv) {
  Sweep sw;
  std::string status;  // rank 0: {"code", "error", "points", ...}
  if (w.rank == 0) {
    json st;
    try {
      std::string help;
      sw.o = parse_mesh(argc, argv, &help, true);
      std::vector<TestConfig> points = expand(sw.o.spec);
      if (w.size < 2) throw cli::UsageError("needs at least 2 ranks: start it with mpirun -np N (N >= 2)");
      check_writable(sw.o.out);
      st = {{"code", 0}, {"points", points}, {"cap_to_cq", sw.o.cap_to_cq}, {"repetitions", sw.o.spec.repetitions}};
    } catch (const cli::UsageError& e) {
      st = {{"code", kUsage}, {"error", std::string(e.what()) + " (see `rdmasweep mesh --help`)"}};
    } catch (const ConfigError& e) {
      st = {{"code", kUsage}, {"error", e.what()}};
    } catch (const std::exception& e) {
      st = {{"code", kFailed}, {"error", e.what()}};
    }
    status = st.dump();
  }
  json st = json::parse(broadcast(w, status));
  sw.code = st["code"].get<int>();
  if (sw.code != 0) {
    sw.error = st["error"].get<std::string>();
    return sw;
  }
  // Rank 0's sweep, for every rank: the others did not read the sweep file.
  sw.points = st["points"].get<std::vector<TestConfig>>();
  sw.cap_to_cq = st["cap_to_cq"].get<bool>();
  sw.reps = st["repetitions"].get<uint32_t>();
  if (w.rank != 0) {
    std::string help;
    try {
      sw.o = parse_mesh(argc, argv, &help, false);
    } catch (const std::exception&) {
      // Rank 0 parsed the same line (or, with A : B launches, its own); use the defaults.
    }
  }
  return sw;
}

// Every rank opens its fabric and tells the others what it has (`ranks`, in rank
// order); then checks every point against its device: with --cq-policy cap, first
// shrunk to fit the smallest CQ of all ranks (the same points on every rank).
// Returns the first rank's error, or "".
std::string open_ranks(const World& w, Sweep& sw, std::unique_ptr<LocalFabric>& fabric, std::vector<json>& ranks,
                       std::vector<std::string>& hosts) {
  // Rank 0 checked the clock's name; each rank calibrates its own TSC.
  try {
    ticks::init(ticks::parse(sw.o.clock));
  } catch (const std::invalid_argument&) {
    ticks::init(ticks::Source::System);  // this rank's CPU has no TSC (A : B launches)
  }
  std::string err;
  json me;
  try {
    fabric = std::make_unique<LocalFabric>(LocalFabric::open(sw.o.fabric));
    if (fabric->dev.is_iwarp()) throw ConfigError(fabric->dev.name() + ": " + refusal_text("iwarp-cm"));
    control::Hello h = fabric->hello();
    me = end_context(h);
    me["rank"] = w.rank;
    me["port"] = fabric->dev.port();
    me["max_cqe"] = fabric->dev.attr().max_cqe;
    me["max_qp_rd_atom"] = h.max_qp_rd_atom;
    ticks::add_context(me);  // each rank calibrated its own TSC
  } catch (const std::exception& e) {
    err = e.what();
    me = {{"rank", w.rank}, {"host", hostname()}};
  }
  for (const std::string& s : allgather(w, me.dump())) {
    ranks.push_back(json::parse(s));
    hosts.push_back(ranks.back().value("host", "?"));
  }
  if (err.empty()) {
    try {
      if (sw.cap_to_cq) {
        size_t smallest = 0;
        for (size_t r = 1; r < ranks.size(); ++r)
          if (ranks[r].value("max_cqe", INT64_MAX) < ranks[smallest].value("max_cqe", INT64_MAX)) smallest = r;
        const uint64_t max_cqe = ranks[smallest]["max_cqe"].get<uint64_t>();
        cli::cap_points(sw.points, max_cqe, "rank " + std::to_string(smallest) + "'s", w.rank == 0 ? "rdmasweep mesh" : nullptr);
      }
      // Multicast's one UD QP per rank is checked as it is made (core/engine/multicast.cpp).
      if (sw.o.pattern != Pattern::Multicast)
        for (const TestConfig& c : sw.points) check_device_limits(c, fabric->dev);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  return first_error(w, hosts, err);
}

// Rank 0's report, its context written, and what the run will do said on stderr.
std::unique_ptr<MeshReport> start_report(const World& w, const Sweep& sw, const std::vector<json>& ranks,
                                         const std::vector<std::vector<Flow>>& phases, const LocalFabric& fabric) {
  const MeshOptions& o = sw.o;
  // rank 0's clock, its rate, drift and why (each rank's in rank_info)
  json context = make_context(o, w, ranks, sw.points.size(), fabric.hello(), fabric.dev.port());
  auto report = std::make_unique<MeshReport>(o.out, std::move(context));
  size_t width = 5;
  for (const TestConfig& c : sw.points)
    width = std::max(width, point_name(c).size() + (sw.reps > 1 ? 7 : 0) + (o.pattern == Pattern::Victim ? 7 : 0));
  if (o.background) width = std::max(width, point_name(*o.background).size() + (sw.reps > 1 ? 7 : 0));
  report->set_width(width);
  size_t flows_per_point = 0;
  for (const auto& p : phases) flows_per_point += p.size();
  std::fprintf(stderr, "rdmasweep mesh: %s%s%s, %d ranks, %zu point(s), %zu flow(s) in %zu phase(s) per point\n",
               to_string(o.pattern), o.pattern == Pattern::Pairs ? ", schedule " : "",
               o.pattern == Pattern::Pairs ? to_string(effective_schedule(o, w.size)) : "", w.size, sw.points.size(),
               flows_per_point, phases.size());
  for (const json& r : ranks)
    std::fprintf(stderr, "rdmasweep mesh:   rank %d: %s %s port %u, GID index %d (%s %s)\n", r["rank"].get<int>(),
                 r.value("host", "").c_str(), r.value("device", "").c_str(), r.value("port", 0u), r.value("gid_index", -1),
                 r.value("gid_type", "").c_str(), r.value("gid", "").c_str());
  report->write(false);
  return report;
}

// The median measured window of a phase's successful flow entries (0: none).
double median_seconds(const std::vector<json>& entries) {
  std::vector<double> s;
  for (const json& b : entries)
    if (!b.value("error_occurred", false) && b.contains("seconds")) s.push_back(b["seconds"].get<double>());
  return s.empty() ? 0 : median_of(s);
}

// Every point, phase by phase, in Google Benchmark's order: a benchmark's repetitions
// run back to back, so each phase (in pairs, each flow) runs its repetitions on the
// same QPs, then gets its aggregates. Returns false when interrupted.
bool run_points(Runner& run, const Sweep& sw, const std::vector<std::vector<Flow>>& phases, MeshReport* report) {
  const World& w = run.w;
  const bool victim = sw.o.pattern == Pattern::Victim;
  bool go_on = true;
  for (size_t pi = 0; pi < sw.points.size() && go_on; ++pi) {
    size_t instance = 0;
    double alone = 0;  // rank 0, --pattern victim: the victim's median window alone
    std::optional<TestConfig> background;
    for (size_t ph = 0; ph < phases.size() && go_on; ++ph) {
      std::vector<json> runs;  // rank 0: the phase's entries over its repetitions
      EntryPos at;
      if (victim && ph == 1) {  // every rank: the background runs for 10x the victim's window alone + 2 s
        background = *sw.o.background;
        background->work.duration =
            background_seconds(std::stod(broadcast(w, w.rank == 0 ? std::to_string(alone) : std::string())));
        run.background = &*background;
      }
      for (uint32_t rep = 0; rep < sw.reps && go_on; ++rep) {
        at = EntryPos{pi, instance, rep, sw.reps, ph};
        std::vector<json> entries;
        go_on = run.run_phase(sw.points[pi], at, phases[ph], entries);
        if (w.rank != 0) continue;
        if (sw.o.pattern != Pattern::Pairs && !victim && go_on) {  // the summed rates of the flows that ran together
          entries.push_back(total_entry(sw.o.pattern, sw.points[pi], at, entries));
          report->add(entries.back());
        }
        runs.insert(runs.end(), entries.begin(), entries.end());
        report->write(false);
      }
      run.forget();
      run.background = nullptr;
      if (victim && ph == 0 && w.rank == 0) alone = median_seconds(runs);
      instance = at.instance;
      if (!go_on || w.rank != 0) continue;
      for (json& a : aggregate_entries(runs)) report->add(std::move(a));
      report->write(false);
    }
  }
  return go_on;
}

// Rank 0 writes the results complete (or interrupted) and decides the exit code.
int finish_report(MeshReport& report, const MeshOptions& o, bool go_on) {
  report.write(true, g_interrupted || !go_on ? "interrupted" : "");
  std::fprintf(stderr, "rdmasweep mesh: %zu of %zu entries failed; results: %s, histograms: %s\n", report.failed(),
               report.doc()["benchmarks"].size(), o.out.c_str(), report.hist_path().c_str());
  if (report.print_if_unwritten()) return kFailed;
  if (!go_on) return kInterrupted;
  return report.failed() > 0 ? kFailed : kOk;
}

int run_mesh(const World& w, int argc, char** argv) {
  Sweep sw = agree_on_sweep(w, argc, argv);
  if (sw.code == 0 && sw.o.pattern == Pattern::Victim && w.size < 3) {
    sw.code = kUsage;
    sw.error = "--pattern victim needs 3 ranks or more: rank 1 sends to rank 0, the others the background";
  }
  if (sw.code != 0) {
    if (w.rank == 0) std::fprintf(stderr, "rdmasweep mesh: %s\n", sw.error.c_str());
    return sw.code;
  }
  std::unique_ptr<LocalFabric> fabric;
  std::vector<json> ranks;
  Runner run;
  run.w = w;
  if (std::string e = open_ranks(w, sw, fabric, ranks, run.hosts); !e.empty()) {
    if (w.rank == 0) std::fprintf(stderr, "rdmasweep mesh: %s\n", e.c_str());
    return kFailed;
  }
  run.o = sw.o;
  run.fabric = fabric.get();
  for (const json& r : ranks) run.rd_atom.push_back(r.value("max_qp_rd_atom", 0u));
  std::unique_ptr<ProgressFile> progress;
  if (!sw.o.progress_file.empty())
    progress = std::make_unique<ProgressFile>(sw.o.progress_file, "rank=" + std::to_string(w.rank));
  run.progress = progress.get();
  // From here every wait notices a rank that stops answering (world.hpp).
  start_liveness(w, liveness_silence(sw.o.timeout_s), run.hosts);
  const std::vector<std::vector<Flow>> phases = phases_of(sw.o.pattern, w.size, effective_schedule(sw.o, w.size));
  std::unique_ptr<MeshReport> report;  // rank 0 only
  if (w.rank == 0) report = start_report(w, sw, ranks, phases, *fabric);
  run.report = report.get();
  bool go_on = true;
  try {
    if (sw.o.pattern == Pattern::Multicast) {
      std::string err;
      go_on = run_multicast(McastRun{w, sw.o, *fabric, run.hosts, report.get()}, sw.points, sw.reps, &err);
      if (!err.empty()) {
        if (w.rank == 0) {
          std::fprintf(stderr, "rdmasweep mesh: %s\n", err.c_str());
          report->write(true, err);
        }
        stop_liveness();
        return kFailed;
      }
    } else {
      go_on = run_points(run, sw, phases, report.get());
    }
    stop_liveness();  // every rank got here: no heartbeat is left in flight
  } catch (const RanksGone& e) {
    rank_gone(w, run.hosts, e, report.get());  // does not return
  }
  return broadcast(w.rank == 0 ? finish_report(*report, sw.o, go_on) : kOk);
}

}  // namespace
}  // namespace mesh_detail

int mesh_ranks_main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "rdmasweep mesh: MPI_Init failed\n");
    return kFailed;
  }
  mesh_detail::World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  int code = kFailed;
  try {
    code = mesh_detail::run_mesh(w, argc, argv);
  } catch (const std::exception& e) {
    // Out of step with the other ranks: say which rank failed and take them all down.
    std::fprintf(stderr, "rdmasweep mesh: rank %d: %s\n", w.rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, kFailed);
  }
  MPI_Finalize();
  return code;
}

}  // namespace rdmasweep
