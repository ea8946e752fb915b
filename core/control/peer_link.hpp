// What one end of a point says to the other end and hears from it, whatever carries
// it: the TCP control channel between a client and a server (ChannelLink, here), or
// MPI between two ranks of a mesh (bench/mesh/flow_link.hpp). The point protocol
// (core/point/point_protocol.hpp) speaks only this, so its steps, checks and abort
// path are written once for both.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/control/channel.hpp"

namespace rdmasweep::control {

class PeerLink {
 public:
  virtual ~PeerLink() = default;
  virtual void send(MsgType type, const nlohmann::json& body = nlohmann::json::object()) = 0;
  // A whole message if one has come; never blocks (called from the loops' idle checks).
  virtual std::optional<Message> try_recv() = 0;
  // Waits up to `timeout`; throws ChannelError on timeout, a peer gone or silent.
  virtual Message recv(std::chrono::milliseconds timeout) = 0;
  // As recv, but polling without sleeping: this end's CPU never idles (--target-spin).
  // By default, try_recv over and over until `timeout` has passed.
  virtual Message recv_spinning(std::chrono::milliseconds timeout);
  // The peer and this end as messages name them: "the server", "the client", "rank 2 (host-c)".
  virtual const std::string& who() const = 0;
  virtual const std::string& me() const = 0;
};

// The peer reported a failure of its own (its ERROR): this end stops because of it.
class PeerFailed : public ChannelError {
 public:
  using ChannelError::ChannelError;
};

// A client's or a server's control channel, as the point protocol's link.
class ChannelLink final : public PeerLink {
 public:
  ChannelLink(Channel& ch, std::string who, std::string me) : ch_(ch), who_(std::move(who)), me_(std::move(me)) {}
  void send(MsgType type, const nlohmann::json& body) override { ch_.send(type, body); }
  std::optional<Message> try_recv() override { return ch_.try_recv(); }
  Message recv(std::chrono::milliseconds timeout) override { return ch_.recv(timeout); }
  Message recv_spinning(std::chrono::milliseconds timeout) override { return ch_.recv(timeout, true); }
  const std::string& who() const override { return who_; }
  const std::string& me() const override { return me_; }

 private:
  Channel& ch_;
  std::string who_, me_;
};

}  // namespace rdmasweep::control
