// `rdmasweep mesh`: many nodes at a time, started by MPI. MPI only starts the
// processes, swaps connection data (each rank's serialized control::Endpoint JSON,
// host names) and synchronizes them; every measured byte moves over our own verbs
// QPs through core's engine (TestResources and the hot loops), exactly as in
// `rdmasweep client`. Rank 0 writes one Google Benchmark JSON file.
//
// Patterns, each run at every sweep point:
//   pairs       every ordered pair (i -> j) in turn, the other ranks waiting
//   incast      ranks 1..N-1 all send to rank 0 at once
//   all-to-all  every rank sends to every other at once
#include <cstdio>
#include <iostream>
#include <string>

#include "bench/commands.hpp"
#include "bench/mesh/options.hpp"

#ifdef RDMASWEEP_HAVE_MPI
#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/mesh/phase.hpp"
#include "bench/mesh/report.hpp"
#include "bench/mesh/world.hpp"
#include "core/connection.hpp"
#include "core/loop.hpp"
#include "core/results.hpp"
#include "core/session.hpp"
#include "core/sweep.hpp"
#endif

namespace rdmasweep {

#ifdef RDMASWEEP_HAVE_MPI

namespace mesh_detail {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string hostname() {
  char b[256] = {};
  gethostname(b, sizeof b - 1);
  return b;
}

// One flow's end on this rank.
struct FlowEnd {
  Flow flow;
  bool initiator = false;
  std::unique_ptr<TestResources> res;
  std::string error;
  // initiator
  PointResult result;
  std::vector<uint64_t> sent;
  json hist;
  // SEND bw receiver
  std::vector<uint64_t> received;
  std::vector<uint64_t> expected;
  std::mutex expected_mu;
  std::vector<uint64_t> final_expected;  // set once the initiator's counts arrived (duration mode)
  bool have_final = false;
};

void run_initiator(FlowEnd& fe, const RunControl& ctl) {
  TestResources& res = *fe.res;
  const TestConfig& cfg = res.cfg;
  const Workload& w = cfg.work;
  PointResult& out = fe.result;
  out.cfg = cfg;
  out.name = point_name(cfg);
  fe.sent.assign(w.qps, 0);
  if (w.mode == Mode::Bw) {
    if (w.warmup > 0) {
      LoopStats warm = run_bw_initiator(res, w.warmup, 0, ctl);
      for (uint32_t q = 0; q < w.qps; ++q) fe.sent[q] += warm.per_qp[q];
    }
    double cpu0 = thread_cpu_seconds();
    LoopStats st = run_bw_initiator(res, w.iters, w.duration, ctl);
    out.cpu_seconds = thread_cpu_seconds() - cpu0;
    out.seconds = st.seconds;
    out.per_qp = st.per_qp;
    for (uint32_t q = 0; q < w.qps; ++q) fe.sent[q] += st.per_qp[q];
  } else {
    double cpu0 = thread_cpu_seconds();
    LatStats st = run_lat_initiator(res, w.warmup, w.iters, w.duration, ctl);
    out.cpu_seconds = thread_cpu_seconds() - cpu0;
    for (uint32_t q = 0; q < w.qps; ++q) fe.sent[q] = st.per_qp[q] + w.warmup;
    take_latency(out, std::move(st));
    fe.hist = histogram_json(out.hist);
  }
  out.messages = 0;
  for (uint64_t v : out.per_qp) out.messages += v;
  out.bytes = out.messages * w.size;
}

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// ---- the run ----

struct Runner {
  World w;
  MeshOptions o;
  LocalFabric* fabric = nullptr;
  std::vector<std::string> hosts;
  std::unique_ptr<MeshReport> report;  // rank 0 only

  // Runs one phase of one point. Returns false when the sweep must stop (interrupted).
  bool run_phase(const TestConfig& cfg, size_t point_index, const std::vector<Flow>& flows, size_t& instance,
                 std::vector<json>& point_entries);
};

bool Runner::run_phase(const TestConfig& cfg, size_t point_index, const std::vector<Flow>& flows, size_t& instance,
                       std::vector<json>& point_entries) {
  const Workload& wk = cfg.work;
  const auto t0 = Clock::now();
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
      json b = base_entry(bench_name(o.pattern, cfg, flow_tail(f)), point_index, instance++);
      b["point"] = point_name(cfg);
      b["error_occurred"] = true;
      b["error_message"] = err;
      b["src_rank"] = f.src;
      b["dst_rank"] = f.dst;
      report->add(b, std::to_string(f.src) + "->" + std::to_string(f.dst));
    }
  };

