// rdmasweep: RDMA throughput and latency sweeps. Subcommand dispatch, signal
// handling and the one-line error policy live here; everything else is in core/.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/config.hpp"
#include "core/control/channel.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {
std::atomic<bool> g_interrupted{false};
}

using namespace rdmasweep;

static void on_signal(int) { g_interrupted.store(true); }

static const char* kUsageText =
    "usage: rdmasweep <command> [options]\n"
    "  server   serve tests for clients (run on one host)\n"
    "  client   run a test or a sweep against a server (run on the other host)\n"
    "  devices  list RDMA devices, ports and GIDs\n"
    "  doctor   check what would break a run, and how to fix it\n"
    "  mesh     many nodes at once, started by mpirun (pairs, incast, all-to-all)\n"
    "Run `rdmasweep <command> --help` for its options.\n";

int main(int argc, char** argv) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: blocking waits return and see the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  control::Channel::set_interrupt_flag(&g_interrupted);

  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kUsageText, argc < 2 ? stderr : stdout);
    return argc < 2 ? kUsage : kOk;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "client") return client_main(argc - 1, argv + 1);
    if (cmd == "server") return server_main(argc - 1, argv + 1);
    if (cmd == "devices") return devices_main(argc - 1, argv + 1);
    if (cmd == "doctor") return doctor_main(argc - 1, argv + 1);
    if (cmd == "mesh") return mesh_main(argc - 1, argv + 1);
    if (cmd == "--version" || cmd == "version") {
      std::printf("rdmasweep %s (%s)\n", RDMASWEEP_VERSION, RDMASWEEP_GIT_REV);
      return kOk;
    }
    std::fprintf(stderr, "rdmasweep: unknown command '%s'\n%s", cmd.c_str(), kUsageText);
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
