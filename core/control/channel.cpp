#include "core/control/channel.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <memory>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace rdmasweep::control {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

static const std::atomic<bool>* g_interrupt = nullptr;
void Channel::set_interrupt_flag(const std::atomic<bool>* flag) { g_interrupt = flag; }
static void throw_if_interrupted() {
  if (g_interrupt && g_interrupt->load()) throw ChannelError("interrupted");
}

static void tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Keepalive notices a peer host that vanished without closing the connection. The
  // heartbeat (start_heartbeat, bound_silence) decides first; keepalive is the backstop
  // and no stricter (30 s), so a guest stalled for seconds under emulation is not cut off.
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  int idle = 10, intvl = 5, cnt = 4;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

struct Channel::Link {
  int fd = -1;
  std::string peer;
  std::mutex send_mu;  // whole frames: the heartbeat's TICKs never split a message
  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  std::thread beat;

  void send(const std::string& frame);
  void stop_beat() {
    if (!beat.joinable()) return;
    {
      std::lock_guard<std::mutex> g(mu);
      stop = true;
    }
    wake.notify_all();
    beat.join();
  }
};

std::string Channel::peer_address() const {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (sa.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&sa)->sin_addr, text, sizeof text);
  else if (sa.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&sa)->sin6_addr, text, sizeof text);
  std::string s = text;
  return s.rfind("::ffff:", 0) == 0 && s.find('.') != std::string::npos ? s.substr(7) : s;
}

Channel::Channel(int fd, std::string peer)
    : link_(std::make_unique<Link>()), fd_(fd), peer_(std::move(peer)), heard_(Clock::now()) {
  link_->fd = fd_;
  link_->peer = peer_;
  tune(fd_);
}
Channel::Channel(Channel&& o) noexcept
    : link_(std::move(o.link_)), fd_(std::exchange(o.fd_, -1)), peer_(std::move(o.peer_)), in_(std::move(o.in_)),
      heard_(o.heard_), silence_(o.silence_) {}
Channel& Channel::operator=(Channel&& o) noexcept {
  if (this != &o) {
    if (link_) link_->stop_beat();
    if (fd_ >= 0) ::close(fd_);
    link_ = std::move(o.link_);
    fd_ = std::exchange(o.fd_, -1);
    peer_ = std::move(o.peer_);
    in_ = std::move(o.in_);
    heard_ = o.heard_;
    silence_ = o.silence_;
  }
  return *this;
}
Channel::~Channel() {
  if (link_) link_->stop_beat();
  if (fd_ >= 0) ::close(fd_);
}

Channel Channel::connect(const std::string& host, uint16_t port, milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string where = host + ":" + std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0)
    throw ChannelError("cannot resolve server '" + host + "': " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
  auto deadline = Clock::now() + timeout;
  std::string last = "timed out";
  auto backoff = milliseconds(20);
  while (true) {
    for (addrinfo* a = res; a; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
      if (fd < 0) continue;
      int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS) {
        auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(std::max<long>(left, 1))) == 1) {
          int err = 0;
          socklen_t len = sizeof err;
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          rc = err == 0 ? 0 : -1;
          errno = err;
        } else {
          errno = ETIMEDOUT;
        }
      }
      if (rc == 0) {
        // Back to blocking mode: every read and write goes through poll with a deadline.
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        return Channel(fd, where);
      }
      last = std::strerror(errno);
      ::close(fd);
    }
    throw_if_interrupted();
    if (Clock::now() + backoff >= deadline) break;
    std::this_thread::sleep_for(backoff);  // retry: the server may still be starting
    backoff = std::min(backoff * 2, milliseconds(500));
  }
  throw ChannelError("cannot reach rdmasweep server at " + where + ": " + last +
                     " (is `rdmasweep server` running there, and is the port open in its firewall?)");
}

void Channel::Link::send(const std::string& frame) {
  std::lock_guard<std::mutex> g(send_mu);
  size_t off = 0;
  while (off < frame.size()) {
    ssize_t n = ::send(fd, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, 10000) != 1) throw ChannelError("control channel to " + peer + ": send timed out");
        continue;
      }
      throw ChannelError("control channel to " + peer + " lost: " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
}

void Channel::send(MsgType type, const nlohmann::json& body) {
  if (!link_) throw ChannelError("control channel: not connected");
  try {
    link_->send(encode_frame(type, body));
  } catch (const ChannelError&) {
    // A peer that stops sends its reason and closes with our TICKs unread, so its
    // kernel resets the connection and this send fails; the reason is still readable.
    if (auto why = last_words()) throw ChannelError("peer " + peer_ + " reported: " + *why);
    throw;
  }
}

std::optional<std::string> Channel::last_words() {
  try {
    while (fill(0)) {
    }
  } catch (const ChannelError&) {
    // the reset itself, after whatever came before it
  }
  try {
    while (auto m = take())
      if (m->type == MsgType::Error) return error_from_json(m->body);
  } catch (const std::exception&) {
    // a garbled frame: no reason to give
  }
  return std::nullopt;
}

