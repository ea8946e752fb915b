// The point protocol, for both ends of a point and both kinds of link
// (core/control/peer_link.hpp): the client and the server (core/point/session.cpp,
// serve.cpp) and every flow of a mesh (bench/mesh/phase.cpp) run exactly these
// functions, once each end has created (or retargeted) its QPs.
//
//   leading end                              following end
//                                         <- SETUP_OK {its endpoints}
//   connects its QPs to them               -> CONNECT {its endpoints}     (not when the
//                                         <- READY, its QPs connected     peer has them)
//   measured loops (a peer's ERROR stops) -> loops that follow, or a wait
//   DONE {sent per QP}                    -> its loops end on those counts
//   RESULT checked against what was sent  <- RESULT {got per QP, CPU, atomics, reverse}
//
// Every check of what one end sent against what the other got is made here, once,
// by the leading end (with core/point/point_checks.hpp). A failure of either end
// reaches the other: its ERROR (raised here as PeerFailed), an ABANDON before the
// QPs connect, or its link's report that it is gone.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/control/peer_link.hpp"
#include "core/host/placement.hpp"
#include "core/measure/wall_time.hpp"
#include "core/point/lanes.hpp"
#include "core/results/progress_file.hpp"
#include "core/results/model.hpp"

namespace rdmasweep {

// How an end's QPs meet the peer's: from the endpoints exchanged (this default), or
// through RDMA-CM (client/server --cm, core/point/session.cpp and serve.cpp).
class Connector {
 public:
  virtual ~Connector() = default;
  // Following end, before SETUP_OK leaves: adds to its endpoints (RDMA-CM: the listener's port).
  virtual void offer(PointResources&, std::vector<Endpoint>&) {}
  // Following end, after SETUP_OK left, before CONNECT comes (RDMA-CM: the accepts).
  virtual void await(PointResources&, control::PeerLink&) {}
  // Connects this end's QPs to the peer's endpoints.
  virtual void connect(PointResources& res, const std::vector<Endpoint>& peer) { res.connect(peer); }
  // The peer's CONNECT when it came while await() was still at work (RDMA-CM: the
  // client is connected on its side before the server's last ESTABLISHED); taken in
  // place of the next message.
  std::optional<control::Message> early;
};

// Which connection a point's QPs make.
struct Joining {
  bool reused = false;      // the previous point's QPs, connected already: only this point's rkeys go over
  bool peer_knows = false;  // the peer has this end's endpoints already (the client's SETUP carried them)
};

// The peer gave up the point before its QPs connected (ABANDON): its side failed to set up.
struct PeerAbandoned {
  std::string why;
};

// A message from the peer in place of `want`: its ERROR as PeerFailed, its ABANDON as
// PeerAbandoned, anything else a ProtocolError naming both.
[[noreturn]] void unexpected_message(const control::PeerLink& link, const control::Message& m, control::MsgType want);

// The following end's connection: SETUP_OK with its endpoints, then (unless the peer
// knows them) the leading end's CONNECT, its QPs connected to it, READY. Throws
// PeerAbandoned on the peer's ABANDON.
void follow_connect(PointResources& res, control::PeerLink& link, Connector& c, Joining j);
// The leading end's: SETUP_OK's endpoints, its QPs connected to them, CONNECT, READY.
// `timeout` bounds each wait (the peer is connecting, not measuring).
void lead_connect(PointResources& res, control::PeerLink& link, Connector& c, Joining j,
                  std::chrono::milliseconds timeout);

struct EndOptions {
  const std::atomic<bool>* interrupted = nullptr;
  const std::atomic<bool>* wind_up = nullptr;  // RunControl::wind_up of the leading end's loops
  std::chrono::milliseconds timeout{10000};  // a loop with no completion for this long, and the WRITE fence
  const Placement* placement = nullptr;      // where the point's threads run; null: unpinned
  // Leading end: seconds between throughput samples (SessionOptions::interval's rules).
  double interval = -1;
  bool iwarp = false;       // the device is iWARP (a failure's explanation differs)
  Laps* laps = nullptr;     // leading end: the measured window and the wait for RESULT, split off
  // Following end: adds what only its caller knows to RESULT (the server's port counters).
  std::function<void(control::Counts&)> add_to_result;
  // --progress-file: "traffic NAME" as this end's loops start (or, for a passive target, as it
  // starts waiting for DONE), and on the leading end "measuring NAME" as the measured
  // window opens (after the warm-up); null: nothing said.
  const ProgressFile* progress_file = nullptr;
  // Leading end: called as its loops start (a point run beside this one waits for it).
  std::function<void()> on_traffic;
};

// Runs the point's measured loops on connected `res`, then DONE, RESULT and every
// check of the peer's counts. `got`, when set, receives the peer's RESULT. Throws on
// any failure; PeerFailed when the peer's own failure stopped it.
PointResult lead_end(PointResources& res, control::PeerLink& link, const EndOptions& o, control::Counts* got = nullptr);

// The following end of the same point: its loops (SEND receiver, latency responder,
// --bidir's own direction) or only the wait for DONE, then RESULT.
void follow_end(PointResources& res, control::PeerLink& link, const EndOptions& o);

}  // namespace rdmasweep
