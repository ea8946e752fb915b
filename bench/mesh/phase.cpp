// Runs the phases of `rdmasweep mesh` (see phase.hpp). Every measured byte moves
// over our own verbs QPs through core's engine (TestResources and the hot loops),
// exactly as in `rdmasweep client`; MPI (world.hpp) only swaps endpoints and counts.
#include "bench/mesh/phase.hpp"

#include <time.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/commands.hpp"
#include "bench/mesh/report.hpp"
#include "core/connection.hpp"
#include "core/loop.hpp"
#include "core/results.hpp"

namespace rdmasweep::mesh_detail {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// One flow's end on this rank.
struct FlowEnd {
  Flow flow;
  bool initiator = false;
  std::unique_ptr<TestResources> res;
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
  std::vector<uint64_t> expected;
  std::mutex expected_mu;
  std::vector<uint64_t> final_expected;  // set once the initiator's counts arrived (duration mode)
  bool have_final = false;
};

// Ends the measured window now: the loops time their window up to their return.
void end_window(FlowEnd& fe, Clock::time_point zero, double seconds) {
  fe.window_end = std::chrono::duration<double>(Clock::now() - zero).count();
  fe.window_start = fe.window_end - seconds;
}

void run_initiator(FlowEnd& fe, const RunControl& ctl, Clock::time_point zero) {
  TestResources& res = *fe.res;
  const TestConfig& cfg = res.cfg;
  const Workload& w = cfg.work;
  PointResult& out = fe.result;
  out.cfg = cfg;
  out.name = point_name(cfg);
  out.reused = fe.reused;
  out.inline_size = res.inline_size;
  out.outs = res.rd_atomic;
  fe.sent.assign(w.qps, 0);
  if (w.mode == Mode::Bw) {
    if (w.warmup > 0) {
      LoopStats warm = run_bw_initiator(res, w.warmup, 0, ctl);
      for (uint32_t q = 0; q < w.qps; ++q) fe.sent[q] += warm.per_qp[q];
    }
    LoopStats st = run_bw_initiator(res, w.iters, w.duration, ctl);
    end_window(fe, zero, st.seconds);
    out.cpu_seconds = st.cpu_seconds;  // over the measured window, as the loop defines it
    out.seconds = st.seconds;
    out.per_qp = st.per_qp;
    for (uint32_t q = 0; q < w.qps; ++q) fe.sent[q] += st.per_qp[q];
  } else {
    LatStats st = run_lat_initiator(res, w.warmup, w.iters, w.duration, ctl);
    end_window(fe, zero, st.seconds);
    out.cpu_seconds = st.cpu_seconds;  // warm-up excluded
    for (uint32_t q = 0; q < w.qps; ++q) fe.sent[q] = st.per_qp[q] + w.warmup;
    take_latency(out, std::move(st));
    fe.hist = histogram_json(out.hist);
  }
  out.messages = 0;
  for (uint64_t v : out.per_qp) out.messages += v;
  out.bytes = out.messages * w.size;
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
    }
    mine.push_back(r);
  }
  return mine;
}

}  // namespace

