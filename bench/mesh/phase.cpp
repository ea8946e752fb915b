// Runs the phases of `rdmasweep mesh` (see phase.hpp). Every measured byte moves
// over our own verbs QPs through core's engine (PointResources and the hot loops),
// exactly as in `rdmasweep client`; MPI (world.hpp) only swaps endpoints and counts.
#include "bench/mesh/phase.hpp"

#include <time.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/commands.hpp"
#include "bench/mesh/report.hpp"
#include "core/config/knobs.hpp"
#include "core/engine/connection.hpp"
#include "core/engine/loop.hpp"
#include "core/point/measured_run.hpp"
#include "core/results/model.hpp"

namespace rdmasweep::mesh_detail {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

// One flow's end on this rank.
struct FlowEnd {
  Flow flow;
  bool initiator = false;
  std::unique_ptr<PointResources> res;  // one TestResources per --threads thread
  bool reused = false;  // res ran the previous repetition of this phase
  std::string error;
  // initiator
  PointResult result;
  // The measured window (warm-up excluded), in seconds from the phase's common zero.
  double window_start = 0, window_end = 0;
  std::vector<uint64_t> sent;
  json hist;
  // SEND bw receiver
  std::vector<uint64_t> received;
  std::mutex expected_mu;
  std::vector<uint64_t> final_expected;  // set once the initiator's DONE arrived
  bool have_final = false;
  // target ends: what the initiator's DONE said
  std::vector<uint64_t> peer_sent;
  bool peer_ok = false;
  std::atomic<bool> stop{false};      // a responder: its initiator is done
  std::atomic<bool> finished{false};  // this end's thread (if any) is done
};

namespace {

// A flow's initiator runs the client's measured run (core's measure_point); its
// window is placed on the phase's common clock.
void run_initiator(FlowEnd& fe, const RunControl& ctl, Clock::time_point zero, double interval) {
  const Workload& w = fe.res->cfg().work;
  fe.result = measure_threads(*fe.res, ctl, effective_interval(interval, w), nullptr, fe.sent);
  fe.result.reused = fe.reused;
  // The window the loops measured (first thread's start to last thread's end), not
  // one ending when this thread got back from joining them.
  std::tie(fe.window_start, fe.window_end) = window_since(fe.result, zero);
  if (fe.result.latency) fe.hist = histogram_json(fe.result.hist);
}

// This rank's figures and errors for its ends of a phase's flows, for rank 0.
// `port`: this rank's port counter deltas over the phase (null without counters),
// shared by all of its flow ends.
json flow_results(const std::vector<std::unique_ptr<FlowEnd>>& ends, const TestConfig& cfg, double setup, const World& w,
                  const std::vector<std::string>& hosts, const json& port) {
  json mine = json::array();
  for (auto& fe : ends) {
    json r = {{"src", fe->flow.src}, {"dst", fe->flow.dst}, {"initiator", fe->initiator}};
    if (!port.is_null()) r["port"] = {{"counters", port}, {"flows", ends.size()}};
    if (!fe->error.empty()) r["error"] = "rank " + std::to_string(w.rank) + " (" + hosts[w.rank] + "): " + fe->error;
    if (fe->initiator && fe->error.empty()) {
      fe->result.setup_seconds = setup;
      json fig = json::object();
      for (const auto& [k, v] : figures(fe->result)) fig[k] = number(v);
      r["figures"] = fig;
      r["window"] = {fe->window_start, fe->window_end};
      r["per_qp"] = fe->result.per_qp;
      if (fe->result.latency) {
        r["hist"] = {{"config", cfg},
                     {"per_qp_messages", json::array({fe->result.per_qp})},
                     {"per_qp_latency", json::array({{{"min_ns", fe->result.qp_lat_min_ns},
                                                      {"max_ns", fe->result.qp_lat_max_ns},
                                                      {"mean_ns", fe->result.qp_lat_mean_ns}}})},
                     {"latency_kind", latency_kind(cfg)},
                     {"histogram", fe->hist}};
      } else {
        r["hist"] = {{"config", cfg}, {"per_qp_messages", json::array({fe->result.per_qp})}};
      }
      if (!fe->result.timeline.t.empty()) r["hist"]["timeline"] = json::array({timeline_json(fe->result.timeline)});
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

// "2->0, 1->2": the flows of `flows` with an end on one of `ranks`.
std::string flows_touching(const std::vector<Flow>& flows, const std::set<int>& ranks) {
  std::string out;
  for (const Flow& f : flows)
    if (ranks.count(f.src) || ranks.count(f.dst))
      out += (out.empty() ? "" : ", ") + std::to_string(f.src) + "->" + std::to_string(f.dst);
  return out;
}

// Step 3: one thread per flow end that has work (passive WRITE/READ targets have none).
// Each end marks itself finished; the main thread keeps the heartbeats going.
std::vector<std::thread> start_flows(Ends& ends, const TestConfig& cfg, const MeshOptions& o, Clock::time_point zero) {
  const Workload& wk = cfg.work;
  const bool send_bw = wk.op == Op::Send && wk.mode == Mode::Bw;
  const bool responds = wk.mode == Mode::Lat && !fetches(wk.op);
  std::vector<std::thread> threads;
  for (auto& fe : ends) {
    FlowEnd* p = fe.get();
    RunControl ctl;
    ctl.interrupted = &g_interrupted;
    ctl.idle_timeout = std::chrono::seconds(o.timeout_s);
    auto guarded = [p](auto body) {
      try {
        body();
      } catch (const std::exception& e) {
        p->error = e.what();
      }
      p->finished.store(true);
    };
    if (p->initiator) {
      const double interval = o.interval;
      threads.emplace_back([p, ctl, zero, interval, guarded] { guarded([&] { run_initiator(*p, ctl, zero, interval); }); });
    } else if (send_bw || responds) {
      // Receivers end on their counts, responders on the end of the flow: its
      // initiator's DONE (settle_flows) gives both, to every thread of the end.
      if (responds) ctl.idle_timeout = std::chrono::hours(24);
      threads.emplace_back([p, ctl, guarded] {
        guarded([&] {
          p->received = follow_threads(*p->res, ctl, nullptr, [p]() -> const std::vector<uint64_t>* {
                          std::lock_guard<std::mutex> lock(p->expected_mu);
                          return p->have_final ? &p->final_expected : nullptr;
                        }).per_qp;
        });
      });
    } else {
      p->finished.store(true);
    }
  }
  return threads;
}

// Step 4: each initiator end, once done, sends its target's rank DONE with what it
// sent; each target end ends on its DONE (a SEND receiver checks its counts). A
// source rank found gone before its DONE fails that end, naming the rank.
void settle_flows(Ends& ends, const TestConfig& cfg, const World& w, const std::vector<std::string>& hosts) {
  const Workload& wk = cfg.work;
  const bool send_bw = wk.op == Op::Send && wk.mode == Mode::Bw;
  auto all_finished = [&](bool initiators) {
    for (auto& fe : ends)
      if (fe->initiator == initiators && !fe->finished.load()) return false;
    return true;
  };
  wait_until([&] { return all_finished(true); });
  for (auto& fe : ends) {
    if (!fe->initiator) continue;
    control::Counts done;
    done.per_qp = fe->sent;
    done.per_qp.resize(total_qps(cfg), 0);  // a sender that failed early may have counted nothing
    send_to(fe->flow.dst, kTagDone, json{{"ok", fe->error.empty()}, {"counts", control::to_json(done)}}.dump());
  }
  std::set<int> sources;
  for (auto& fe : ends)
    if (!fe->initiator) sources.insert(fe->flow.src);
  auto target_from = [&](int src) -> FlowEnd& {
    for (auto& fe : ends)
      if (!fe->initiator && fe->flow.src == src) return *fe;
    throw control::ProtocolError("DONE from rank " + std::to_string(src) + ", which has no flow to this rank");
  };
  auto finish_target = [&](FlowEnd& fe, const std::vector<uint64_t>& sent) {
    {
      std::lock_guard<std::mutex> lock(fe.expected_mu);
      // A failed sender's counts may be short: the receiver then ends on its idle timeout.
      fe.final_expected = sent.size() == total_qps(cfg) ? sent : std::vector<uint64_t>(total_qps(cfg), 0);
      fe.have_final = true;
    }
    fe.stop.store(true);
  };
  std::set<int> lost = receive_from(sources, kTagDone, [&](int src, const std::string& payload) {
    FlowEnd& fe = target_from(src);
    // Decoded as the client's DONE is: a malformed one is a protocol error.
    json d = control::decode_payload(payload);
    if (!d.contains("ok") || !d["ok"].is_boolean() || !d.contains("counts"))
      throw control::ProtocolError("rank " + std::to_string(src) + " sent a malformed DONE");
    fe.peer_sent = control::counts_from_json(d["counts"], static_cast<uint32_t>(total_qps(cfg))).per_qp;
    fe.peer_ok = d["ok"].get<bool>();
    finish_target(fe, fe.peer_sent);
  });
  for (int src : lost) {
    FlowEnd& fe = target_from(src);
    fe.error = describe_ranks({src}, hosts) + " stopped answering before it finished this flow";
    finish_target(fe, {});
  }
  wait_until([&] { return all_finished(false); });
  if (!send_bw) return;
  for (auto& fe : ends) {
    if (fe->initiator || !fe->error.empty() || !fe->peer_ok) continue;  // a failed sender reports its own error
    for (uint32_t q = 0; q < total_qps(cfg) && q < fe->peer_sent.size(); ++q)
      if (fe->received.size() <= q || fe->received[q] != fe->peer_sent[q]) {
        fe->error = "rank " + std::to_string(w.rank) + " received " +
                    std::to_string(fe->received.size() > q ? fe->received[q] : 0) + " messages on QP " +
                    std::to_string(q) + " but " + std::to_string(fe->peer_sent[q]) + " were sent";
        break;
      }
  }
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
    json b = base_entry(bench_name(o.pattern, cfg, flow_tail(f)), at, cfg);
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
std::string Runner::connect_phase(const TestConfig& cfg, std::vector<std::unique_ptr<FlowEnd>>& ends) {
  // 1. The previous repetition's QPs, connected already (every rank decides alike:
  // they are kept only when that repetition ended without an error anywhere), or new ones.
  std::vector<std::unique_ptr<PointResources>> previous;
  previous.swap(kept);
  bool reuse = previous.size() == ends.size() && !ends.empty();
  for (size_t i = 0; reuse && i < ends.size(); ++i) reuse = previous[i]->can_serve(cfg);
  std::string err;
  try {
    for (size_t i = 0; i < ends.size(); ++i) {
      FlowEnd& fe = *ends[i];
      if (reuse) {
        fe.res = std::move(previous[i]);
        fe.res->retarget(cfg);  // a new rkey for this run
        fe.reused = true;
      } else {
        fe.res = std::make_unique<PointResources>(fabric->dev, fabric->gid, cfg, fe.initiator ? Role::Initiator : Role::Target);
      }
    }
  } catch (const std::exception& e) {
    err = std::string("cannot set up ") + point_name(cfg) + ": " + e.what();
  }
  previous.clear();
  if (std::string e = first_error(w, hosts, err); !e.empty()) return e;

  // 2. Swap endpoints: to rank j, {"i": ours for flow me->j, "t": ours for flow j->me}.
  std::vector<json> outj(static_cast<size_t>(w.size), json::object());
  for (auto& fe : ends) {
    int peer = fe->initiator ? fe->flow.dst : fe->flow.src;
    outj[static_cast<size_t>(peer)][fe->initiator ? "i" : "t"] = control::to_json(fe->res->local_endpoints());
  }
  std::vector<std::string> out(static_cast<size_t>(w.size));
  for (int r = 0; r < w.size; ++r) out[static_cast<size_t>(r)] = outj[static_cast<size_t>(r)].empty() ? "" : outj[static_cast<size_t>(r)].dump();
  std::vector<std::string> in = alltoall(w, out);
  try {
    for (auto& fe : ends) {
      int peer = fe->initiator ? fe->flow.dst : fe->flow.src;
      json pj = control::decode_payload(in[static_cast<size_t>(peer)]);
      const char* key = fe->initiator ? "t" : "i";
      if (!pj.contains(key)) throw control::ProtocolError("rank " + std::to_string(peer) + " sent no endpoint for this flow");
      std::vector<control::Endpoint> peer_end = control::endpoints_from_json(pj[key], cfg.knobs.threads, cfg.work.qps);
      if (fe->reused) fe->res->set_remote(peer_end);  // same QPs, this run's rkey
      else fe->res->connect(peer_end);
    }
  } catch (const std::exception& e) {
    err = std::string("cannot connect ") + point_name(cfg) + ": " + e.what();
  }
  return first_error(w, hosts, err);
}

bool Runner::run_phase(const TestConfig& cfg, EntryPos& at, const std::vector<Flow>& flows,
                       std::vector<json>& point_entries) {
  Ends ends = ends_of(flows, w.rank);
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
    if (std::string e = connect_phase(cfg, ends); !e.empty()) {
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

  // 3 and 4. Run; each target end ends on its initiator's DONE.
  std::vector<std::thread> threads = start_flows(ends, cfg, o, zero);
  settle_flows(ends, cfg, w, hosts);
  for (std::thread& t : threads) t.join();

  // 5. Results to rank 0, which reports every flow: a flow whose rank stopped
  // answering fails naming it; the phase's other flows keep their results.
  const json port = counted ? json(counter_delta(c0, fabric->counters.read_after_traffic())) : json(nullptr);
  std::vector<std::string> gathered;
  collect_results(w, flow_results(ends, cfg, setup, w, hosts, port), gathered);
  const std::set<int> gone = poll_liveness();
  if (w.rank == 0) add_flow_entries(*report, o.pattern, cfg, at, flows, gathered, hosts, point_entries, gone);
  if (!gone.empty())
    throw RanksGone(std::vector<int>(gone.begin(), gone.end()),
                    describe_ranks(std::vector<int>(gone.begin(), gone.end()), hosts) + " stopped answering in phase " +
                        std::to_string(at.phase) + " of " + point_name(cfg) + ": flows " + flows_touching(flows, gone) +
                        " failed; the phase's other flows kept their results");
  const bool any_interrupted = any_rank(g_interrupted.load());

  // 6. No rkey outlives its run; the QPs are kept for the next repetition unless a
  // flow failed anywhere (its QPs may be in the error state).
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
