#include "bench/entry.hpp"

#include <csignal>
#include <cstdio>
#include <sstream>

#include <boost/version.hpp>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/config/config.hpp"
#include "core/control/channel.hpp"
#include "core/version.hpp"

#ifndef RDMASWEEP_COMPILER
#define RDMASWEEP_COMPILER "unknown"
#endif
#ifndef RDMASWEEP_IBVERBS_VERSION
#define RDMASWEEP_IBVERBS_VERSION "unknown"
#endif

namespace rdmasweep {

std::atomic<bool> g_interrupted{false};

static void on_signal(int) { g_interrupted.store(true); }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: blocking waits return and see the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  control::Channel::set_interrupt_flag(&g_interrupted);
}

int run_command(const std::string& name, int (*command)(int, char**), int argc, char** argv) {
  const char* cmd = name.c_str();
  try {
    return command(argc, argv);
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "rdmasweep %s: %s (see `rdmasweep %s --help`)\n", cmd, e.what(), cmd);
    return kUsage;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "rdmasweep %s: %s\n", cmd, e.what());
    return kUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdmasweep %s: %s\n", cmd, e.what());
    return g_interrupted ? kInterrupted : kFailed;
  }
}

std::string version_text() {
  std::ostringstream v;
  v << "rdmasweep " << RDMASWEEP_VERSION << "\n"
    << "git revision: " << git_revision() << "\n"
    << "build type: " << RDMASWEEP_BUILD_TYPE << "\n"
    << "compiler: " << RDMASWEEP_COMPILER << "\n"
    << "built against: libibverbs " << RDMASWEEP_IBVERBS_VERSION << ", Boost " << BOOST_VERSION / 100000 << "."
    << BOOST_VERSION / 100 % 1000 << "\n"
#ifdef RDMASWEEP_HAVE_MPI
    << "mesh: with MPI\n";
#else
    << "mesh: without MPI (install libopenmpi-dev and rebuild)\n";
#endif
  return v.str();
}

}  // namespace rdmasweep
