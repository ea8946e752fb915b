// The plan and the flows of `rdmasweep mesh`: a pattern is a list of phases, each a
// set of flows (src rank -> dst rank) that run at the same time, and Runner runs one
// phase of one point on every rank: it builds this rank's ends of the flows on core's
// PointResources (or reuses the previous repetition's), and each end, on a thread of
// its own, runs its half of core's point protocol (connect, measure, DONE, RESULT)
// over MPI (flow_link.hpp); the figures go to rank 0, which adds them to the report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/mesh/options.hpp"
#include "bench/mesh/schedule.hpp"
#include "bench/mesh/world.hpp"
#include "core/config/config.hpp"
#include "core/setup/test_resources.hpp"
#include "core/point/point_protocol.hpp"
#include "core/point/session.hpp"

namespace rdmasweep::mesh_detail {

class MeshReport;
class Postbox;
struct EntryPos;
struct FlowEnd;


struct Runner {
  World w;
  MeshOptions o;
  LocalFabric* fabric = nullptr;
  std::vector<std::string> hosts;
  std::vector<uint32_t> rd_atom;  // each rank's device's reads in flight per QP (0: not said)
  MeshReport* report = nullptr;  // rank 0 only
  const ProgressFile* progress = nullptr;  // --progress-file: a "traffic" line per flow end and phase
  // This rank's ends of the phase just run, connected, for its next repetition.
  std::vector<std::unique_ptr<PointResources>> kept;
  unsigned phases_run = 0;  // alike on every rank: numbers each phase's flow messages
  // --pattern victim: the background's flows' configuration in the phase being run (its
  // duration set for the point); null in a phase without background flows.
  const TestConfig* background = nullptr;

  // Drops the kept QPs: call when the next run is another phase.
  void forget() { kept.clear(); }

  // Runs one phase of one repetition of a point; rank 0 adds its entries at `at`.
  // Returns false when the sweep must stop (interrupted). Throws RanksGone, after
  // rank 0 has added the phase's entries, when a rank stopped answering.
  bool run_phase(const TestConfig& cfg, EntryPos& at, const std::vector<Flow>& flows,
                 std::vector<nlohmann::json>& point_entries);

 private:
  std::string connect_phase(const TestConfig& cfg, std::vector<std::unique_ptr<FlowEnd>>& ends, Postbox& box);
  EndOptions end_options() const;
  bool keep_for_next(std::vector<std::unique_ptr<FlowEnd>>& ends);
  void record_failed_flows(const TestConfig& cfg, EntryPos& at, const std::vector<Flow>& flows, const std::string& err,
                           std::vector<nlohmann::json>& point_entries);
};

}  // namespace rdmasweep::mesh_detail