void Channel::start_heartbeat() {
  Link* l = link_.get();
  if (l == nullptr || l->beat.joinable()) return;
  l->beat = std::thread([l] {
    const std::string tick = encode_frame(MsgType::Tick, nlohmann::json::object());
    std::unique_lock<std::mutex> lk(l->mu);
    while (!l->wake.wait_for(lk, kTickEvery, [l] { return l->stop; })) {
      lk.unlock();
      try {
        l->send(tick);
      } catch (const std::exception&) {
        return;  // the peer is gone: the channel's own reads and writes say so
      }
      lk.lock();
    }
  });
}

void Channel::bound_silence(milliseconds limit) {
  silence_ = limit;
  heard_ = Clock::now();
}

void Channel::check_silence() {
  if (silence_.count() <= 0 || Clock::now() - heard_ <= silence_) return;
  if (fill(0)) return;  // this side was away (a long setup, say): the TICKs waited in the socket
  throw Silent("peer " + peer_ + " has sent nothing, not even its heartbeat, for " +
               seconds_text(silence_) + " s: it is stopped, hung or its host is gone");
}

bool Channel::fill(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  int rc = ::poll(&p, 1, timeout_ms);
  if (rc < 0 && errno == EINTR) return false;
  if (rc < 0) throw ChannelError(std::string("poll on control channel: ") + std::strerror(errno));
  if (rc == 0) return false;
  char buf[65536];
  ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
  if (n == 0) throw ChannelError("peer " + peer_ + " closed the control connection");
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return false;
    throw ChannelError("control channel to " + peer_ + " lost: " + std::strerror(errno));
  }
  in_.append(buf, static_cast<size_t>(n));
  heard_ = Clock::now();
  return true;
}

std::optional<Message> Channel::take() {
  while (in_.size() >= kHeaderBytes) {
    Header h = decode_header(reinterpret_cast<const uint8_t*>(in_.data()));
    if (in_.size() < kHeaderBytes + h.length) return std::nullopt;
    std::string payload = in_.substr(kHeaderBytes, h.length);
    in_.erase(0, kHeaderBytes + h.length);
    if (h.type != MsgType::Tick) return Message{h.type, decode_payload(payload)};
  }
  return std::nullopt;
}

Message Channel::recv(milliseconds timeout, bool spin) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto m = take()) return std::move(*m);
    throw_if_interrupted();
    check_silence();
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      throw Timeout("peer " + peer_ + (silence_.count() > 0 ? " sent no message (only its heartbeat) for " : " sent nothing for ") +
                    seconds_text(timeout) + " s: is it still running? (raise --timeout for very long tests)");
    fill(spin ? 0 : static_cast<int>(std::min<long>(left, 1000)));
  }
}

std::string seconds_text(std::chrono::milliseconds t) {
  char b[32];
  std::snprintf(b, sizeof b, t.count() % 1000 != 0 && t.count() < 10000 ? "%.1f" : "%.0f", static_cast<double>(t.count()) / 1000.0);
  return b;
}

nlohmann::json Channel::expect(MsgType expected, milliseconds timeout) {
  Message m = recv(timeout);
  if (m.type == MsgType::Error) throw ChannelError("peer " + peer_ + " reported: " + error_from_json(m.body));
  if (m.type != expected)
    throw ProtocolError(std::string("expected ") + to_string(expected) + " from " + peer_ + ", got " + to_string(m.type));
  return std::move(m.body);
}

std::optional<Message> Channel::try_recv() {
  if (auto m = take()) return m;
  fill(0);
  if (auto m = take()) return m;
  check_silence();
  return std::nullopt;
}

Listener::Listener(const std::string& bind_addr, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const char* node = bind_addr.empty() ? nullptr : bind_addr.c_str();
  if (int rc = getaddrinfo(node, std::to_string(port).c_str(), &hints, &res); rc != 0)
    throw ChannelError("cannot resolve bind address '" + bind_addr + "': " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
  // Prefer IPv6 any-address (accepts IPv4 too) when no address is given.
  addrinfo* pick = res;
  for (addrinfo* a = res; a && !node; a = a->ai_next)
    if (a->ai_family == AF_INET6) pick = a;
  fd_ = ::socket(pick->ai_family, pick->ai_socktype | SOCK_CLOEXEC, pick->ai_protocol);
  if (fd_ < 0) throw ChannelError(std::string("socket: ") + std::strerror(errno));
  int one = 1, zero = 0;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (pick->ai_family == AF_INET6) setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(fd_, pick->ai_addr, pick->ai_addrlen) != 0 || ::listen(fd_, 4) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd_);
    throw ChannelError("cannot listen on " + (bind_addr.empty() ? std::string("*") : bind_addr) + ":" +
                       std::to_string(port) + ": " + err + " (another server running? pick another --port)");
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<Channel> Listener::accept(milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  int rc = ::poll(&p, 1, timeout.count() < 0 ? -1 : static_cast<int>(timeout.count()));
  if (rc <= 0) return std::nullopt;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
  getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
  return Channel(fd, std::string(host) + ":" + serv);
}

}  // namespace rdmasweep::control
