// `rdmasweep server`: follows whatever test the client asks for, test after test,
// client after client (one at a time), until killed.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/session.hpp"

namespace rdmasweep {

static void log_line(const std::string& s) {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&t));
  std::fprintf(stderr, "[%s] rdmasweep server: %s\n", stamp, s.c_str());
  std::fflush(stderr);
}

int server_main(int argc, char** argv) {
  std::string help;
  cli::ServerOptions o = cli::parse_server(argc, argv, &help);
  if (o.help) {
    std::cout << help;
    return kOk;
  }
  LocalFabric fabric = LocalFabric::open(o.fabric);
  const Placement placement = choose_placement(fabric.dev.name(), o.cpus);
  control::Listener listener(o.bind, o.port);
  SessionOptions so;
  so.placement = &placement;
  so.timeout = std::chrono::seconds(o.timeout_s);
  so.interrupted = &g_interrupted;
  if (o.verbose) so.verbose = log_line;
  log_line("listening on " + (o.bind.empty() ? std::string("*") : o.bind) + ":" + std::to_string(listener.port()) +
           ", device " + fabric.dev.name() + " port " + std::to_string(fabric.dev.port()) + ", GID index " +
           std::to_string(fabric.gid.index) + " (" + fabric.gid.type + " " + gid_to_string(fabric.gid.gid) + ")");
  log_line("threads of a point run on cores " + cpu_list_text(placement.cpus) + " (" + placement.source +
           (placement.explicit_cpus ? "" : "; one thread is not pinned") + ")");
  if (!fabric.counters.available())
    log_line(fabric.dev.name() + " has no port counters (" + fabric.counters.where() + "): results carry none from this side");
  while (!g_interrupted) {
    std::optional<control::Channel> ch = listener.accept(std::chrono::milliseconds(500));
    if (!ch) continue;
    try {
      size_t n = serve_client(fabric, *ch, so, log_line);
      log_line("client " + ch->peer() + " done after " + std::to_string(n) + " test(s)");
    } catch (const std::exception& e) {
      log_line("client " + ch->peer() + " dropped: " + e.what());
      try {
        ch->send(control::MsgType::Error, {{"message", e.what()}});
      } catch (const std::exception&) {
        // The client is gone; nothing to tell it.
      }
    }
    if (o.once) break;
  }
  if (g_interrupted) log_line("interrupted, exiting");
  return g_interrupted ? kInterrupted : kOk;
}

}  // namespace rdmasweep
