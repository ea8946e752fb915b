// rdmasweep: RDMA throughput and latency sweeps. Subcommand dispatch; the signal and
// one-line error policy are bench/entry.*; everything else is in core/.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "bench/commands.hpp"
#include "bench/entry.hpp"
#include "bench/manual.hpp"

using namespace rdmasweep;

int main(int argc, char** argv) {
  install_signal_handlers();
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(usage_text().c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? kUsage : kOk;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "version") {
    std::fputs(version_text().c_str(), stdout);
    return kOk;
  }
  // render is left out of help and the manual (bench/render_cmd.cpp).
  static const std::map<std::string, int (*)(int, char**)> commands = {
      {"client", client_main}, {"server", server_main}, {"devices", devices_main}, {"doctor", doctor_main},
      {"mesh", mesh_main},     {"hunt", hunt_main},     {"help", help_main},       {"render", render_main}};
  auto it = commands.find(cmd);
  if (it == commands.end()) {
    std::fprintf(stderr, "rdmasweep: unknown command '%s'\n%s", cmd.c_str(), usage_text().c_str());
    return kUsage;
  }
  return run_command(cmd, it->second, argc - 1, argv + 1);
}
