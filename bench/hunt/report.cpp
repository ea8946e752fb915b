#include "bench/hunt/report.hpp"

#include "core/results/document.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>

namespace rdmasweep::hunt {

using nlohmann::json;

static std::string value_text(const Knob& k, uint64_t v) {
  if (k.kind == KnobKind::Flag) return v ? "1" : "0";
  json j = knob_json(k, v);
  return j.is_string() ? j.get<std::string>() : j.dump();
}

static std::string number_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string client_args(const TestConfig& c, const TestConfig* ref, const Space& s) {
  std::string out;
  for (const Knob& k : knobs()) {
    const uint64_t a = k.get(c), b = ref ? k.get(*ref) : a;
    const bool head = std::strcmp(k.key, "op") == 0 || std::strcmp(k.key, "mode") == 0 ||
                      std::strcmp(k.key, "qps") == 0 || std::strcmp(k.key, "size") == 0;
    if (!head && a == k.def && b == k.def) continue;
    std::string v = value_text(k, std::min(a, b));
    if (a != b) v += "," + value_text(k, std::max(a, b));
    out += (out.empty() ? "" : " ") + knob_flag(k) + " " + v;
  }
  out += " --duration " + number_text(s.axes.duration) + " --warmup " + std::to_string(s.axes.warmup);
  return out;
}

static std::string client_command(const ReportContext& ctx, const std::string& args) {
  return "rdmasweep client " + ctx.host + (ctx.connect_args.empty() ? "" : " " + ctx.connect_args) + " " + args;
}

std::string reproduce_command(const Anomaly& a, const Space& s, const ReportContext& ctx) {
  const std::string reps = " --repetitions " + std::to_string(s.repetitions);
  if (a.found.oracle == "isolation") {
    // The victim alone, then beside the aggressor, which runs long enough to cover
    // the victim's setup and repetitions.
    Space longer = s;
    longer.axes.duration = s.axes.duration * (2.0 * s.repetitions + 4);
    const std::string victim = client_args(a.minimal.point, nullptr, s) + reps;
    return client_command(ctx, victim + " --out alone.json") + "; " +
           client_command(ctx, client_args(*a.minimal.aggressor, nullptr, longer) + " --out aggressor.json") + " & " +
           client_command(ctx, victim + " --out beside.json") + "; wait";
  }
  return client_command(ctx, client_args(a.minimal.point, a.reference ? &*a.reference : nullptr, s) + reps);
}

static json candidate_json(const Candidate& c) {
  json j = {{"point", point_name(c.point)}, {"config", c.point}};
  json changed = json::object();  // the knobs away from their defaults: the trigger in short
  for (const Knob& k : knobs())
    if (k.get(c.point) != k.def) changed[k.key] = knob_json(k, k.get(c.point));
  j["changed"] = changed;
  if (c.aggressor) j["aggressor"] = {{"point", point_name(*c.aggressor)}, {"config", *c.aggressor}};
  return j;
}

static json probe_json(const Probe& p) {
  json f = json::array();
  for (const Finding& x : p.findings) f.push_back(x.to_json());
  return {{"held", p.held}, {"runs", p.runs}, {"findings", f}};
}

static json anomaly_json(const Anomaly& a, size_t id, const Space& s, const ReportContext& ctx) {
  json j = {{"id", id},
            {"oracle", a.found.oracle},
            {"minimal", candidate_json(a.minimal)},
            {"first_seen", candidate_json(a.first)},
            {"found", a.found.to_json()},
            {"evidence", probe_json(a.evidence)},
            {"shrinking", a.steps},
            {"shrink_complete", a.shrink_complete},
            {"also_seen", a.also_seen},
            {"also_shows", a.also_shows},
            {"reproduce", reproduce_command(a, s, ctx)}};
  if (a.reference) j["reference"] = {{"point", point_name(*a.reference)}, {"config", *a.reference}};
  const Measurement& m = a.evidence.last;
  if (m.has_counters) {
    json c = json::object();
    for (const auto& [k, v] : m.counters) c[k] = v;
    j["counters"] = {{"messages", m.messages}, {"normalized", c}};
  }
  const Finding& last = a.evidence.findings.empty() ? a.found : a.evidence.findings.back();
  j["summary"] = a.found.oracle + " on " + a.minimal.key() + ": " + last.evidence;
  return j;
}

json report_json(const HuntResult& r, const Space& s, const ReportContext& ctx) {
  json anomalies = json::array(), others = json::array();
  for (size_t i = 0; i < r.anomalies.size(); ++i) anomalies.push_back(anomaly_json(r.anomalies[i], i + 1, s, ctx));
  for (const Flagged& f : r.others)
    others.push_back({{"candidate", f.cand.key()},
                      {"oracle", f.found.oracle},
                      {"status", f.status},
                      {"found", f.found.to_json()},
                      {"rerun", probe_json(f.probe)}});
  std::set<std::string> searched;
  for (const Knob* k : s.searched()) searched.insert(k->key);
  return {{"tool", "rdmasweep"},
          {"command", "hunt"},
          {"tool_version", RDMASWEEP_VERSION},
          {"date", results_date()},
          {"host", ctx.host},
          {"fabric", ctx.fabric},
          {"seed", ctx.seed},
          {"budget_seconds", ctx.budget_s},
          {"seconds", r.seconds},
          {"explore_seconds", r.explore_seconds},
          {"explored", r.explored},
          {"measurements", r.measurements},
          {"failed_runs", r.failed},
          {"interrupted", r.interrupted},
          {"stopped", r.stopped},
          {"searched_knobs", searched},
          {"space", s.to_json()},
          {"results_file", ctx.results_file},
          {"anomalies", anomalies},
          {"not_reported", others}};
}

static void md_anomaly(std::ostringstream& o, const json& a) {
  o << "## Anomaly " << a["id"].get<size_t>() << ": " << a["oracle"].get<std::string>() << "\n\n";
  o << "- **Minimal trigger:** `" << a["minimal"]["point"].get<std::string>() << "`";
  if (a["minimal"].contains("aggressor")) o << " beside `" << a["minimal"]["aggressor"]["point"].get<std::string>() << "`";
  o << "\n- **Knobs away from their defaults:** `" << a["minimal"]["changed"].dump() << "`\n";
  if (a.contains("reference")) o << "- **Compared with:** `" << a["reference"]["point"].get<std::string>() << "`\n";
  const json& ev = a["evidence"];
  o << "- **Evidence:** held in " << ev["held"] << " of " << ev["runs"] << " runs";
  for (const json& f : ev["findings"]) o << "\n  - " << f["evidence"].get<std::string>();
  o << "\n- **First seen on:** `" << a["first_seen"]["point"].get<std::string>() << "` (" << a["found"]["evidence"].get<std::string>()
    << ")\n";
  if (a.contains("counters"))
    o << "- **Counters** (last run, both sides, over " << a["counters"]["messages"] << " messages): `"
      << a["counters"]["normalized"].dump() << "`\n";
  o << "- **Shrinking:**" << (a["shrink_complete"].get<bool>() ? "" : " (stopped by the budget)");
  if (a["shrinking"].empty()) o << " nothing to shrink";
  for (const json& s : a["shrinking"]) o << "\n  - " << s.get<std::string>();
  o << "\n";
  if (!a["also_shows"].empty()) {
    o << "- **Its runs also show:**";
    for (const json& s : a["also_shows"]) o << " " << s.get<std::string>();
    o << "\n";
  }
  if (!a["also_seen"].empty()) o << "- **Also explains:** " << a["also_seen"].size() << " other flagged point(s)\n";
  o << "\nReproduce:\n\n```\n" << a["reproduce"].get<std::string>() << "\n```\n\n";
}

std::string report_markdown(const json& r) {
  std::ostringstream o;
  o << "# rdmasweep hunt against " << r["host"].get<std::string>() << "\n\n";
  o << "Explored " << r["explored"] << " point(s) in " << number_text(std::round(r["explore_seconds"].get<double>()))
    << " s of a " << number_text(r["budget_seconds"].get<double>()) << " s budget (seed " << r["seed"] << "); "
    << r["measurements"] << " measured run(s) in all, " << r["failed_runs"] << " failed. Searched knobs: ";
  for (const json& k : r["searched_knobs"]) o << "`" << k.get<std::string>() << "` ";
  o << "\nEvery run is in `" << r["results_file"].get<std::string>() << "`.";
  if (r["interrupted"].get<bool>()) o << " **Interrupted**: the report covers what was done.";
  const json& t = r["space"]["thresholds"];
  o << "\n\nOracles: throughput below " << t["throughput_fraction"] << " x a comparable point's; latency p99 above "
    << t["latency_multiple"] << " x a comparable point's; counters per message above " << t["counters"].dump()
    << "; isolation: slowed by more than " << t["isolation_slowdown"] << " beside an aggressor. An anomaly must hold in "
    << r["space"]["must_hold"] << " of " << r["space"]["repetitions"] << " new runs.\n\n";
  const json& an = r["anomalies"];
  o << (an.empty() ? "**No anomaly** reproduced.\n\n" : "**" + std::to_string(an.size()) + " anomal" +
                                                              (an.size() == 1 ? "y" : "ies") + "** reproduced.\n\n");
  for (const json& a : an) md_anomaly(o, a);
  const json& others = r["not_reported"];
  if (!others.empty()) {
    o << "## Flagged once, not reported\n\n| point | oracle | first seen | status | held |\n|---|---|---|---|---|\n";
    for (const json& f : others)
      o << "| `" << f["candidate"].get<std::string>() << "` | " << f["oracle"].get<std::string>() << " | "
        << f["found"]["evidence"].get<std::string>() << " | " << f["status"].get<std::string>() << " | "
        << f["rerun"]["held"] << " of " << f["rerun"]["runs"] << " |\n";
    o << "\n*noise*: the new runs did not show it again, so it is not an anomaly; *covered*: an anomaly above "
         "explains it; *not examined*: the budget ran out first.\n";
  }
  return o.str();
}

}  // namespace rdmasweep::hunt