bool Runner::run_phase(const TestConfig& cfg, EntryPos& at, const std::vector<Flow>& flows,
                       std::vector<json>& point_entries) {
  const Workload& wk = cfg.work;
  const auto t0 = Clock::now();
  // This rank's port over the phase, setup and exchanges included (outside every window).
  const bool counted = fabric->counters.available();
  const CounterValues c0 = counted ? fabric->counters.read() : CounterValues{};
  // This rank's ends of the phase's flows.
  std::vector<std::unique_ptr<FlowEnd>> ends;
  for (const Flow& f : flows) {
    if (f.src == w.rank || f.dst == w.rank) {
      auto fe = std::make_unique<FlowEnd>();
      fe->flow = f;
      fe->initiator = f.src == w.rank;
      ends.push_back(std::move(fe));
    }
  }
  auto record_phase_error = [&](const std::string& err) {
    if (w.rank != 0) return;
    for (const Flow& f : flows) {
      json b = base_entry(bench_name(o.pattern, cfg, flow_tail(f)), at, cfg);
      mark_failed(b, err);
      b["src_rank"] = f.src;
      b["dst_rank"] = f.dst;
      point_entries.push_back(b);
      report->add(b);
    }
  };

  // 1. Resources: the previous repetition's, connected already (every rank decides
  // alike: they are kept only when that repetition ended without an error anywhere),
  // or new ones.
  std::vector<std::unique_ptr<TestResources>> previous;
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
        fe.res = std::make_unique<TestResources>(fabric->dev, fabric->gid, cfg, fe.initiator ? Role::Initiator : Role::Target);
      }
    }
  } catch (const std::exception& e) {
    err = std::string("cannot set up ") + point_name(cfg) + ": " + e.what();
  }
  previous.clear();
  if (std::string e = first_error(w, hosts, err); !e.empty()) {
    record_phase_error(e);
    return true;
  }

  // 2. Swap endpoints: to rank j, {"i": ours for flow me->j, "t": ours for flow j->me}.
  std::vector<json> outj(w.size, json::object());
  for (auto& fe : ends) {
    int peer = fe->initiator ? fe->flow.dst : fe->flow.src;
    outj[peer][fe->initiator ? "i" : "t"] = control::to_json(fe->res->local_endpoint());
  }
  std::vector<std::string> out(w.size);
  for (int r = 0; r < w.size; ++r) out[r] = outj[r].empty() ? "" : outj[r].dump();
  std::vector<std::string> in = alltoall(w, out);
  try {
    for (auto& fe : ends) {
      int peer = fe->initiator ? fe->flow.dst : fe->flow.src;
      json pj = control::decode_payload(in[peer]);
      const char* key = fe->initiator ? "t" : "i";
      if (!pj.contains(key)) throw control::ProtocolError("rank " + std::to_string(peer) + " sent no endpoint for this flow");
      control::Endpoint peer_end = control::endpoint_from_json(pj[key], wk.qps);
      if (fe->reused) fe->res->set_remote(peer_end);  // same QPs, this run's rkey
      else fe->res->connect(peer_end);
    }
  } catch (const std::exception& e) {
    err = std::string("cannot connect ") + point_name(cfg) + ": " + e.what();
  }
  if (std::string e = first_error(w, hosts, err); !e.empty()) {
    record_phase_error(e);
    return true;
  }
  quiet_barrier();  // every QP is at RTS with its receives posted
  const double setup = std::chrono::duration<double>(Clock::now() - t0).count();
  barrier();  // every rank leaves within microseconds: the flows' windows count from here
  const Clock::time_point zero = Clock::now();

  // 3. Run: one thread per flow end that has work (passive WRITE/READ targets have none).
  std::atomic<bool> stop{false};
  const bool send_bw = wk.op == Op::Send && wk.mode == Mode::Bw;
  const bool responds = wk.mode == Mode::Lat && wk.op != Op::Read;
  std::vector<std::thread> initiators, receivers, responders;
  for (auto& fe : ends) {
    FlowEnd* p = fe.get();
    RunControl ctl;
    ctl.interrupted = &g_interrupted;
    ctl.idle_timeout = std::chrono::seconds(o.timeout_s);
    if (p->initiator) {
      initiators.emplace_back([p, ctl, zero] {
        try {
          run_initiator(*p, ctl, zero);
        } catch (const std::exception& e) {
          p->error = e.what();
        }
      });
    } else if (send_bw) {
      p->expected.assign(wk.qps, wk.duration > 0 ? UINT64_MAX : wk.iters + wk.warmup);
      ctl.on_idle = [p] {
        std::lock_guard<std::mutex> lock(p->expected_mu);
        if (p->have_final) p->expected = p->final_expected;
      };
      receivers.emplace_back([p, ctl] {
        try {
          p->received = run_bw_receiver(*p->res, p->expected, ctl).per_qp;
        } catch (const std::exception& e) {
          p->error = e.what();
        }
      });
    } else if (responds) {
      ctl.idle_timeout = std::chrono::hours(24);  // the initiator decides when it ends
      responders.emplace_back([p, ctl, &stop]() mutable {
        bool finished = false;
        RunControl c = ctl;
        c.on_idle = [&] { finished = stop.load(); };
        try {
          run_lat_responder(*p->res, &finished, c);
        } catch (const std::exception& e) {
          p->error = e.what();
        }
      });
    }
  }
  for (std::thread& t : initiators) t.join();
  const bool duration_send = send_bw && wk.duration > 0;
  if (!duration_send)
    for (std::thread& t : receivers) t.join();

  // 4. Tell each receiver what was sent: to rank j, our sent counts for flow me->j.
  std::vector<std::string> sent_out(w.size);
  for (auto& fe : ends)
    if (fe->initiator) sent_out[fe->flow.dst] = json{{"sent", fe->sent}, {"ok", fe->error.empty()}}.dump();
  std::vector<std::string> sent_in = alltoall(w, sent_out);
  for (auto& fe : ends) {
    if (fe->initiator || !send_bw) continue;
    json sj = json::parse(sent_in[fe->flow.src], nullptr, false);
    std::vector<uint64_t> sent;
    if (sj.is_object() && sj.contains("sent")) sent = sj["sent"].get<std::vector<uint64_t>>();
    if (duration_send) {
      std::lock_guard<std::mutex> lock(fe->expected_mu);
      // A failed sender's counts may be short: the receiver then ends on its idle timeout.
      fe->final_expected = sent.size() == wk.qps ? sent : std::vector<uint64_t>(wk.qps, 0);
      fe->have_final = true;
    }
  }
  if (duration_send)
    for (std::thread& t : receivers) t.join();
  for (auto& fe : ends) {
    if (fe->initiator || !send_bw || !fe->error.empty()) continue;
    json sj = json::parse(sent_in[fe->flow.src], nullptr, false);
    if (!sj.is_object() || !sj.value("ok", false)) continue;  // the sender reports its own error
    std::vector<uint64_t> sent = sj["sent"].get<std::vector<uint64_t>>();
    for (uint32_t q = 0; q < wk.qps && q < sent.size(); ++q)
      if (fe->received.size() <= q || fe->received[q] != sent[q]) {
        fe->error = "rank " + std::to_string(w.rank) + " received " + std::to_string(fe->received.size() > q ? fe->received[q] : 0) +
                    " messages on QP " + std::to_string(q) + " but " + std::to_string(sent[q]) + " were sent";
        break;
      }
  }
  quiet_barrier();  // every initiator is done
  stop.store(true);
  for (std::thread& t : responders) t.join();

  // 5. Results to rank 0.
  const json port = counted ? json(counter_delta(c0, fabric->counters.read())) : json(nullptr);
  std::vector<std::string> gathered = gather_to_root(w, flow_results(ends, cfg, setup, w, hosts, port).dump());
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
  if (w.rank == 0) add_flow_entries(*report, o.pattern, cfg, at, flows, gathered, hosts, point_entries);
  return !any_interrupted;
}

}  // namespace rdmasweep::mesh_detail
