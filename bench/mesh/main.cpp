// rdmasweep-mesh: `rdmasweep mesh` with MPI, a program of its own so that no other
// command loads MPI's libraries when it starts (70 ms a process in the rxe lab VM).
// `rdmasweep mesh` answers --help and --plan and checks the options itself, then
// execs this (under mpirun or not) as `rdmasweep-mesh mesh ARGS...`.
#include <cstdio>
#include <cstring>

#include "bench/commands.hpp"
#include "bench/entry.hpp"

using namespace rdmasweep;

int main(int argc, char** argv) {
  install_signal_handlers();
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::fputs(version_text().c_str(), stdout);
    return kOk;
  }
  if (argc < 2 || std::strcmp(argv[1], "mesh") != 0) {
    std::fputs("rdmasweep-mesh: rdmasweep's MPI part: run `rdmasweep mesh ...` (under mpirun)\n", stderr);
    return kUsage;
  }
  return run_command("mesh", mesh_ranks_main, argc - 1, argv + 1);
}
