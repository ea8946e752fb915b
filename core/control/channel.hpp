// The TCP control channel: framed messages with deadlines. Nothing here blocks
// without a timeout, so a dead or silent peer always ends in an error, never a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/control/protocol.hpp"

namespace rdmasweep::control {

// "10", or "0.3" for a wait under a second: how the control messages say a duration in seconds.
std::string seconds_text(std::chrono::milliseconds t);

class ChannelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The peer sent nothing within the deadline.
class Timeout : public ChannelError {
 public:
  using ChannelError::ChannelError;
};
// The peer sent nothing at all, not even a TICK, for longer than bound_silence()
// allows: it is stopped, hung, or its host is gone.
class Silent : public ChannelError {
 public:
  using ChannelError::ChannelError;
};

struct Message {
  MsgType type;
  nlohmann::json body;
};

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd, std::string peer);
  Channel(Channel&& o) noexcept;
  Channel& operator=(Channel&& o) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  // Connects to host:port, retrying refused connections until `timeout` (the
  // server may still be starting). Throws ChannelError with one clear line.
  static Channel connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

  void send(MsgType type, const nlohmann::json& body = nlohmann::json::object());
  // Waits up to `timeout` for one whole message. Throws on timeout, EOF or a bad frame.
  // `spin`: polls the socket without sleeping, so this thread's CPU never idles.
  Message recv(std::chrono::milliseconds timeout, bool spin = false);
  // Receives a message of `expected` type; an ERROR message from the peer becomes ChannelError.
  nlohmann::json expect(MsgType expected, std::chrono::milliseconds timeout);
  // Returns a message only if one has fully arrived; never blocks. Used from the
  // receiver's loop while it is idle.
  std::optional<Message> try_recv();

  // From now on a thread of the channel's own sends TICK every kTickEvery until the
  // channel closes; the peer's TICKs are never returned by recv/try_recv.
  void start_heartbeat();
  // From now on recv, expect and try_recv throw Silent once the peer has sent nothing,
  // not even a TICK, for `limit` (whatever their own timeout); 0: no bound.
  void bound_silence(std::chrono::milliseconds limit);

  const std::string& peer() const { return peer_; }
  // The peer's numeric address ("192.0.2.1", "fe80::1"; an IPv4-mapped one as IPv4),
  // or "" when the socket has none.
  std::string peer_address() const;
  // Blocking waits end with ChannelError("interrupted") once *flag is set (SIGINT/SIGTERM).
  static void set_interrupt_flag(const std::atomic<bool>* flag);

 private:
  bool fill(int timeout_ms);  // reads what is available; false on timeout
  // The reason in an ERROR the peer sent before the connection broke, if one is here.
  std::optional<std::string> last_words();
  std::optional<Message> take();  // a whole message other than TICK, if one is here
  // Throws Silent when nothing came for the bound, reading first: bytes that waited in
  // the socket while this side was busy elsewhere are not the peer's silence.
  void check_silence();

  // What the heartbeat thread shares with the channel, on the heap so a move keeps it.
  struct Link;
  std::unique_ptr<Link> link_;
  int fd_ = -1;
  std::string peer_;
  std::string in_;
  std::chrono::steady_clock::time_point heard_{};  // the peer's last bytes
  std::chrono::milliseconds silence_{0};
};

class Listener {
 public:
  Listener(const std::string& bind_addr, uint16_t port);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  // Waits up to `timeout` (forever when negative) for one client.
  std::optional<Channel> accept(std::chrono::milliseconds timeout);
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace rdmasweep::control
