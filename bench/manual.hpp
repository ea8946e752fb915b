// `rdmasweep help`, and the manual page and bash completion the build
// generates from the parsers' own option descriptions (bench/cli.hpp render_help).
#pragma once

#include <string>

namespace rdmasweep {

// The short list of subcommands printed by `rdmasweep`, `--help` and `help`.
std::string usage_text();
// rdmasweep help [COMMAND | --man | --bash-completion | --configs]
int help_main(int argc, char** argv);

}  // namespace rdmasweep
