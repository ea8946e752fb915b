#include "core/control/peer_link.hpp"

namespace rdmasweep::control {

// The links without a socket of their own to poll (a mesh flow's) spin on try_recv. An
// interrupt reaches them as their recv's does: the rank's main thread fails the link.
Message PeerLink::recv_spinning(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (std::optional<Message> m = try_recv()) return std::move(*m);
    if (std::chrono::steady_clock::now() >= deadline)
      throw Timeout(who() + " sent nothing within " + seconds_text(timeout) + " s");
  }
}

}  // namespace rdmasweep::control
