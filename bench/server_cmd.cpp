// `rdmasweep server`: follows whatever test the client asks for, test after test,
// for every client that connects (several at once), until killed.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <list>
#include <memory>
#include <thread>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/session.hpp"

namespace rdmasweep {

static void log_line(const std::string& s) {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);  // clients are served on threads of their own
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
  std::fprintf(stderr, "[%s] rdmasweep server: %s\n", stamp, s.c_str());
  std::fflush(stderr);
}

// Serves one client to its end; a failure is logged and, when it can be, told to it.
static void serve_one(LocalFabric& fabric, control::Channel& ch, const SessionOptions& so) {
  try {
    size_t n = serve_client(fabric, ch, so, log_line);
    log_line("client " + ch.peer() + " done after " + std::to_string(n) + " test(s)");
  } catch (const std::exception& e) {
    log_line("client " + ch.peer() + " dropped: " + e.what());
    try {
      ch.send(control::MsgType::Error, {{"message", e.what()}});
    } catch (const std::exception&) {
      // The client is gone; nothing to tell it.
    }
  }
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
  // Each client is served on its own thread, so several run at once (`rdmasweep hunt`
  // measures a victim beside an aggressor); each has its own QPs and buffers.
  struct Served {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Served> clients;
  auto reap = [&clients](bool all) {
    for (auto it = clients.begin(); it != clients.end();) {
      if (!all && !it->done->load()) {
        ++it;
        continue;
      }
      it->thread.join();
      it = clients.erase(it);
    }
  };
  while (!g_interrupted) {
    std::optional<control::Channel> ch = listener.accept(std::chrono::milliseconds(500));
    reap(false);
    if (!ch) continue;
    if (o.once) {
      serve_one(fabric, *ch, so);
      break;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    clients.push_back({std::thread([&fabric, &so, done, c = std::move(*ch)]() mutable {
                         serve_one(fabric, c, so);
                         done->store(true);
                       }),
                       done});
  }
  reap(true);
  if (g_interrupted) log_line("interrupted, exiting");
  return g_interrupted ? kInterrupted : kOk;
}

}  // namespace rdmasweep
