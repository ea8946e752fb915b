// A mesh flow's ends speak the point protocol (core/point/point_protocol.hpp) over
// MPI: each end's thread uses its FlowLink as the protocol's PeerLink, and the rank's
// main thread, the only one that calls MPI, moves their messages (Postbox::pump):
// out to the peer rank, in to the end they are for, and a peer rank found gone to
// every end that waits for it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/control/peer_link.hpp"

namespace rdmasweep::mesh_detail {

class Postbox;

class FlowLink final : public control::PeerLink {
 public:
  // This rank's end of a flow with `peer_rank`: its initiator (src) or its target.
  FlowLink(Postbox& box, int peer_rank, bool initiator, std::string who, std::string me);
  void send(control::MsgType type, const nlohmann::json& body) override;
  std::optional<control::Message> try_recv() override;
  control::Message recv(std::chrono::milliseconds timeout) override;
  const std::string& who() const override { return who_; }
  const std::string& me() const override { return me_; }

 private:
  friend class Postbox;
  void deliver(control::Message m);
  void lose(const std::string& why);  // the peer rank is gone: waits end with `why`
  std::optional<control::Message> take_locked();

  Postbox& box_;
  const int peer_;
  const bool initiator_;
  const std::string who_, me_;
  std::mutex mu_;
  std::condition_variable arrived_;
  std::deque<control::Message> inbox_;
  std::string gone_;
};

// One phase's links on this rank. `phase` numbers the phases alike on every rank, so
// that a message left over from an earlier phase is never taken for this one's.
class Postbox {
 public:
  explicit Postbox(unsigned phase) : phase_(phase) {}
  void add(FlowLink& link);
  // Main thread: sends what the ends posted, delivers what came for them, and tells
  // the ends whose peer rank is in `gone` (poll_liveness) that it is.
  void pump(const std::set<int>& gone);
  // Main thread: every end's waits end with `why` (the messages can no longer be trusted).
  void fail(const std::string& why);

 private:
  friend class FlowLink;
  void post(int to, bool to_initiator, control::MsgType type, const nlohmann::json& body);

  const unsigned phase_;
  std::mutex mu_;
  std::vector<std::pair<int, std::string>> outbox_;
  std::map<std::pair<int, bool>, FlowLink*> links_;  // (peer rank, this end is the initiator)
};

}  // namespace rdmasweep::mesh_detail
