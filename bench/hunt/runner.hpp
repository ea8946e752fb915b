// `rdmasweep hunt`'s measuring side: runs candidates against `rdmasweep server`
// through the client's own session (core/point/session.hpp), an aggressor on a second
// connection beside the victim, and records every run as a results entry.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "bench/hunt/oracles.hpp"
#include "core/point/session.hpp"
#include "core/results/report.hpp"

namespace rdmasweep::hunt {

// The server cannot be used (busy with another client, gone, or silent) and did not
// come back within Runner::kServerPatience: the hunt stops, its report kept.
class ServerUnusable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
  // connect(), tried again for a while when the server is busy, gone or silent;
  // throws ServerUnusable when it stays so.
  std::unique_ptr<ClientSession> reconnect(bool beside = false);
  // A broken session is closed first: left open, it would hold the server.
  void renew(std::unique_ptr<ClientSession>& session, bool beside = false);
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