  // 1. Resources.
  std::string err;
  try {
    for (auto& fe : ends)
      fe->res = std::make_unique<TestResources>(fabric->dev, fabric->gid, cfg, fe->initiator ? Role::Initiator : Role::Target);
  } catch (const std::exception& e) {
    err = std::string("cannot set up ") + point_name(cfg) + ": " + e.what();
  }
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
      fe->res->connect(control::endpoint_from_json(pj[key], wk.qps));
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
      initiators.emplace_back([p, ctl] {
        try {
          run_initiator(*p, ctl);
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
  json mine = json::array();
  for (auto& fe : ends) {
    json r = {{"src", fe->flow.src}, {"dst", fe->flow.dst}, {"initiator", fe->initiator}};
    if (!fe->error.empty()) r["error"] = "rank " + std::to_string(w.rank) + " (" + hosts[w.rank] + "): " + fe->error;
    if (fe->initiator && fe->error.empty()) {
      fe->result.setup_seconds = setup;
      json fig = json::object();
      for (const auto& [k, v] : figures(fe->result)) fig[k] = number(v);
      r["figures"] = fig;
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
  std::vector<std::string> gathered = gather_to_root(w, mine.dump());
  const bool any_interrupted = any_rank(g_interrupted.load());
  if (w.rank == 0) add_flow_entries(*report, o.pattern, cfg, point_index, instance, flows, gathered, hosts, point_entries);
  return !any_interrupted;
}

int run_mesh(const World& w, int argc, char** argv) {
  // Rank 0 parses everything and sends the points; every rank parses its own fabric options.
  std::string status;  // rank 0: {"code", "error", "points", ...}
  MeshOptions o;
  if (w.rank == 0) {
    json st;
    try {
      std::string help;
      o = parse_mesh(argc, argv, &help, true);
      std::vector<TestConfig> points = expand(o.spec);
      if (w.size < 2) throw cli::UsageError("needs at least 2 ranks: start it with mpirun -np N (N >= 2)");
      check_writable(o.out);
      st = {{"code", 0}, {"points", points}};
    } catch (const cli::UsageError& e) {
      st = {{"code", kUsage}, {"error", std::string(e.what()) + " (see `rdmasweep mesh --help`)"}};
    } catch (const ConfigError& e) {
      st = {{"code", kUsage}, {"error", e.what()}};
    } catch (const std::exception& e) {
      st = {{"code", kFailed}, {"error", e.what()}};
    }
    status = st.dump();
  }
  json st = json::parse(broadcast(w, status));
  if (st["code"].get<int>() != 0) {
    if (w.rank == 0) std::fprintf(stderr, "rdmasweep mesh: %s\n", st["error"].get<std::string>().c_str());
    return st["code"].get<int>();
  }
  std::vector<TestConfig> points = st["points"].get<std::vector<TestConfig>>();
  if (w.rank != 0) {
    std::string help;
    try {
      o = parse_mesh(argc, argv, &help, false);
    } catch (const std::exception&) {
      // Rank 0 parsed the same line (or, with A : B launches, its own); use the defaults.
    }
  }

  // Every rank opens its fabric and checks every point against its device.
  std::unique_ptr<LocalFabric> fabric;
  std::string err;
  json me;
  try {
    fabric = std::make_unique<LocalFabric>(LocalFabric::open(o.fabric));
    for (const TestConfig& c : points) check_device_limits(c, fabric->dev);
    control::Hello h = fabric->hello();
    me = {{"rank", w.rank},         {"host", h.host},           {"device", h.device},
          {"port", fabric->dev.port()}, {"gid_index", fabric->gid.index}, {"gid", gid_to_string(fabric->gid.gid)},
          {"gid_type", fabric->gid.type}, {"firmware", h.firmware}, {"link_layer", h.link_layer},
          {"mtu", h.active_mtu},    {"rate_gbps", h.rate_gbps}, {"kernel", h.kernel}};
  } catch (const std::exception& e) {
    err = e.what();
    me = {{"rank", w.rank}, {"host", hostname()}};
  }
  std::vector<std::string> infos = allgather(w, me.dump());
  std::vector<json> ranks;
  Runner run;
  run.w = w;
  for (const std::string& s : infos) {
    ranks.push_back(json::parse(s));
    run.hosts.push_back(ranks.back().value("host", "?"));
  }
  if (std::string e = first_error(w, run.hosts, err); !e.empty()) {
    if (w.rank == 0) std::fprintf(stderr, "rdmasweep mesh: %s\n", e.c_str());
    return kFailed;
  }
  run.o = o;
  run.fabric = fabric.get();

  std::vector<std::vector<Flow>> phases = phases_of(o.pattern, w.size);
  size_t flows_per_point = 0;
  for (const auto& p : phases) flows_per_point += p.size();
  if (w.rank == 0) {
    run.report = std::make_unique<MeshReport>(o.out, make_context(o, w, ranks, points.size()));
    size_t width = 5;
    for (const TestConfig& c : points) width = std::max(width, point_name(c).size());
    run.report->set_width(width);
    std::fprintf(stderr, "rdmasweep mesh: %s, %d ranks, %zu point(s), %zu flow(s) per point\n", to_string(o.pattern),
                 w.size, points.size(), flows_per_point);
    for (const json& r : ranks)
      std::fprintf(stderr, "rdmasweep mesh:   rank %d: %s %s port %u, GID index %d (%s %s)\n", r["rank"].get<int>(),
                   r.value("host", "").c_str(), r.value("device", "").c_str(), r.value("port", 0u), r.value("gid_index", -1),
                   r.value("gid_type", "").c_str(), r.value("gid", "").c_str());
    run.report->write(false);
  }

  bool go_on = true;
  for (size_t pi = 0; pi < points.size() && go_on; ++pi) {
    size_t instance = 0;
    std::vector<json> entries;
    for (const auto& phase : phases) {
      quiet_barrier();  // one phase at a time: the others wait here
      go_on = run.run_phase(points[pi], pi, phase, instance, entries);
      if (!go_on) break;
    }
    if (w.rank != 0) continue;
    if (o.pattern != Pattern::Pairs && go_on)  // aggregate: the summed rates of the flows that ran together
      run.report->add(total_entry(o.pattern, points[pi], pi, instance, entries), "total");
    run.report->write(false);
  }
  int code = kOk;
  if (w.rank == 0) {
    std::string reason = g_interrupted || !go_on ? "interrupted" : "";
    run.report->write(true, reason);
    std::fprintf(stderr, "rdmasweep mesh: %zu of %zu entries failed; results: %s, histograms: %s\n", run.report->failed(),
                 run.report->doc()["benchmarks"].size(), o.out.c_str(), run.report->hist_path().c_str());
    if (!run.report->write_error().empty()) {
      std::fprintf(stderr, "rdmasweep mesh: could not write the results (%s); printing them to stdout instead\n",
                   run.report->write_error().c_str());
      std::printf("%s\n", run.report->doc().dump(2).c_str());
      code = kFailed;
    } else if (!go_on) {
      code = kInterrupted;
    } else if (run.report->failed() > 0) {
      code = kFailed;
    }
  }
  return broadcast(code);
}

}  // namespace
}  // namespace mesh_detail

#endif  // RDMASWEEP_HAVE_MPI

int mesh_main(int argc, char** argv) {
  if (mesh_detail::wants_help(argc, argv)) {
    std::string help;
    mesh_detail::parse_mesh(argc, argv, &help, false);
    std::cout << help;
#ifndef RDMASWEEP_HAVE_MPI
    std::cout << "(this rdmasweep was built without MPI: install libopenmpi-dev and rebuild)\n";
#endif
    return kOk;
  }
#ifndef RDMASWEEP_HAVE_MPI
  std::fprintf(stderr, "rdmasweep mesh: this rdmasweep was built without MPI (install libopenmpi-dev and rebuild)\n");
  return kUsage;
#else
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "rdmasweep mesh: MPI_Init failed\n");
    return kFailed;
  }
  mesh_detail::World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  int code = kFailed;
  try {
    code = mesh_detail::run_mesh(w, argc, argv);
  } catch (const std::exception& e) {
    // Out of step with the other ranks: say which rank failed and take them all down.
    std::fprintf(stderr, "rdmasweep mesh: rank %d: %s\n", w.rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, kFailed);
  }
  MPI_Finalize();
  return code;
#endif
}

}  // namespace rdmasweep
