// Runs the phases of `rdmasweep mesh` (see phase.hpp). Every measured byte moves
// over our own verbs QPs through core's engine (PointResources and the hot loops),
// and every flow's two ends speak core's point protocol, exactly as `rdmasweep
// client` and `server` do; MPI (world.hpp, flow_link.hpp) only carries its messages,
// agrees on errors and synchronizes the phases.
#include "bench/mesh/phase.hpp"

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/commands.hpp"
#include "bench/mesh/flow_link.hpp"
#include "bench/mesh/report.hpp"
#include "core/config/knobs.hpp"
#include "core/setup/test_resources.hpp"
#include "core/engine/loop.hpp"
#include "core/point/lanes.hpp"
#include "core/point/measured_run.hpp"
#include "core/point/point_protocol.hpp"
#include "core/results/document.hpp"
#include "core/results/model.hpp"
#include "core/results/records.hpp"

namespace rdmasweep::mesh_detail {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// One flow's end on this rank.
struct FlowEnd {
  Flow flow;
  bool initiator = false;
  std::unique_ptr<PointResources> res;  // one TestResources per --threads thread
  bool reused = false;  // res ran the previous repetition of this phase
  std::unique_ptr<FlowLink> link;  // to the flow's other end
  std::string error;
  // initiator
  PointResult result;
  // The measured window (warm-up excluded), in seconds from the phase's common zero.
  double window_start = 0, window_end = 0;
};

namespace {

// A flow's initiator leads the point protocol as the client does (core's lead_end);
// its window is placed on the phase's common clock.
void run_initiator(FlowEnd& fe, const EndOptions& eo, Clock::time_point zero) {
  fe.result = lead_end(*fe.res, *fe.link, eo);
  fe.result.reused = fe.reused;
  // The window the loops measured (first thread's start to last thread's end), not
  // one ending when this thread got back from joining them.
  std::tie(fe.window_start, fe.window_end) = window_since(fe.result, zero);
}

// This rank's figures and errors for its ends of a phase's flows, for rank 0.
// `port`: this rank's port counter deltas over the phase (null without counters),
// shared by all of its flow ends.
json flow_results(const std::vector<std::unique_ptr<FlowEnd>>& ends, double setup, const World& w,
                  const std::vector<std::string>& hosts, const json& port) {
  json mine = json::array();
  for (auto& fe : ends) {
    json r = {{"src", fe->flow.src}, {"dst", fe->flow.dst}, {"initiator", fe->initiator}};
    if (!port.is_null()) r["port"] = {{"counters", port}, {"flows", ends.size()}};
    if (!fe->error.empty()) r["error"] = "rank " + std::to_string(w.rank) + " (" + hosts[w.rank] + "): " + fe->error;
    if (fe->initiator && fe->error.empty()) {
      fe->result.setup_seconds = setup;
      json fig = json::object();
      for (const auto& [k, v] : figures(fe->result)) fig[k] = json_number(v);
      r["figures"] = fig;
      r["window"] = {fe->window_start, fe->window_end};
      r["per_qp"] = fe->result.per_qp;
      r["hist"] = histogram_record({fe->result});
    }
    mine.push_back(r);
  }
  return mine;
}

}  // namespace

namespace {

using Ends = std::vector<std::unique_ptr<FlowEnd>>;

// This rank's ends of the phase's flows.
Ends ends_of(const std::vector<Flow>& flows, int rank) {
  Ends ends;
  for (const Flow& f : flows) {
    if (f.src != rank && f.dst != rank) continue;
    auto fe = std::make_unique<FlowEnd>();
    fe->flow = f;
    fe->initiator = f.src == rank;
    ends.push_back(std::move(fe));
  }
  return ends;
}

// The end of the reason rank 0 writes when `gone` stopped answering in a phase,
// from the phase's entries: which flows through them failed. A rank can stop right
// after its flows' results came back, or in a phase where it has none.
std::string stop_cost(const std::vector<json>& phase_entries, const std::set<int>& gone) {
  std::string failed;
  bool touched = false;
  for (const json& b : phase_entries) {
    if (!b.contains("src_rank") || !b.contains("dst_rank")) continue;  // the phase's total
    const int src = b["src_rank"].get<int>(), dst = b["dst_rank"].get<int>();
    if (!gone.count(src) && !gone.count(dst)) continue;
    touched = true;
    if (b.value("error_occurred", false))
      failed += (failed.empty() ? "" : ", ") + std::to_string(src) + "->" + std::to_string(dst);
  }
  if (!touched) return ": it had no flow in this phase, whose flows all kept their results";
  if (failed.empty()) return ": after its flows' results came back; every flow of the phase kept its results";
  return ": flows " + failed + " failed; the phase's other flows kept their results";
}

// Runs body(end) for every end at once, each on a thread of its own, while this
// (main) thread carries their messages over MPI until every end is done; a peer rank
// found gone ends the ends that wait for it, naming the rank. An end the peer's
// failure stopped records nothing (the peer reports its own). When an end's thread
// cannot start, every end of this rank fails with that error: the started ones stop
// at their links' next wait (Postbox::fail) and are joined, the others tell their
// peers, so that no rank waits for them until its timeout.
void on_every_end(Ends& ends, Postbox& box, const std::function<void(FlowEnd&)>& body) {
  std::atomic<size_t> finished{0};
  std::vector<std::thread> threads;
  auto run = [&ends, &body, &finished](uint32_t i) {
    FlowEnd* p = ends[i].get();
    try {
      body(*p);
    } catch (const control::PeerFailed&) {
    } catch (const PeerAbandoned& a) {
      p->error = a.why;
    } catch (const std::exception& e) {
      p->error = e.what();
    }
    finished.fetch_add(1);
  };
  auto pump = [&box] {
    try {
      box.pump(poll_liveness());
    } catch (const std::exception& e) {
      box.fail(e.what());  // a malformed message: every end stops, with this error
    }
  };
  try {
    start_threads(threads, 0, static_cast<uint32_t>(ends.size()), "this rank's flow ends",
                  "raise the limit or run fewer flows at once", run, [&box](const std::string& why) { box.fail(why); });
  } catch (const ThreadStartError& e) {
    for (size_t i = e.index; i < ends.size(); ++i) {
      ends[i]->error = e.what();
      ends[i]->link->send(control::MsgType::Error, {{"message", e.what()}});
    }
    pump();
    return;
  }
  wait_until([&] { return finished.load() == ends.size(); }, pump);
  for (std::thread& t : threads) t.join();
  pump();  // what the ends said last (READY, RESULT, an ERROR) goes out too
}

std::string first_end_error(const Ends& ends) {
  for (auto& fe : ends)
    if (!fe->error.empty()) return fe->error;
  return "";
}

// Step 5: every rank's flow results to rank 0 (gathered[r]: rank r's), point to
// point so that the ranks still there deliver theirs when another is gone. Returns,
// on rank 0, the ranks whose results never came.
std::set<int> collect_results(const World& w, const json& mine, std::vector<std::string>& gathered) {
  if (w.rank != 0) {
    send_to(0, kTagResults, mine.dump());
    return {};
  }
  gathered.assign(static_cast<size_t>(w.size), "[]");
  gathered[0] = mine.dump();
  std::set<int> others;
  for (int r = 1; r < w.size; ++r) others.insert(r);
  return receive_from(others, kTagResults, [&](int r, const std::string& s) { gathered[static_cast<size_t>(r)] = s; });
}

}  // namespace

void Runner::record_failed_flows(const TestConfig& cfg, EntryPos& at, const std::vector<Flow>& flows,
                                 const std::string& err, std::vector<json>& point_entries) {
  if (w.rank != 0) return;
  for (const Flow& f : flows) {
    json b = base_entry(flow_entry_name(o.pattern, f, cfg, background), at, flow_config(f, cfg, background));
    if (background != nullptr && !f.background) b["point"] = point_name(cfg) + "/beside";
    mark_failed(b, err);
    b["src_rank"] = f.src;
    b["dst_rank"] = f.dst;
    b["phase"] = at.phase;
    point_entries.push_back(b);
    report->add(b);
  }
}

// Steps 1 and 2: this rank's ends on new or kept QPs, connected to their peers.
// Returns the first error of any rank ("" when every end is connected).
std::string Runner::connect_phase(const TestConfig& cfg, std::vector<std::unique_ptr<FlowEnd>>& ends, Postbox& box) {
  // 1. The previous repetition's QPs, connected already (every rank decides alike:
  // they are kept only when that repetition ended without an error anywhere), or new ones.
  std::vector<std::unique_ptr<PointResources>> previous;
  previous.swap(kept);
  bool reuse = previous.size() == ends.size() && !ends.empty();
  for (size_t i = 0; reuse && i < ends.size(); ++i) reuse = reusable(previous[i].get(), flow_config(ends[i]->flow, cfg, background));
  std::string err;
  try {
    for (size_t i = 0; i < ends.size(); ++i) {
      FlowEnd& fe = *ends[i];
      const TestConfig& fc = flow_config(fe.flow, cfg, background);
      if (reuse) {
        fe.res = std::move(previous[i]);
        fe.res->retarget(fc);  // a new rkey for this run
        fe.reused = true;
      } else {
        const size_t peer = static_cast<size_t>(fe.initiator ? fe.flow.dst : fe.flow.src);
        const uint32_t peer_rd_atom = peer < rd_atom.size() ? rd_atom[peer] : 0;
        fe.res = make_resources({fabric->dev, fabric->gid, fe.initiator ? Role::Initiator : Role::Target, 0, -1, peer_rd_atom},
                                fc);
      }
    }
  } catch (const std::exception& e) {
    err = std::string("cannot set up ") + point_name(cfg) + ": " + e.what();
  }
  previous.clear();
  if (std::string e = first_error(w, hosts, err); !e.empty()) return e;

  // 2. Every flow's two ends connect as a client's and a server's do (core's point
  // protocol), over links this rank's main thread carries.
  for (auto& fe : ends) {
    const int peer = fe->initiator ? fe->flow.dst : fe->flow.src;
    fe->link = std::make_unique<FlowLink>(box, peer, fe->initiator, describe_ranks({peer}, hosts),
                                          describe_ranks({w.rank}, hosts));
  }
  const auto timeout = std::chrono::seconds(o.timeout_s);
  on_every_end(ends, box, [timeout](FlowEnd& fe) {
    Connector by_qp_data;
    if (fe.initiator) lead_connect(*fe.res, *fe.link, by_qp_data, {fe.reused, false}, timeout);
    else follow_connect(*fe.res, *fe.link, by_qp_data, {fe.reused, false});
  });
  if (std::string e = first_end_error(ends); !e.empty()) err = std::string("cannot connect ") + point_name(cfg) + ": " + e;
  return first_error(w, hosts, err);
}

bool Runner::run_phase(const TestConfig& cfg, EntryPos& at, const std::vector<Flow>& flows,
                       std::vector<json>& point_entries) {
  Ends ends = ends_of(flows, w.rank);
  Postbox box(++phases_run);
  const bool counted = fabric->counters.available();
  CounterValues c0;
  Clock::time_point t0, zero;
  double setup = 0;
  try {
    // One phase at a time: every rank waits here for the previous phase to end. A rank
    // gone before it gets here fails this phase's flows, named like a stop in setup.
    quiet_barrier();
    t0 = Clock::now();
    // This rank's port over the phase, setup and exchanges included (outside every window).
    if (counted) c0 = fabric->counters.read();
    if (std::string e = connect_phase(cfg, ends, box); !e.empty()) {
      record_failed_flows(cfg, at, flows, e, point_entries);
      return true;
    }
    quiet_barrier();  // every QP is at RTS with its receives posted
    setup = std::chrono::duration<double>(Clock::now() - t0).count();
    barrier();  // every rank leaves within microseconds: the flows' windows count from here
    zero = Clock::now();
  } catch (const RanksGone& e) {
    const std::string why = describe_ranks(e.ranks, hosts) + " stopped answering while the phase was set up";
    record_failed_flows(cfg, at, flows, why, point_entries);
    throw RanksGone(e.ranks, why + " (phase " + std::to_string(at.phase) + " of " + point_name(cfg) + ")");
  }

  // 3 and 4. Run: every end its half of the point protocol, as the client and the server run theirs.
  if (progress)  // --progress-file: this rank's flows of the phase, before their loops start
    for (const auto& fe : ends)
      progress->say("traffic", point_name(flow_config(fe->flow, cfg, background)) + "/src:" + std::to_string(fe->flow.src) + "/dst:" +
                                   std::to_string(fe->flow.dst) + "/phase:" + std::to_string(at.phase));
  const EndOptions eo = end_options();
  on_every_end(ends, box, [&eo, zero](FlowEnd& fe) {
    if (fe.initiator) run_initiator(fe, eo, zero);
    else follow_end(*fe.res, *fe.link, eo);
  });

  // 5. Results to rank 0, which reports every flow: a flow whose rank stopped
  // answering fails naming it; the phase's other flows keep their results.
  const json port = counted ? json(counter_delta(c0, fabric->counters.read_after_traffic())) : json(nullptr);
  std::vector<std::string> gathered;
  collect_results(w, flow_results(ends, setup, w, hosts, port), gathered);
  const std::set<int> gone = poll_liveness();
  const size_t before = point_entries.size();
  if (w.rank == 0) add_flow_entries(*report, o.pattern, cfg, at, flows, gathered, hosts, point_entries, gone, background);
  if (!gone.empty()) {
    // Only rank 0 writes the reason, and only it has the phase's entries.
    const std::vector<json> phase_entries(point_entries.begin() + static_cast<std::ptrdiff_t>(before),
                                          point_entries.end());
    throw RanksGone(std::vector<int>(gone.begin(), gone.end()),
                    describe_ranks(std::vector<int>(gone.begin(), gone.end()), hosts) + " stopped answering in phase " +
                        std::to_string(at.phase) + " of " + point_name(cfg) + stop_cost(phase_entries, gone));
  }
  return keep_for_next(ends);
}

EndOptions Runner::end_options() const {
  EndOptions eo;
  eo.interrupted = &g_interrupted;
  eo.timeout = std::chrono::seconds(o.timeout_s);
  eo.interval = o.interval;
  eo.iwarp = fabric->dev.is_iwarp();
  return eo;
}

// 6. No rkey outlives its run; the QPs are kept for the next repetition unless a flow
// failed anywhere (its QPs may be in the error state) or a rank was interrupted.
// Returns false when one was (the sweep stops).
bool Runner::keep_for_next(std::vector<std::unique_ptr<FlowEnd>>& ends) {
  const bool any_interrupted = any_rank(g_interrupted.load());
  bool failed = false;
  for (auto& fe : ends) {
    fe->res->close_window();
    failed = failed || !fe->error.empty();
  }
  if (!any_rank(failed) && !any_interrupted)
    for (auto& fe : ends) kept.push_back(std::move(fe->res));
  return !any_interrupted;
}

}  // namespace rdmasweep::mesh_detail
