// What every rdmasweep program does around a command: SIGINT/SIGTERM set
// g_interrupted (without SA_RESTART, so blocking waits return and see it), SIGPIPE is
// ignored, and an error ends the command in one line with its exit code.
#pragma once

#include <string>

namespace rdmasweep {

void install_signal_handlers();
// `--version`: the version, revision, build and whether mesh has MPI.
std::string version_text();
// Runs `command` (argv[0] is its name) under the one-line error policy: "<program>
// <name>: what went wrong", exit 2 for a usage or configuration error, 130 when
// interrupted, else 1.
int run_command(const std::string& name, int (*command)(int, char**), int argc, char** argv);

}  // namespace rdmasweep
