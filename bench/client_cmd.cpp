// `rdmasweep client`: expands the sweep, registers one Google Benchmark per point
// and drives each through the engine against a remote `rdmasweep server`.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <future>
#include <iostream>

#include <benchmark/benchmark.h>

#include "bench/cli.hpp"
#include "bench/client_beside.hpp"
#include "bench/commands.hpp"
#include "bench/reporter.hpp"
#include "bench/sweep_plan.hpp"
#include "core/config/refusals.hpp"
#include "core/config/sweep.hpp"
#include "core/measure/clock.hpp"
#include "core/point/cm_connect.hpp"
#include "core/point/measured_run.hpp"
#include "core/point/session.hpp"
#include "core/results/aggregates.hpp"
#include "core/results/context.hpp"
#include "core/results/progress_file.hpp"
#include "core/setup/device_checks.hpp"
#include "core/setup/sizing.hpp"
#include "core/version.hpp"

namespace rdmasweep {

namespace {

// One line on stderr, rewritten in place, only when stderr is a terminal; and the
// --progress-file's lines, whatever stderr is.
class Progress {
 public:
  Progress(size_t total, bool enabled, const ProgressFile& file)
      : total_(total), enabled_(enabled && isatty(STDERR_FILENO)), file_(file), start_(Clock::now()) {}
  void ended(const std::string& name, bool ok) { file_.say(ok ? "done" : "failed", name); }
  void starting(const std::string& name) {
    file_.say("start", name);
    if (!enabled_) return;
    ++index_;
    std::string eta = "--:--";
    if (index_ > 1) {
      double per = std::chrono::duration<double>(Clock::now() - start_).count() / static_cast<double>(index_ - 1);
      long left = static_cast<long>(per * static_cast<double>(total_ - index_ + 1));
      char b[32];
      std::snprintf(b, sizeof b, "%ld:%02ld", left / 60, left % 60);
      eta = b;
    }
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s  ETA %s", index_, total_, name.c_str(), eta.c_str());
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  size_t total_, index_ = 0;
  bool enabled_;
  const ProgressFile& file_;
  Clock::time_point start_;
};

// How the QPs were connected: by RDMA-CM along `route` (--cm), or from the QP data
// the sides exchange on the control channel.
nlohmann::json connection_context(const std::optional<CmRoute>& route) {
  if (!route) return {{"method", "qp_data"}};
  return {{"method", "rdma_cm"}, {"address", route->address}, {"device", route->device},
          {"port", route->port},  {"gid", route->gid}, {"gid_note", "the source GID comes from routing"}};
}

nlohmann::json make_context(const cli::ClientOptions& o, const LocalFabric& f, const control::Hello& server,
                            const std::vector<TestConfig>& sweep, const Placement& placement,
                            const std::optional<CmRoute>& route) {
  uint32_t threads = 1;
  for (const TestConfig& p : sweep) threads = std::max(threads, p.knobs.threads);
  const RunContext run{"client", f.hello(), f.dev.port(), o.labels, o.interval};
  const SweepContext sw{o.config_file, sweep_json(o.spec), sweep.size(), o.clock, o.cap_to_cq};
  nlohmann::json c = results_context(run, &sw);
  c["peer_host"] = o.host;
  c["connection"] = connection_context(route);
  c["client"] = end_context(run.me);
  c["server"] = end_context(server);
  c["counters"] = f.counters.available() ? nlohmann::json(f.counters.names()) : nlohmann::json(nullptr);
  // this side's cores for the sweep's most threads (thread t on per_thread[t])
  c["placement"] = placement_json(placement, threads);
  return c;
}

// What this side will use and what it lacks, before the first point.
void announce(const LocalFabric& fabric, const control::Hello& server, const std::vector<TestConfig>& sweep,
              const Placement& placement) {
  const size_t points = sweep.size();
  std::fprintf(stderr, "rdmasweep: %s port %u, GID index %d (%s %s%s%s), %zu point(s), server %s (%s)\n",
               fabric.dev.name().c_str(), fabric.dev.port(), fabric.gid.index, fabric.gid.type.c_str(),
               gid_to_string(fabric.gid.gid).c_str(), fabric.gid.netdev.empty() ? "" : " on ", fabric.gid.netdev.c_str(),
               points, server.host.c_str(), server.device.c_str());
  uint32_t threads = 1;
  for (const TestConfig& p : sweep) threads = std::max(threads, p.knobs.threads);
  if (placement.pins(threads))
    std::fprintf(stderr, "rdmasweep: threads run on cores %s (%s)%s; the server's: %s\n",
                 cpu_list_text(placement.cpus).c_str(), placement.source.c_str(),
                 placement.explicit_cpus ? "" : ", a single thread unpinned",
                 server.cpus.empty() ? "not said (an older server)" : server.cpus.c_str());
  if (!fabric.counters.available())
    std::fprintf(stderr, "rdmasweep: %s has no port counters (%s): the results carry none from this side\n",
                 fabric.dev.name().c_str(), fabric.counters.where().c_str());
}

// --cm: the device the server's address routes to, before any is opened (--device,
// when given, and --ib-port, default 1, must be the route's); none without --cm.
std::optional<CmRoute> cm_route(cli::ClientOptions& o) {
  if (!o.cm) return std::nullopt;
  CmRoute route = resolve_cm_route(o.cm_address, std::chrono::seconds(o.timeout_s));
  if (o.fabric.device.empty()) o.fabric.device = route.device;
  check_cm_device(route, o.fabric.device, o.fabric.port);
  return route;
}

// An iWARP device's QPs connect only through RDMA-CM: the client does as with --cm,
// and says so (the points are checked again against --cm's refusals).
std::optional<CmRoute> cm_for_iwarp(cli::ClientOptions& o, const LocalFabric& fabric, std::vector<TestConfig>& points) {
  for (const TestConfig& c : points) check_device_limits(c, fabric.dev);  // what iWARP cannot do, said as such
  if (o.fabric.gid_index != -1) throw cli::UsageError(fabric.dev.name() + " is iWARP, " + refusal_text("cm-gid"));
  o.cm = true;
  o.cm_address = iwarp_cm_address(o.host, fabric.dev.name(), fabric.gid.netdev);
  points = expand(o.spec, {o.cm});
  return cm_route(o);
}

// --rate 50%: the message rate its flat-out twin achieved, the median of its runs so
// far (expand() placed the twin first); 0 when it has none.
double flat_out_rate(const PointStore& store, const TestConfig& c) {
  auto it = store.find(point_name(flat_out_twin(c)));
  std::vector<double> rates;
  if (it != store.end())
    for (const PointResult& r : it->second)
      if (r.seconds > 0) rates.push_back(static_cast<double>(r.messages) / r.seconds);
  return rates.empty() ? 0 : median_of(rates);
}

// What the registered points share: the session, their results, the progress line and
// why the rest are not run (a failure that leaves client and server out of step, or an
// interrupt); with --beside, the background.
struct Registry {
  ClientSession& session;
  PointStore& store;
  Progress& progress;
  std::string& abort_reason;
  Background* background;
};

// One Google Benchmark run of the row `name`: `run` measures it (adding any figures of
// the row's own to its argument).
template <class Run>
void run_row(benchmark::State& st, Registry& reg, const std::string& name, Run run) {
  for (auto _ : st) {
    if (!reg.abort_reason.empty()) {
      st.SkipWithError(("not run: " + reg.abort_reason).c_str());
      break;
    }
    reg.progress.starting(name);
    try {
      Figures extra;
      PointResult r = run(extra);
      st.SetIterationTime(r.seconds);
      for (const auto& [k, v] : figures(r)) st.counters[k] = v;
      for (const auto& [k, v] : extra) st.counters[k] = v;
      if (r.latency) st.SetLabel(latency_kind(r.cfg));
      reg.store[name].push_back(std::move(r));
      reg.progress.ended(name, true);
    } catch (const std::exception& e) {
      reg.progress.ended(name, false);
      if (g_interrupted) reg.abort_reason = "interrupted";
      else if (reg.session.broken()) reg.abort_reason = std::string("an earlier point failed: ") + e.what();
      st.SkipWithError(e.what());
    }
  }
}

void register_row(const std::string& name, uint32_t repetitions, std::function<void(benchmark::State&)> fn) {
  benchmark::RegisterBenchmark(name.c_str(), std::move(fn))
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(static_cast<int>(repetitions))
      ->ReportAggregatesOnly(false)
      ->Unit(benchmark::kMillisecond);
}

// One Google Benchmark per point (and, with --beside, its row beside the background
// right after it), each running it through the session. QPs are created once per
// shape and reused across sizes.
void register_points(const std::vector<TestConfig>& points, uint32_t repetitions, Registry& reg) {
  std::vector<uint64_t> slots = plan_slots(points);
  for (size_t i = 0; i < points.size(); ++i) {
    const TestConfig& cfg = points[i];
    const uint64_t slot = slots[i];
    const std::string name = point_name(cfg);
    register_row(name, repetitions, [&reg, cfg, slot, name](benchmark::State& st) {
      run_row(st, reg, name, [&](Figures&) {
        return reg.session.run(is_share(cfg.knobs.rate) ? paced_at_share(cfg, flat_out_rate(reg.store, cfg)) : cfg, slot);
      });
    });
    if (!reg.background) continue;
    register_row(beside_name(name), repetitions, [&reg, cfg, slot, name](benchmark::State& st) {
      run_row(st, reg, beside_name(name), [&](Figures& extra) {
        const TestConfig c = is_share(cfg.knobs.rate) ? paced_at_share(cfg, flat_out_rate(reg.store, cfg)) : cfg;
        return run_point_beside(*reg.background, reg.session, c, slot, reg.store[name], extra);
      });
    });
  }
}

SessionOptions session_options(const cli::ClientOptions& o, const Placement& placement,
                               const std::optional<CmRoute>& route, const ProgressFile& progress) {
  SessionOptions so;
  so.progress_file = &progress;
  so.placement = &placement;
  so.timeout = std::chrono::seconds(o.timeout_s);
  so.interrupted = &g_interrupted;
  so.interval = o.interval;
  if (route) so.cm_address = route->address;
  if (o.verbose) so.verbose = [](const std::string& s) { std::fprintf(stderr, "rdmasweep: %s\n", s.c_str()); };
  return so;
}

// --beside: the background's own connection to the server, which HELLO asks to serve
// it alongside the client's main one.
std::unique_ptr<ClientSession> beside_session(const cli::ClientOptions& o, LocalFabric& fabric, SessionOptions so) {
  so.beside = true;
  so.progress_file = nullptr;  // the lines a script acts on are the measured points'
  try {
    return std::make_unique<ClientSession>(fabric, control::Channel::connect(o.host, o.port, so.timeout), so);
  } catch (const control::ChannelError& e) {
    throw control::ChannelError(std::string("--beside: the background's connection to the server: ") + e.what() +
                                " (a server started with --once serves one connection: drop --once)");
  }
}

// What the server's port can carry, checked before any QP exists.
void check_server_mtu(const std::vector<TestConfig>& points, uint32_t server_mtu) {
  if (server_mtu == 0) return;
  for (const TestConfig& c : points) {
    if (c.knobs.mtu > server_mtu)
      throw ConfigError(point_name(c) + ": --mtu " + std::to_string(c.knobs.mtu) + " is over the server's active MTU (" +
                        std::to_string(server_mtu) + "): lower --mtu (or 0 for the ports' own)");
    if (is_ud(c) && c.work.size > server_mtu)
      throw ConfigError(point_name(c) + ": --size " + std::to_string(c.work.size) + " is over the UD limit of " +
                        std::to_string(server_mtu) + " bytes (the server's active MTU): lower --size");
  }
}

void announce_route(const CmRoute& route, const LocalFabric& fabric) {
  std::fprintf(stderr, "rdmasweep: QPs connect with RDMA-CM to %s through %s port %u, source GID %s (from routing)%s\n",
               route.address.c_str(), route.device.c_str(), route.port, route.gid.c_str(),
               fabric.dev.is_iwarp() ? "; an iWARP device's always do, as with --cm" : "");
}

// The console table's name column: the longest point name (and its repetition suffix).
size_t name_width(const std::vector<TestConfig>& points, uint32_t repetitions) {
  size_t width = 5;
  for (const TestConfig& c : points) width = std::max(width, point_name(c).size() + (repetitions > 1 ? 7 : 0));
  return width;
}

// Google Benchmark's own flags (--benchmark_*), passed through; false on one it does not know.
bool init_benchmark(char* argv0, const std::vector<std::string>& args) {
  std::vector<char*> gb_argv{argv0};
  for (const std::string& a : args) gb_argv.push_back(const_cast<char*>(a.c_str()));
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  return !benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data());
}

// The run's last line and its exit code.
int summarize(SweepReporter& reporter, size_t ran, const std::string& out) {
  std::fprintf(stderr, "rdmasweep: %zu benchmark(s) run, %zu failed; %s; results: %s, histograms: %s\n", ran,
               reporter.failed(), reporter.time_summary().c_str(), out.c_str(), reporter.hist_path().c_str());
  if (reporter.print_if_unwritten()) return kFailed;
  if (g_interrupted) return kInterrupted;
  if (ran == 0) {
    std::fprintf(stderr, "rdmasweep: no point matched --benchmark_filter\n");
    return kFailed;
  }
  return reporter.failed() > 0 ? kFailed : kOk;
}

// --plan with --beside: each point's second row, the background's time and buffers.
std::string beside_plan_text(const std::vector<TestConfig>& points, const SweepPlan& plan, const TestConfig& background) {
  double extra = 0;
  for (const TestConfig& c : points) extra += plan.repetitions * background_seconds(measuring_seconds(c, plan.rates));
  const SweepPlan bg = plan_sweep({background}, 1, plan.rates);
  char b[512];
  std::snprintf(b, sizeof b,
                "--beside: each point runs again as NAME/beside, while the background %s runs on a connection and "
                "QPs of its own until the point ends: about %s more if the point runs 10x slower beside it than "
                "alone, and %s more buffers on "
                "each side while it runs\n",
                point_name(background).c_str(), human_seconds(extra).c_str(),
                human_bytes(static_cast<double>(bg.max_side_bytes)).c_str());
  return b;
}

// --plan: what this run would do, from the options alone (nothing opened or connected).
int print_plan(const cli::ClientOptions& o, const std::vector<TestConfig>& points, const SweepPlan& plan,
               const std::optional<Background>& background) {
  std::cout << plan_text(plan);
  if (background) std::cout << beside_plan_text(points, plan, background->cfg);
  if (o.cap_to_cq)
    std::cout << "--cq-policy cap: a point whose QPs need more than the device's max_cqe runs with lower depths, "
                 "under another name\n";
  if (!o.benchmark_args.empty()) std::cout << "--benchmark_* flags are not applied: every point of the sweep is listed\n";
  return kOk;
}

}  // namespace

int client_main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  cli::ClientOptions o;
  if (cli::help_printed(cli::parse_client, argc, argv, &o)) return kOk;
  if (!o.multicast.empty()) return multicast_client_main(o);
  std::vector<TestConfig> points = expand(o.spec, {o.cm});  // ConfigError: nothing created yet
  std::optional<Background> background;
  if (!o.beside.empty()) background.emplace(Background{background_point(o.beside, {o.cm}), {}, nullptr});
  const SweepPlan plan = plan_sweep(points, o.spec.repetitions, o.plan_from.empty() ? PlanRates{} : rates_from_file(o.plan_from));
  if (o.plan) return print_plan(o, points, plan, background);
  // The clock's calibration (two 50 ms sleeps) runs while the device opens and the server answers.
  std::future<void> calibrated;
  try {
    calibrated = std::async(std::launch::async, [clock = ticks::parse(o.clock)] { ticks::init(clock); });
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  check_writable(o.out);
  const ProgressFile progress_file = o.progress_file.empty() ? ProgressFile() : ProgressFile(o.progress_file);
  std::optional<CmRoute> route = cm_route(o);
  LocalFabric fabric = LocalFabric::open(o.fabric);
  if (!route && fabric.dev.is_iwarp()) route = cm_for_iwarp(o, fabric, points);
  const Placement placement = choose_placement(fabric.dev.name(), o.cpus);  // before any QP exists
  if (o.cap_to_cq) cli::cap_points(points, static_cast<uint64_t>(fabric.dev.attr().max_cqe), "this host's", "rdmasweep");
  for (const TestConfig& c : points) check_device_limits(c, fabric.dev);
  if (background) check_device_limits(background->cfg, fabric.dev);
  const SessionOptions so = session_options(o, placement, route, progress_file);
  ClientSession session(fabric, control::Channel::connect(o.host, o.port, so.timeout), so);
  try {
    calibrated.get();  // before anything reads the clock
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  if (o.cap_to_cq) cli::cap_points(points, session.server().max_cqe, "the server's", "rdmasweep");
  check_server_mtu(points, session.server().active_mtu);  // before the first point: no QP exists yet
  // Every check passed: the run starts. Not before, so a refused run stays one line.
  if (plan.seconds > kLongRunSeconds) std::fprintf(stderr, "%s\n", long_run_line(plan).c_str());
  announce(fabric, session.server(), points, placement);
  if (route) announce_route(*route, fabric);

  PointStore store;
  std::string abort_reason;
  Progress progress(points.size() * o.spec.repetitions * (background ? 2 : 1), o.progress, progress_file);
  if (background)
    background->connect = [&o, &fabric, &so, flag = background->wind_up.get()] {
      SessionOptions b = so;
      b.wind_up = flag;
      return beside_session(o, fabric, b);
    };
  Registry registry{session, store, progress, abort_reason, background ? &*background : nullptr};
  register_points(points, o.spec.repetitions, registry);

  if (!init_benchmark(argv[0], o.benchmark_args)) return kUsage;

  nlohmann::json context = make_context(o, fabric, session.server(), points, placement, route);
  if (background) context["beside"] = {{"knobs", o.beside}, {"point", point_name(background->cfg)}, {"config", background->cfg}};
  SweepReporter reporter(o.out, std::move(context), points, store, abort_reason,
                         name_width(points, o.spec.repetitions) + (background ? 7 : 0), o.format, started);
  if (background)
    for (const TestConfig& c : points) reporter.add_row(beside_name(point_name(c)), c, point_name(background->cfg));
  WallTime outside;
  Laps(outside, started).lap(&WallTime::setup);  // clock calibration, device, connection, HELLO
  size_t ran = benchmark::RunSpecifiedBenchmarks(&reporter);
  Laps laps(outside);
  session.close(abort_reason);
  if (background && background->session && !background->session->broken()) background->session->close(abort_reason);
  laps.lap(&WallTime::control);
  session.release();
  if (background) background->session.reset();
  laps.lap(&WallTime::setup);  // the last shape's QPs destroyed
  reporter.add_time(outside);
  reporter.finish();
  SweepReporter::clear_progress_line();
  progress_file.say("end", o.out);
  return summarize(reporter, ran, o.out);
}

}  // namespace rdmasweep
