// `rdmasweep hunt`'s measuring side: runs candidates against `rdmasweep server`
// through the client's own session (core/session.hpp), an aggressor on a second
// connection beside the victim, and records every run as a results entry.
#pragma once

#include <memory>
#include <string>

#include "bench/hunt/oracles.hpp"
#include "core/results/report.hpp"
#include "core/session.hpp"

namespace rdmasweep::hunt {

struct RunnerOptions {
  std::string host;
  uint16_t port = 18515;
  SessionOptions session;
};

class Runner {
 public:
  Runner(LocalFabric& fabric, RunnerOptions opt, SweepReport& report);
  ~Runner();
  const control::Hello& server() const { return main_->server(); }
  // One run of `c` (beside its aggressor: the point alone, then both at once); every
  // run becomes an entry of the report, failed ones too.
  Measurement measure(const Candidate& c, const std::string& phase);
  size_t no_overlap() const { return no_overlap_; }  // aggressor runs that missed the victim's window

 private:
  // A run on `session` (reconnected when a failure broke it); the entry is recorded.
  std::optional<PointResult> run(std::unique_ptr<ClientSession>& session, const TestConfig& cfg,
                                 const std::string& phase, const std::string& role, std::string* error);
  std::unique_ptr<ClientSession> connect(bool beside = false);
  void record(const TestConfig& cfg, const PointResult* r, const std::string& error, const std::string& phase,
              const std::string& role);

  LocalFabric& fabric_;
  RunnerOptions opt_;
  SweepReport& report_;
  std::unique_ptr<ClientSession> main_, aggressor_;
  size_t runs_ = 0, no_overlap_ = 0;
};

// A run's figures as the oracles read them (counters normalized, both sides summed).
Measurement measurement_of(const PointResult& r);

}  // namespace rdmasweep::hunt
