#include "tests/support/process.hpp"

#include "core/verbs/device.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace rdmasweep::test {

using Clock = std::chrono::steady_clock;

static std::string temp_path(const char* tag) {
  char tmpl[64];
  std::snprintf(tmpl, sizeof tmpl, "/tmp/rdmasweep-%s-XXXXXX", tag);
  int fd = mkstemp(tmpl);
  close(fd);
  return tmpl;
}

bool have_device() {
  try {
    return !verbs::list_devices().empty();
  } catch (const std::exception&) {
    return false;
  }
}

bool ports_have_counters() {
  bool any = false;
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator("/sys/class/infiniband", ec))
    any |= std::filesystem::exists(d.path() / "ports/1/hw_counters") || std::filesystem::exists(d.path() / "ports/1/counters");
  return any;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Process::Process(const std::vector<std::string>& argv) : out_path_(temp_path("out")), err_path_(temp_path("err")) {
  pid_ = fork();
  if (pid_ == 0) {
    int o = open(out_path_.c_str(), O_WRONLY | O_TRUNC);
    int e = open(err_path_.c_str(), O_WRONLY | O_TRUNC);
    dup2(o, 1);
    dup2(e, 2);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

Process::~Process() {
  if (running()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

bool Process::running() {
  if (status_ != -1) return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

int Process::wait(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  return 128 + WTERMSIG(status_);
}

void Process::signal(int sig) {
  if (running()) kill(pid_, sig);
}

bool Process::stop(std::chrono::milliseconds timeout) {
  if (!running()) return false;
  kill(pid_, SIGSTOP);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    int st = 0;
    const pid_t got = waitpid(pid_, &st, WNOHANG | WUNTRACED);
    if (got == pid_ && WIFSTOPPED(st)) return true;
    if (got == pid_) {  // it ended
      status_ = st;
      return false;
    }
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string Process::out() const { return read_file(out_path_); }
std::string Process::err() const { return read_file(err_path_); }

std::string Process::wait_for_stderr(const std::string& needle, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    std::istringstream lines(err());
    for (std::string line; std::getline(lines, line);)
      if (line.find(needle) != std::string::npos) return line;
    if (!running()) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

std::string Process::wait_for_progress(const std::string& path, const std::string& pattern,
                                       std::chrono::milliseconds timeout) {
  const std::regex want(pattern);
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    std::istringstream lines(read_file(path));
    for (std::string line; std::getline(lines, line);)
      if (std::regex_search(line, want)) return line;
    if (!running()) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

bool send_raw_and_wait_close(const std::string& port, const std::string& bytes, std::chrono::milliseconds wait) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return false;
  }
  if (!bytes.empty()) (void)!write(fd, bytes.data(), bytes.size());
  pollfd p{fd, POLLIN, 0};
  auto deadline = Clock::now() + wait;
  bool closed = false;
  while (!closed && Clock::now() < deadline) {
    if (poll(&p, 1, 100) == 1) {
      char buf[4096];
      ssize_t n = read(fd, buf, sizeof buf);  // an ERROR frame may come first
      closed = n <= 0;
    }
  }
  close(fd);
  return closed;
}

Outcome run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  Process p(argv);
  int code = p.wait(timeout);
  return Outcome{code, p.out(), p.err()};
}

FakeServer::FakeServer(std::string reply) : reply_(std::move(reply)) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd_, 4) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("FakeServer: cannot listen on 127.0.0.1");
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { serve(); });
}

FakeServer::~FakeServer() {
  stop_ = true;
  thread_.join();
  close(fd_);
}

// Polls in short steps so the destructor never waits long for a silent peer.
static bool wait_readable(int fd, const std::atomic<bool>& stop, Clock::time_point deadline) {
  pollfd p{fd, POLLIN, 0};
  while (!stop && Clock::now() < deadline)
    if (poll(&p, 1, 50) == 1) return true;
  return false;
}

void FakeServer::serve() {
  while (!stop_) {
    if (!wait_readable(fd_, stop_, Clock::now() + std::chrono::hours(1))) continue;
    int c = accept(fd_, nullptr, nullptr);
    if (c < 0) continue;
    auto deadline = Clock::now() + std::chrono::seconds(30);
    char buf[4096];
    if (wait_readable(c, stop_, deadline) && read(c, buf, sizeof buf) > 0) {
      (void)!write(c, reply_.data(), reply_.size());
      while (wait_readable(c, stop_, deadline) && read(c, buf, sizeof buf) > 0) {
      }
    }
    close(c);
  }
}

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

std::string make_temp_dir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  return mkdtemp(tmpl.data());
}

std::string start_server(std::unique_ptr<Process>* server, const std::string& bin, std::chrono::milliseconds wait,
                         const std::vector<std::string>& extra) {
  std::vector<std::string> argv{bin, "server", "--port", "0", "--bind", "127.0.0.1"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  *server = std::make_unique<Process>(argv);
  std::string line = (*server)->wait_for_stderr("listening on", wait);
  std::smatch m;
  return std::regex_search(line, m, std::regex(":([0-9]+),")) ? std::string(m[1]) : std::string();
}

}  // namespace rdmasweep::test
