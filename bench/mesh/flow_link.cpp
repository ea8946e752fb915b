#include "bench/mesh/flow_link.hpp"

#include "bench/mesh/world.hpp"

namespace rdmasweep::mesh_detail {

using nlohmann::json;

FlowLink::FlowLink(Postbox& box, int peer_rank, bool initiator, std::string who, std::string me)
    : box_(box), peer_(peer_rank), initiator_(initiator), who_(std::move(who)), me_(std::move(me)) {
  box_.add(*this);
}

// A message from this end goes to the peer's other end: an initiator's to the target.
void FlowLink::send(control::MsgType type, const json& body) { box_.post(peer_, !initiator_, type, body); }

std::optional<control::Message> FlowLink::take_locked() {
  if (!inbox_.empty()) {
    control::Message m = std::move(inbox_.front());
    inbox_.pop_front();
    return m;
  }
  if (!gone_.empty()) throw control::ChannelError(gone_);
  return std::nullopt;
}

std::optional<control::Message> FlowLink::try_recv() {
  std::lock_guard<std::mutex> lock(mu_);
  return take_locked();
}

control::Message FlowLink::recv(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  arrived_.wait_for(lock, timeout, [this] { return !inbox_.empty() || !gone_.empty(); });
  if (auto m = take_locked()) return *m;
  throw control::Timeout(who_ + " sent nothing within " + control::seconds_text(timeout) + " s");
}

void FlowLink::deliver(control::Message m) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.push_back(std::move(m));
  }
  arrived_.notify_all();
}

void FlowLink::lose(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!gone_.empty()) return;
    gone_ = why;
  }
  arrived_.notify_all();
}

void Postbox::add(FlowLink& link) {
  std::lock_guard<std::mutex> lock(mu_);
  links_[{link.peer_, link.initiator_}] = &link;
}

void Postbox::post(int to, bool to_initiator, control::MsgType type, const json& body) {
  json m = {{"phase", phase_}, {"to_initiator", to_initiator}, {"type", static_cast<int>(type)}, {"body", body}};
  std::lock_guard<std::mutex> lock(mu_);
  outbox_.emplace_back(to, m.dump());
}

void Postbox::pump(const std::set<int>& gone) {
  std::vector<std::pair<int, std::string>> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.swap(outbox_);
  }
  for (auto& [to, payload] : out)
    if (!gone.count(to)) send_to(to, kTagFlow, std::move(payload));
  receive_arrived(kTagFlow, [this](int from, const std::string& payload) {
    const std::string bad = "rank " + std::to_string(from) + " sent a malformed flow message";
    json m = control::decode_payload(payload);
    int type = 0;
    bool to_initiator = false;
    try {
      if (m.at("phase").get<unsigned>() != phase_) return;  // an earlier phase's, to an end long finished
      to_initiator = m.at("to_initiator").get<bool>();
      type = m.at("type").get<int>();
    } catch (const json::exception&) {
      throw control::ProtocolError(bad);
    }
    auto it = links_.find({from, to_initiator});
    if (it == links_.end() || type < 1 || type > static_cast<int>(control::kLastMsgType) || !m.contains("body"))
      throw control::ProtocolError(bad);
    it->second->deliver({static_cast<control::MsgType>(type), m["body"]});
  });
  for (auto& [key, link] : links_)
    if (gone.count(key.first)) link->lose(link->who() + " stopped answering before it finished this flow");
}

void Postbox::fail(const std::string& why) {
  for (auto& entry : links_) entry.second->lose(why);
}

}  // namespace rdmasweep::mesh_detail
