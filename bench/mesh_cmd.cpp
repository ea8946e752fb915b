// `rdmasweep mesh`: many nodes at a time, started by MPI. MPI only starts the
// processes, swaps connection data (each rank's serialized Endpoint JSON,
// host names) and synchronizes them; every measured byte moves over our own verbs
// QPs through core's engine (TestResources and the hot loops), exactly as in
// `rdmasweep client`. Rank 0 writes one Google Benchmark JSON file.
//
// Patterns, each run at every sweep point:
//   pairs       every ordered pair (i -> j) in turn, the other ranks waiting
//   incast      ranks 1..N-1 all send to rank 0 at once
//   all-to-all  every rank sends to every other at once
//
// This file is what rdmasweep itself does: --help, --plan and the options' checks,
// none of which needs MPI, then it execs the rdmasweep-mesh program, which links MPI
// (bench/mesh/main.cpp; each rank runs bench/mesh/ranks.cpp), so that no other
// command pays for loading MPI's libraries. The parts live in bench/mesh/ (namespace
// mesh_detail, private to mesh): options.* (the command line), launch.* (--hosts:
// mpirun started here once every host answers ssh), schedule.* (which flows run
// together, MPI-free), plan.* (--plan: a run's size without MPI or a
// device), world.* (the MPI collectives), phase.* (the flows of one phase),
// report.* (rank 0's entries, table and files).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "bench/mesh/launch.hpp"
#include "bench/mesh/options.hpp"
#include "bench/mesh/plan.hpp"
#include "core/config/config.hpp"

namespace rdmasweep {

// --plan N: no MPI, no device, only the options.
static bool wants_plan(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--plan" || std::string(argv[i]).rfind("--plan=", 0) == 0) return true;
  return false;
}

static int print_plan(int argc, char** argv) {
  try {
    std::string help;
    mesh_detail::MeshOptions o = mesh_detail::parse_mesh(argc, argv, &help, true);
    nlohmann::json plan = mesh_detail::mesh_plan(o, o.plan);
    if (o.plan_json) std::cout << plan.dump(2) << "\n";
    else std::cout << mesh_detail::plan_text(plan);
    return kOk;
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "rdmasweep mesh: %s (see `rdmasweep mesh --help`)\n", e.what());
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "rdmasweep mesh: %s\n", e.what());
  }
  return kUsage;
}

#ifdef RDMASWEEP_HAVE_MPI
static std::string self_exe() {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, static_cast<size_t>(n)) : "";
}

// The program that runs the ranks: beside this one (a build tree, or bin/ of an
// install), else in <prefix>/libexec/rdmasweep (the package); "" when there is none.
static std::string mesh_program() {
  std::string dir = self_exe();
  if (dir.empty()) return "";
  dir.erase(dir.rfind('/'));
  for (const char* rel : {"/rdmasweep-mesh", "/../libexec/rdmasweep/rdmasweep-mesh"})
    if (::access((dir + rel).c_str(), X_OK) == 0) return dir + rel;
  return "";
}

// --hosts: every host answers ssh, or one line each and nothing starts; then mpirun
// starts `rdmasweep mesh` (without --hosts) on them.
static int launch_on_hosts(const std::string& list, int argc, char** argv) {
  if (mesh_detail::under_mpi_launcher())
    throw cli::UsageError("--hosts starts mpirun itself: drop it when mpirun or srun starts rdmasweep mesh");
  const std::vector<mesh_detail::HostSlots> hosts = mesh_detail::parse_hosts(list);
  const std::vector<std::string> unreachable = mesh_detail::unreachable_hosts(hosts, 5, 60);
  for (const std::string& line : unreachable) std::fprintf(stderr, "rdmasweep mesh: %s\n", line.c_str());
  if (!unreachable.empty()) return kFailed;
  std::vector<std::string> cmd = mesh_detail::mpirun_argv(hosts, self_exe(), mesh_detail::without_hosts(argc, argv));
  std::vector<char*> args;
  for (std::string& a : cmd) args.push_back(a.data());
  args.push_back(nullptr);
  std::fflush(nullptr);
  ::execvp("mpirun", args.data());
  throw std::runtime_error(std::string("--hosts: cannot run mpirun: ") + std::strerror(errno) +
                           " (apt-get install openmpi-bin, or start the ranks with your own launcher)");
}
#endif

int mesh_main(int argc, char** argv) {
  if (!mesh_detail::wants_help(argc, argv) && wants_plan(argc, argv)) return print_plan(argc, argv);
  std::string help;
  if (mesh_detail::wants_help(argc, argv)) {
    mesh_detail::parse_mesh(argc, argv, &help, false);
    std::cout << help;
#ifndef RDMASWEEP_HAVE_MPI
    std::cout << "(this rdmasweep was built without MPI: install libopenmpi-dev and rebuild)\n";
#endif
    return kOk;
  }
#ifndef RDMASWEEP_HAVE_MPI
  std::fprintf(stderr, "rdmasweep mesh: this rdmasweep was built without MPI (install libopenmpi-dev and rebuild)\n");
  return kUsage;
#else
  const mesh_detail::MeshOptions o = mesh_detail::parse_mesh(argc, argv, &help, true);  // a bad option: one line
  if (!o.hosts.empty()) return launch_on_hosts(o.hosts, argc, argv);
  const std::string program = mesh_program();
  if (program.empty())
    throw std::runtime_error("rdmasweep-mesh (rdmasweep's MPI part) is neither beside rdmasweep nor in "
                             "../libexec/rdmasweep: reinstall rdmasweep");
  std::vector<char*> args{const_cast<char*>(program.c_str()), const_cast<char*>("mesh")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(program.c_str(), args.data());
  throw std::runtime_error("cannot run " + program + ": " + std::strerror(errno));
#endif
}

}  // namespace rdmasweep
