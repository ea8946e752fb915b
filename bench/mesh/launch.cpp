#include "bench/mesh/launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>

#include "bench/cli.hpp"

namespace rdmasweep::mesh_detail {

std::vector<HostSlots> parse_hosts(const std::string& list) {
  std::vector<HostSlots> hosts;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    HostSlots h;
    size_t colon = item.find(':');
    h.host = item.substr(0, colon);
    if (h.host.empty() || h.host.find_first_of(" \t/") != std::string::npos || h.host[0] == '-')
      throw cli::UsageError("--hosts: '" + item + "' is not a host name (a list like a,b:2,c)");
    if (colon != std::string::npos) {
      const std::string n = item.substr(colon + 1);
      char* end = nullptr;
      long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || v < 1 || v > 4096)
        throw cli::UsageError("--hosts: '" + item + "': the ranks after ':' must be 1..4096");
      h.ranks = static_cast<int>(v);
    }
    if (!seen.insert(h.host).second) throw cli::UsageError("--hosts: " + h.host + " is named twice (give it HOST:RANKS)");
    hosts.push_back(h);
  }
  int total = 0;
  for (const HostSlots& h : hosts) total += h.ranks;
  if (total < 2) throw cli::UsageError("--hosts: a mesh needs two ranks or more (give two hosts, or HOST:2)");
  return hosts;
}

std::vector<std::string> without_hosts(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--hosts") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("--hosts=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

std::vector<std::string> mpirun_argv(const std::vector<HostSlots>& hosts, const std::string& self,
                                     const std::vector<std::string>& mesh_args) {
  std::string list;
  int np = 0;
  for (const HostSlots& h : hosts) {
    list += (list.empty() ? "" : ",") + h.host + ":" + std::to_string(h.ranks);
    np += h.ranks;
  }
  std::vector<std::string> argv{"mpirun", "--host", list, "-np", std::to_string(np), "--map-by", "node", self, "mesh"};
  argv.insert(argv.end(), mesh_args.begin(), mesh_args.end());
  return argv;
}

namespace {

struct Probe {
  std::string host;
  pid_t pid = -1;
  int err_fd = -1;  // ssh's stderr
  int status = -1;
};

// ssh -n -o BatchMode=yes -o ConnectTimeout=T HOST true, its stderr into a pipe.
void start_probe(Probe& p, int timeout_s) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const std::string connect = "ConnectTimeout=" + std::to_string(timeout_s);
  p.pid = ::fork();
  if (p.pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (p.pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(fds[1], 2);
    ::execlp("ssh", "ssh", "-n", "-o", "BatchMode=yes", "-o", connect.c_str(), p.host.c_str(), "true",
             static_cast<char*>(nullptr));
    const char msg[] = "ssh: not found (apt-get install openssh-client)\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(fds[1]);
  p.err_fd = fds[0];
}

// The last non-empty line ssh wrote (its reason), or what its status says.
std::string reason(const Probe& p, bool timed_out) {
  std::string all;
  char buf[512];
  ::fcntl(p.err_fd, F_SETFL, O_NONBLOCK);
  for (ssize_t n; (n = ::read(p.err_fd, buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
  std::string last = all.substr(all.find_last_of('\n') == std::string::npos ? 0 : all.find_last_of('\n') + 1);
  if (timed_out) return "no answer" + (last.empty() ? std::string() : " (" + last + ")");
  if (!last.empty()) return last;
  if (WIFEXITED(p.status)) return "ssh exited " + std::to_string(WEXITSTATUS(p.status));
  return "ssh ended by signal " + std::to_string(WTERMSIG(p.status));
}

}  // namespace

std::vector<std::string> unreachable_hosts(const std::vector<HostSlots>& hosts, int connect_s, int answer_s) {
  std::vector<Probe> probes(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    probes[i].host = hosts[i].host;
    start_probe(probes[i], connect_s);
  }
  // ConnectTimeout bounds the connection, not a host that accepts and then stalls.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::max(answer_s, connect_s));
  size_t running = probes.size();
  while (running > 0 && std::chrono::steady_clock::now() < deadline) {
    for (Probe& p : probes)
      if (p.status < 0 && ::waitpid(p.pid, &p.status, WNOHANG) == p.pid) --running;
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::string> lines;
  for (Probe& p : probes) {
    const bool timed_out = p.status < 0;
    if (timed_out) {
      ::kill(p.pid, SIGKILL);
      ::waitpid(p.pid, &p.status, 0);
    }
    if (timed_out || !WIFEXITED(p.status) || WEXITSTATUS(p.status) != 0)
      lines.push_back("cannot reach " + p.host + " over ssh: " + reason(p, timed_out) +
                      " (mpirun starts the ranks over ssh: check the name, that the host is up and that `ssh " +
                      p.host + " true` logs in without a password)");
    ::close(p.err_fd);
  }
  return lines;
}

bool under_mpi_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace rdmasweep::mesh_detail
