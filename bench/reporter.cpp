#include "bench/reporter.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench/client_beside.hpp"
#include "core/config/knobs.hpp"
#include "core/results/perftest_reporter.hpp"
#include "core/results/records.hpp"

namespace rdmasweep {

using nlohmann::json;

// Readers of Google Benchmark JSON do arithmetic on the time fields: never null.
static double time_value(double v) { return std::isfinite(v) ? v : 0; }

std::unique_ptr<ResultsReporter> console_reporter(cli::ConsoleFormat format, size_t name_width, std::ostream& out,
                                                  std::ostream& err) {
  if (format == cli::ConsoleFormat::Perftest) return std::make_unique<PerftestReporter>("rdmasweep", out, err);
  ConsoleLayout table = client_console_layout();
  table.name_width = name_width;
  return std::make_unique<ConsoleReporter>(std::move(table), out);
}

SweepReporter::SweepReporter(std::string out_path, json context, const std::vector<TestConfig>& points,
                             const PointStore& store, const std::string& abort_reason, size_t name_width,
                             cli::ConsoleFormat format, std::chrono::steady_clock::time_point started)
    : report_(std::move(out_path), std::move(context), console_reporter(format, name_width, std::cout, std::cerr),
              "rdmasweep"),
      notes_under_rows_(format == cli::ConsoleFormat::Table),
      store_(store),
      abort_reason_(abort_reason),
      started_(started) {
  for (const TestConfig& c : points) config_of_.emplace(point_name(c), c);
}

void SweepReporter::add_row(const std::string& name, const TestConfig& cfg, const std::string& background) {
  config_of_.emplace(name, cfg);
  background_of_.emplace(name, background);
}

bool SweepReporter::ReportContext(const Context& ctx) {
  Laps laps(outside_);
  json& c = report_.document().context();
  // Google Benchmark's own fields of the context (the rest, "executable" among them:
  // core/results/context.hpp; its executable_name would be the subcommand here).
  c["num_cpus"] = ctx.cpu_info.num_cpus;
  c["mhz_per_cpu"] = static_cast<int64_t>(ctx.cpu_info.cycles_per_second / 1e6);
  c["cpu_scaling_enabled"] = ctx.cpu_info.scaling == benchmark::CPUInfo::ENABLED;
  c["load_avg"] = ctx.cpu_info.load_avg;
  report_.write(false);
  laps.lap(&WallTime::writing);
  return true;
}

void SweepReporter::clear_progress_line() {
  if (isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);
}

static double counter(const benchmark::BenchmarkReporter::Run& r, const char* name) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? NAN : it->second.value;
}

// Every field Google Benchmark writes, in every entry: its tools/compare.py reads
// real_time, cpu_time and time_unit of each entry, failed ones included.
json SweepReporter::entry(const Run& r) const {
  const std::string point = r.run_name.function_name;
  const bool aggregate = r.run_type == Run::RT_Aggregate;
  EntryPlace at;
  at.name = aggregate ? point + "_" + r.aggregate_name : point;
  at.run_name = point;
  at.family = static_cast<size_t>(r.family_index);
  at.instance = static_cast<size_t>(r.per_family_instance_index);
  at.repetitions = r.repetitions;
  at.repetition = r.repetition_index;
  at.threads = r.threads;
  if (aggregate) {
    at.aggregate_name = r.aggregate_name;
    at.aggregate_unit = r.aggregate_unit == benchmark::kPercentage ? "percentage" : "time";
  }
  json b = entry_head(at);
  if (r.error_occurred) {
    mark_failed(b, r.error_message);
  } else {
    // Google Benchmark's CPU timer ran around session.run (setup and handshake
    // too): the CPU of the measured window is the point's cpu_seconds. A cv
    // aggregate's times are ratios, written unscaled as Google Benchmark does.
    const bool ratio = aggregate && r.aggregate_unit == benchmark::kPercentage;
    const double scale = ratio ? 1 : benchmark::GetTimeUnitMultiplier(r.time_unit);
    b["iterations"] = r.iterations;
    b["real_time"] = time_value(ratio ? r.real_accumulated_time : r.GetAdjustedRealTime());
    b["cpu_time"] = time_value(counter(r, "cpu_seconds") * scale);
    for (const auto& [k, c] : r.counters) b[k] = json_number(c.value);
  }
  b["time_unit"] = benchmark::GetTimeUnitString(r.time_unit);
  if (!r.report_label.empty()) b["label"] = r.report_label;
  auto cfg = config_of_.find(point);
  if (cfg != config_of_.end()) b["config"] = cfg->second;
  auto bg = background_of_.find(point);
  if (bg != background_of_.end()) b["background"] = bg->second;
  return b;
}

void SweepReporter::ReportRuns(const std::vector<Run>& runs) {
  Laps laps(outside_);
  clear_progress_line();
  std::map<std::string, size_t> nth;  // the store keeps a point's successful repetitions, in order
  std::vector<std::string> notes;
  for (const Run& r : runs) {
    const std::string point = r.run_name.function_name;
    const PointResult* this_run = nullptr;
    if (r.run_type == Run::RT_Iteration && !r.error_occurred) {
      auto st = store_.find(point);
      size_t n = nth[point]++;
      if (st != store_.end() && n < st->second.size()) this_run = &st->second[n];
    }
    json b = entry(r);
    std::vector<std::string> flags;
    if (this_run) flags = add_counters(b, *this_run);
    const bool first_run = r.run_type == Run::RT_Iteration && store_.count(point) && !report_.document().has_record(point);
    report_.add(std::move(b), first_run ? histogram_record(store_.at(point)) : json());
    if (r.run_type == Run::RT_Iteration && !r.error_occurred && background_of_.count(point)) {
      Figures row;
      for (const auto& [k, c] : r.counters) row.emplace_back(k, c.value);
      const std::string line = beside_note(background_of_.at(point), row);
      notes.push_back(notes_under_rows_ ? line : "rdmasweep: " + point + ":" + line.substr(1));
    }
    if (!flags.empty()) {
      std::string line;
      for (const std::string& f : flags) line += (line.empty() ? "" : ", ") + f;
      notes.push_back(notes_under_rows_ ? "  ! counters: " + line : "rdmasweep: " + point + ": counters: " + line);
    }
  }
  report_.write(false);  // prints the rows: each point's counter notes go under them
  for (const std::string& n : notes) std::fprintf(notes_under_rows_ ? stdout : stderr, "%s\n", n.c_str());
  std::fflush(stdout);
  laps.lap(&WallTime::writing);
}

WallTime SweepReporter::parts() const {
  WallTime w = outside_;
  for (const auto& [name, runs] : store_)
    for (const PointResult& r : runs) w += r.wall;
  return w;
}

double SweepReporter::wall() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

std::string SweepReporter::time_summary() const { return wall_summary(parts(), wall()); }

void SweepReporter::finish() {
  Laps laps(outside_);
  const double w = wall();
  report_.document().context()["wall_time"] = wall_json(parts(), w);
  report_.set_time_summary(wall_summary(parts(), w));
  report_.write(true, abort_reason_);
  laps.lap(&WallTime::writing);
}

}  // namespace rdmasweep
