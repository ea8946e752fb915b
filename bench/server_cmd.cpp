// `rdmasweep server`: follows whatever test the client asks for, test after test,
// client after client (one at a time, a client that asks to run beside it alongside),
// until killed.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <list>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/config/refusals.hpp"
#include "core/point/session.hpp"
#include "core/results/progress_file.hpp"

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
// One client at a time holds the server (`busy`), so no one's measurement shares it
// unasked; a client whose HELLO says `beside` (hunt's aggressor) is served alongside.
static void serve_one(LocalFabric& fabric, control::Channel& ch, const SessionOptions& so, bool cm_only,
                      std::atomic<bool>& busy) {
  bool holds = false;
  auto admit = [&](const control::Hello& h) -> std::string {
    if (cm_only && !h.cm)
      return refusal_text("server-cm");
    if (fabric.dev.is_iwarp() && !h.cm) return "this server's " + fabric.dev.name() + " is iWARP: " + refusal_text("iwarp-cm");
    if (h.beside) return "";
    if (busy.exchange(true))
      return "the server is busy: it serves one client at a time, and another client is running against it "
             "(wait for it to finish)";
    holds = true;
    return "";
  };
  try {
    size_t n = serve_client(fabric, ch, so, log_line, admit);
    if (holds || n > 0) log_line("client " + ch.peer() + " done after " + std::to_string(n) + " test(s)");
  } catch (const std::exception& e) {
    log_line("client " + ch.peer() + " dropped: " + e.what());
    try {
      ch.send(control::MsgType::Error, {{"message", e.what()}});
    } catch (const std::exception&) {
      // The client is gone; nothing to tell it.
    }
  }
  if (holds) busy.store(false);
}

// What the server listens on and where its points' threads run, first thing in its log.
static void log_start(const cli::ServerOptions& o, const LocalFabric& fabric, const Placement& placement, uint16_t port) {
  log_line("listening on " + (o.bind.empty() ? std::string("*") : o.bind) + ":" + std::to_string(port) +
           ", device " + fabric.dev.name() + " port " + std::to_string(fabric.dev.port()) + ", GID index " +
           std::to_string(fabric.gid.index) + " (" + fabric.gid.type + " " + gid_to_string(fabric.gid.gid) + ")" +
           (o.cm ? "; only clients whose QPs connect with RDMA-CM (--cm)" : ""));
  log_line("threads of a point run on cores " + cpu_list_text(placement.cpus) + " (" + placement.source +
           (placement.explicit_cpus ? "" : "; one thread is not pinned") + ")");
  if (!o.join.empty()) log_line("receives multicast group " + o.join + " for `rdmasweep client --multicast " + o.join + "`");
  if (!fabric.counters.available())
    log_line(fabric.dev.name() + " has no port counters (" + fabric.counters.where() + "): results carry none from this side");
}

// Each connection is served on its own thread: a second client is told at once that
// the server is busy, or, when it asked to run beside (rdmasweep hunt's aggressor),
// served alongside with QPs and buffers of its own. Returns when interrupted (--once:
// after one client).
static void serve_forever(control::Listener& listener, LocalFabric& fabric, const SessionOptions& so, const cli::ServerOptions& o) {
  std::atomic<bool> busy{false};
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
      serve_one(fabric, *ch, so, o.cm, busy);
      break;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    auto chan = std::make_shared<control::Channel>(std::move(*ch));
    std::thread t;
    try {
      t = std::thread([&fabric, &so, &busy, cm_only = o.cm, done, chan] {
        serve_one(fabric, *chan, so, cm_only, busy);
        done->store(true);
      });
    } catch (const std::system_error& e) {
      // No thread for this client (the process limit, RLIMIT_NPROC): it is told so, in
      // place of HELLO's answer; the clients being served go on.
      const std::string why = std::string("the server cannot start a thread for this client: ") + e.what() +
                              " (its process limit, `ulimit -u`, is reached): try again later";
      log_line("client " + chan->peer() + " refused: " + why);
      try {
        chan->send(control::MsgType::Error, {{"message", why}});
      } catch (const std::exception&) {
        // gone already
      }
      continue;
    }
    clients.push_back({std::move(t), done});
  }
  reap(true);
}

int server_main(int argc, char** argv) {
  cli::ServerOptions o;
  if (cli::help_printed(cli::parse_server, argc, argv, &o)) return kOk;
  LocalFabric fabric = LocalFabric::open(o.fabric);
  const Placement placement = choose_placement(fabric.dev.name(), o.cpus);
  control::Listener listener(o.bind, o.port);
  SessionOptions so;
  so.placement = &placement;
  so.timeout = std::chrono::seconds(o.timeout_s);
  so.interrupted = &g_interrupted;
  so.join = o.join;
  std::optional<ProgressFile> progress;
  if (!o.progress_file.empty()) so.progress_file = &progress.emplace(o.progress_file);
  if (o.verbose) so.verbose = log_line;
  log_start(o, fabric, placement, listener.port());
  serve_forever(listener, fabric, so, o);
  if (g_interrupted) log_line("interrupted, exiting");
  return g_interrupted ? kInterrupted : kOk;
}

}  // namespace rdmasweep
