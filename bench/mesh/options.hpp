// `rdmasweep mesh`'s command line: the traffic pattern and the options every rank
// parses. Kept apart from the MPI code so that it builds (and --help works) without
// MPI. Private to the mesh files (namespace mesh_detail), like everything in bench/mesh/.
#pragma once

#include <optional>
#include <string>

#include "core/config/config.hpp"
#include "core/config/sweep.hpp"

namespace rdmasweep::mesh_detail {

// Victim: rank 1 -> rank 0 alone, then again while every other rank sends the --beside
// background onto rank 0 (an incast onto the victim's host).
enum class Pattern { Pairs, Incast, AllToAll, Multicast, Victim };
// How pairs are ordered: one ordered pair at a time, or disjoint pairs together.
enum class Schedule { Sequential, Matching };

const char* to_string(Pattern p);
const char* to_string(Schedule s);

// An administratively scoped IPv4 group (RFC 2365): never routed off the site.
constexpr const char* kDefaultGroup = "239.255.82.1";

struct MeshOptions {
  FabricConfig fabric;
  int timeout_s = 10;
  Pattern pattern = Pattern::Pairs;
  Schedule schedule = Schedule::Matching;
  bool schedule_given = false;  // else: matching on more than 2 ranks (schedule.hpp)
  int plan = 0;                 // --plan N: print what a run on N ranks would do, then exit
  bool plan_json = false;
  std::string config_file;
  SweepSpec spec;
  std::string out;
  std::string clock = "auto";  // latency timestamps: auto, tsc, system (as the client's --clock)
  double interval = -1;        // --interval, as the client's (-1: 0.1 s in duration points)
  bool cap_to_cq = false;      // --cq-policy cap, against the smallest max_cqe of all ranks
  std::string group = kDefaultGroup;  // --pattern multicast: the group joined
  std::string hosts;                  // --hosts: rdmasweep starts mpirun on these (launch.hpp)
  std::string progress_file;          // --progress-file FILE: each rank's flows' steps, on its own host
  std::string beside;                 // --beside KNOBS: --pattern victim's background
  std::optional<TestConfig> background;  // those knobs as a point (its duration set per point)
  bool help = false;
};

// Parses the command line. With `load_sweep` false the sweep file is not read (only
// rank 0 reads it and sends the points to the others), so it need only exist there.
MeshOptions parse_mesh(int argc, char** argv, std::string* help_text, bool load_sweep);

bool wants_help(int argc, char** argv);

}  // namespace rdmasweep::mesh_detail
