// `rdmasweep hunt`: searches the workload space against a server for performance
// anomalies (bench/hunt/): every run goes to DIR/points.json as it ends (an interrupted
// hunt keeps them), the report to DIR/anomalies.md and DIR/anomalies.json at the end.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "bench/hunt/report.hpp"
#include "bench/hunt/runner.hpp"
#include "bench/hunt/search.hpp"
#include "core/setup/device_checks.hpp"
#include "core/measure/clock.hpp"
#include "core/point/measured_run.hpp"
#include "core/results/context.hpp"
#include "core/results/document.hpp"
#include "core/results/model.hpp"
#include "core/version.hpp"

namespace rdmasweep {

namespace {

hunt::Space load_space(const std::string& path) {
  if (path.empty()) return hunt::Space::defaults();
  std::ifstream in(path);
  if (!in) throw ConfigError("--space: cannot read " + path + ": " + std::strerror(errno));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw ConfigError("--space: " + path + " is not valid JSON");
  return hunt::Space::from_json(j);
}

void make_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno) + " (give a writable --out DIR)");
  check_writable(dir + "/points.json");
}

void write_report(const std::string& dir, const nlohmann::json& report) {
  write_json_atomic(dir + "/anomalies.json", report);
  const std::string md = dir + "/anomalies.md", tmp = md + ".tmp";
  std::ofstream(tmp) << hunt::report_markdown(report);
  if (std::rename(tmp.c_str(), md.c_str()) != 0) throw std::runtime_error("cannot write " + md + ": " + std::strerror(errno));
}

nlohmann::json context(const cli::HuntOptions& o, const LocalFabric& f, const control::Hello& server,
                       const hunt::Space& space) {
  nlohmann::json c = results_context(RunContext{"hunt", f.hello(), f.dev.port(), {}, 0});
  c["peer_host"] = o.host;
  c["server"] = end_context(server);
  c["counters"] = f.counters.available() ? nlohmann::json(f.counters.names()) : nlohmann::json(nullptr);
  c["space"] = space.to_json();
  return c;
}

hunt::RunnerOptions runner_options(const cli::HuntOptions& o, const Placement& placement) {
  hunt::RunnerOptions ro;
  ro.host = o.host;
  ro.port = o.port;
  ro.session.placement = &placement;
  ro.session.timeout = std::chrono::seconds(o.timeout_s);
  ro.session.interrupted = &g_interrupted;
  ro.session.interval = 0;
  return ro;
}

bool fits_device(const TestConfig& c, const verbs::Device& dev) {
  try {
    check_device_limits(c, dev);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

int hunt_main(int argc, char** argv) {
  cli::HuntOptions o;
  if (cli::help_printed(cli::parse_hunt, argc, argv, &o)) return kOk;
  const hunt::Space space = load_space(o.space_file);  // ConfigError: nothing opened yet
  const uint64_t seed = o.seed_given ? o.seed : static_cast<uint64_t>(std::time(nullptr));
  make_dir(o.out_dir);
  ticks::init(ticks::parse("auto"));
  LocalFabric fabric = LocalFabric::open(o.fabric);
  const Placement placement = choose_placement(fabric.dev.name(), o.cpus);
  const hunt::RunnerOptions ro = runner_options(o, placement);
  // The device's limits rule points out before they are tried.
  hunt::Sampler sampler(space, seed, [&fabric](const TestConfig& c) { return fits_device(c, fabric.dev); });
  sampler.random_point();  // a space with no valid point fails here, before any connection
  // The context needs the server's HELLO: it is filled in once connected.
  auto report = std::make_unique<SweepReport>(o.out_dir + "/points.json", nlohmann::json::object(),
                                              client_console_layout(), "rdmasweep hunt");
  auto runner = std::make_unique<hunt::Runner>(fabric, ro, *report);
  report->document().context() = context(o, fabric, runner->server(), space);
  report->document().context()["incomplete"] = true;
  report->set_width(64);

  std::fprintf(stderr, "rdmasweep hunt: %s against %s (%s), budget %.0f s, seed %llu, %zu knob(s) searched; results in %s\n",
               fabric.dev.name().c_str(), o.host.c_str(), runner->server().device.c_str(), o.budget_s,
               static_cast<unsigned long long>(seed), space.searched().size(), o.out_dir.c_str());
  hunt::Hunter hunter(
      space, sampler, [&runner](const hunt::Candidate& c, const std::string& phase) { return runner->measure(c, phase); },
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(o.budget_s)),
      [] { return g_interrupted.load(); }, [](const std::string& s) { std::fprintf(stderr, "rdmasweep %s\n", s.c_str()); });
  const hunt::HuntResult result = hunter.run();  // a failure that ends the hunt is in result.stopped
  const std::string& stopped = result.stopped;
  const nlohmann::json& ctx = report->doc()["context"];
  hunt::ReportContext rc{o.host, o.connect_args, seed, o.budget_s, "points.json",
                         {{"client", {{"host", ctx["host_name"]}, {"device", ctx["device"]}, {"mtu", ctx["mtu"]}}},
                          {"server", ctx["server"]}}};
  write_report(o.out_dir, hunt::report_json(result, space, rc));
  report->write(true, g_interrupted ? "interrupted" : stopped);
  runner.reset();
  std::fprintf(stderr, "rdmasweep hunt: %zu anomal%s reproduced, %zu flagged point(s) not reported; %zu run(s); report: %s/anomalies.md\n",
               result.anomalies.size(), result.anomalies.size() == 1 ? "y" : "ies", result.others.size(),
               result.measurements, o.out_dir.c_str());
  if (report->print_if_unwritten()) return kFailed;
  if (g_interrupted) return kInterrupted;
  if (!stopped.empty()) throw std::runtime_error(stopped);
  return kOk;
}

}  // namespace rdmasweep
