// rdmasweep: RDMA throughput and latency sweeps. Subcommand dispatch, signal
// handling and the one-line error policy live here; everything else is in core/.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "bench/manual.hpp"
#include "core/config.hpp"
#include "core/control/channel.hpp"

namespace rdmasweep {
std::atomic<bool> g_interrupted{false};
}

using namespace rdmasweep;

static void on_signal(int) { g_interrupted.store(true); }

int main(int argc, char** argv) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: blocking waits return and see the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  control::Channel::set_interrupt_flag(&g_interrupted);

  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(usage_text().c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? kUsage : kOk;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "client") return client_main(argc - 1, argv + 1);
    if (cmd == "server") return server_main(argc - 1, argv + 1);
    if (cmd == "devices") return devices_main(argc - 1, argv + 1);
    if (cmd == "doctor") return doctor_main(argc - 1, argv + 1);
    if (cmd == "mesh") return mesh_main(argc - 1, argv + 1);
    if (cmd == "hunt") return hunt_main(argc - 1, argv + 1);
    if (cmd == "help") return help_main(argc - 1, argv + 1);
    if (cmd == "--version" || cmd == "version") {
      std::fputs(version_text().c_str(), stdout);
      return kOk;
    }
    std::fprintf(stderr, "rdmasweep: unknown command '%s'\n%s", cmd.c_str(), usage_text().c_str());
    return kUsage;
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "rdmasweep %s: %s (see `rdmasweep %s --help`)\n", cmd.c_str(), e.what(), cmd.c_str());
    return kUsage;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "rdmasweep %s: %s\n", cmd.c_str(), e.what());
    return kUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdmasweep %s: %s\n", cmd.c_str(), e.what());
    return g_interrupted ? kInterrupted : kFailed;
  }
}
