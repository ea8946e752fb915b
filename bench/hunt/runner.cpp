#include "bench/hunt/runner.hpp"

#include <algorithm>
#include <exception>

#include "core/point/beside.hpp"
#include "core/results/model.hpp"
#include "core/results/records.hpp"

namespace rdmasweep::hunt {

using nlohmann::json;

// The rates are figures()'s headline (UD: what arrived); `messages` stays what was
// posted, the count the counters are judged per.
Measurement measurement_of(const PointResult& r) {
  Measurement m;
  m.ok = true;
  m.messages = static_cast<double>(r.messages);
  for (const auto& [k, v] : figures(r)) {
    if (k == "items_per_second") m.msg_rate = v;
    else if (k == "bytes_per_second") m.byte_rate = v;
    else if (k == "lat_p99_us") m.p99_us = v;
  }
  for (const auto& [k, v] : counter_figures(r)) m.counters[k] = v;
  m.has_counters = r.has_client_counters || r.has_server_counters;
  return m;
}

Runner::Runner(LocalFabric& fabric, RunnerOptions opt, SweepReport& report)
    : fabric_(fabric), opt_(std::move(opt)), report_(report), main_(reconnect()) {}

Runner::~Runner() {
  for (auto* s : {&main_, &aggressor_})
    if (*s && !(*s)->broken()) (*s)->close();
}

std::unique_ptr<ClientSession> Runner::connect(bool beside) {
  SessionOptions so = opt_.session;
  so.beside = beside;  // the aggressor: the server serves it beside our own session
  return std::make_unique<ClientSession>(fabric_, control::Channel::connect(opt_.host, opt_.port, so.timeout), so);
}

// How long a busy, gone or silent server is waited for: twice the --timeout a silent
// client is held for (the server frees itself of such a client within one), at least 10 s.
static std::chrono::milliseconds patience(const SessionOptions& so) {
  return std::max<std::chrono::milliseconds>(2 * so.timeout, std::chrono::seconds(10));
}

std::unique_ptr<ClientSession> Runner::reconnect(bool beside) {
  const auto deadline = std::chrono::steady_clock::now() + patience(opt_.session);
  while (true) {
    std::string why;
    try {
      return connect(beside);
    } catch (const control::ChannelError& e) {
      why = e.what();
    }
    if (opt_.session.interrupted && *opt_.session.interrupted) throw control::ChannelError("interrupted");
    if (std::chrono::steady_clock::now() >= deadline)
      throw ServerUnusable("the server at " + opt_.host + ":" + std::to_string(opt_.port) + " stayed unusable for " +
                           std::to_string(patience(opt_.session).count() / 1000) + " s (" + why +
                           "): the hunt stops here, its report keeps what it measured");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void Runner::renew(std::unique_ptr<ClientSession>& session, bool beside) {
  if (session && !session->broken()) return;
  session.reset();  // its socket closes: the server lets the broken point go
  session = reconnect(beside);
}

static std::string entry_name(const TestConfig& cfg, const std::string& role) {
  return point_name(cfg) + (role == "beside" ? "/beside_aggressor" : role == "aggressor" ? "/aggressor" : "");
}

void Runner::record(const TestConfig& cfg, const PointResult* r, const std::string& error, const std::string& phase,
                    const std::string& role) {
  EntryPlace at;
  at.name = at.run_name = entry_name(cfg, role);
  at.family = runs_++;
  json b = entry_head(at);
  b["point"] = point_name(cfg);
  b["config"] = cfg;
  b["hunt"] = {{"run", at.family}, {"phase", phase}, {"role", role}};
  json record;
  if (!r) {
    mark_failed(b, error);
  } else {
    add_run_figures(b, *r);
    add_counters(b, *r);
    record = histogram_record({*r});
  }
  report_.add(std::move(b), record);
  report_.write(false);
}

std::optional<PointResult> Runner::run(std::unique_ptr<ClientSession>& session, const TestConfig& cfg,
                                       const std::string& phase, const std::string& role, std::string* error) {
  // A server that went silent mid-run measured nothing: not a failed point, the run
  // is made again on a new connection (once; renew() gives up on a server that stays so).
  for (int attempt = 0;; ++attempt) {
    renew(session);
    try {
      PointResult r = session->run(cfg);
      record(cfg, &r, "", phase, role);
      return r;
    } catch (const control::Silent& e) {
      if (attempt == 0) continue;
      *error = e.what();
    } catch (const std::exception& e) {
      *error = e.what();
    }
    record(cfg, nullptr, *error, phase, role);
    if (opt_.session.interrupted && *opt_.session.interrupted) throw control::ChannelError("interrupted");
    return std::nullopt;
  }
}

Measurement Runner::measure(const Candidate& c, const std::string& phase) {
  Measurement m;
  std::string error;
  std::optional<PointResult> alone = run(main_, c.point, phase, "point", &error);
  if (!alone) {
    m.error = error;
    m.entry = entry_name(c.point, "point");
    return m;
  }
  m = measurement_of(*alone);
  m.entry = entry_name(c.point, "point");
  if (!c.aggressor) return m;

  // The aggressor floods for longer than the victim's setup and window, on its own
  // connection; the victim runs once the aggressor's traffic flows, and counts only
  // when its window lies inside that traffic (core/point/beside.hpp).
  TestConfig aggr = *c.aggressor;
  aggr.work.duration = 3 * c.point.work.duration + 0.5;
  std::string verr;
  BesideRun b = run_beside(aggressor_, [this] { return reconnect(true); }, aggr,
                           [&] { return run(main_, c.point, phase, "beside", &verr); });
  record(aggr, b.background ? &*b.background : nullptr, b.background_error, phase, "aggressor");
  if (b.overlapped()) {
    m.beside_rate = measurement_of(*b.point).msg_rate;
  } else if (b.point && b.background) {
    ++no_overlap_;
  }
  return m;
}

}  // namespace rdmasweep::hunt
