// `rdmasweep client HOST[,HOST...] --multicast GROUP`: multicast without MPI. Every
// server named was started with `rdmasweep server --join GROUP`; each is told every
// point and joins, then per point it starts receiving, this side sends the point's
// datagrams to the group (core/engine/multicast.hpp, as `mesh --pattern multicast`),
// tells each server how many went out, and each answers what arrived. The messages
// are core/control/mcast_messages.hpp's; a server on another host has its clock
// offset from ours estimated first (PROBE round trips), so it records one-way latency.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "core/config/knobs.hpp"
#include "core/config/sweep.hpp"
#include "core/point/multicast_session.hpp"
#include "core/point/session.hpp"
#include "core/results/aggregates.hpp"
#include "core/results/context.hpp"
#include "core/results/records.hpp"
#include "core/results/report.hpp"
#include "core/setup/device_checks.hpp"
#include "core/version.hpp"

namespace rdmasweep {

namespace {

using control::MsgType;
using nlohmann::json;

struct Receiver {
  std::string address;  // as given in HOST
  std::unique_ptr<ClientSession> session;
  bool same_host = false;
  ClockOffset clock;  // the server's clock minus ours (when not on our host)
  bool latency() const { return same_host || clock.known; }
  control::Channel& ch() { return session->channel(); }
  const control::Hello& hello() const { return session->server(); }
  std::string latency_kind() const { return mcast_latency_kind(same_host, clock); }
};

std::vector<std::string> split_hosts(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = std::min(s.find(',', at), s.size());
    if (comma == at) throw cli::UsageError("client: an empty host in '" + s + "'");
    out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// Connects to a server and checks that it receives `group`; estimates its clock.
Receiver connect_receiver(LocalFabric& fabric, const std::string& address, const cli::ClientOptions& o,
                          const SessionOptions& so) {
  Receiver r;
  r.address = address;
  r.session = std::make_unique<ClientSession>(fabric, control::Channel::connect(address, o.port, so.timeout), so);
  const control::Hello& h = r.hello();
  if (h.join.empty())
    throw ConfigError("server " + address + " receives no multicast: start it with `rdmasweep server --join " +
                      o.multicast + "`");
  if (h.join != o.multicast)
    throw ConfigError("server " + address + " receives multicast group " + h.join + ", not " + o.multicast +
                      ": give --multicast " + h.join + " or restart it with --join " + o.multicast);
  r.same_host = h.host == fabric.hello().host;
  if (!r.same_host) r.clock = estimate_clock_offset(r.ch(), kProbeRounds, so.timeout);
  return r;
}

json make_context(const cli::ClientOptions& o, const LocalFabric& f, const std::vector<Receiver>& rs, size_t points) {
  const control::Hello me = f.hello();
  json receivers = json::array();
  for (size_t i = 0; i < rs.size(); ++i) {
    const Receiver& r = rs[i];
    json j = {{"index", i + 1},  {"address", r.address}, {"host", r.hello().host}, {"device", r.hello().device},
              {"gid", r.hello().gid}, {"kernel", r.hello().kernel}, {"same_host", r.same_host}};
    if (!r.latency()) {
      j["clock_offset"] = kNoOffsetEstimate;
    } else if (!r.same_host) {
      j["clock_offset_us"] = static_cast<double>(r.clock.offset_ns) / 1e3;
      j["clock_offset_uncertainty_us"] = static_cast<double>(r.clock.uncertainty_ns) / 1e3;
      j["clock_probes"] = r.clock.rounds;
    }
    receivers.push_back(j);
  }
  RunContext run{"multicast", me, f.dev.port(), o.labels, o.interval};
  run.latency_note =
      "one-way, from the sender's post to the receiver's arrival; on another host against the receiver's clock "
      "offset, estimated from control-channel round trips (NTP's way), wrong by at most its uncertainty";
  const SweepContext sw{o.config_file, sweep_json(o.spec), points, o.clock, o.cap_to_cq};
  json c = results_context(run, &sw);
  c["pattern"] = "multicast";
  c["group"] = o.multicast;
  c["receivers"] = receivers;
  return c;
}

// One repetition of one point: the rows of the sender and of every receiver.
std::vector<json> run_point(std::vector<Receiver>& rs, McastEnd& sender, const TestConfig& c, uint32_t index,
                            uint32_t tag, EntryPlace at, const std::string& group, const std::string& me,
                            std::chrono::milliseconds timeout, std::vector<json>& records) {
  for (Receiver& r : rs)
    r.ch().send(MsgType::McastPoint,
                control::to_json(control::McastPoint{index, tag, r.latency(), r.same_host ? 0 : r.clock.offset_ns}));
  for (Receiver& r : rs) r.ch().expect(MsgType::McastPoint, timeout);  // every one receiving
  const McastSent s = sender.send(c, tag, g_interrupted);
  for (Receiver& r : rs) r.ch().send(MsgType::McastSent, {{"sent", s.sent}});
  const std::string point = point_name(c);
  std::vector<json> rows;
  at.name = at.run_name = "multicast/" + point + "/src:0";
  json b = entry_head(at);
  add_mcast_rates(b, c, static_cast<double>(s.measured), s.seconds, s.cpu_seconds);
  b.update({{"point", point}, {"config", c}, {"messages_sent", s.sent}, {"group", group}, {"src_rank", 0},
            {"dst_rank", -1}, {"src_host", me}});
  rows.push_back(b);
  records.push_back(json());
  for (size_t i = 0; i < rs.size(); ++i) {
    const control::McastArrived got = control::mcast_arrived_from_json(rs[i].ch().expect(MsgType::McastResult, kTestWait));
    ++at.instance;
    at.name = at.run_name = "multicast/" + point + "/src:0/dst:" + std::to_string(i + 1);
    json e = entry_head(at);
    records.push_back(add_mcast_receiver(e, c, s.sent, got, rs[i].latency_kind()));
    e.update({{"point", point}, {"config", c}, {"group", group}, {"src_rank", 0}, {"dst_rank", i + 1},
              {"src_host", me}, {"dst_host", rs[i].hello().host}});
    if (!rs[i].same_host && rs[i].latency())
      e["clock_offset_uncertainty_us"] = static_cast<double>(rs[i].clock.uncertainty_ns) / 1e3;
    rows.push_back(e);
  }
  return rows;
}

// What this side and each server will do, before the first point.
void announce(const std::string& group, const LocalFabric& fabric, const std::vector<Receiver>& rs, size_t points) {
  std::fprintf(stderr, "rdmasweep: multicast to %s from %s %s, %zu point(s), %zu receiver(s)\n", group.c_str(),
               fabric.hello().host.c_str(), fabric.dev.name().c_str(), points, rs.size());
  for (size_t i = 0; i < rs.size(); ++i) {
    const Receiver& r = rs[i];
    std::string clock = ", this host's clock";
    if (!r.same_host)
      clock = r.clock.known ? ", clock offset estimated within +-" + std::to_string(r.clock.uncertainty_ns / 1000) + " us"
                            : ", no clock offset estimate: latency not measured";
    std::fprintf(stderr, "rdmasweep:   %zu: %s (%s %s)%s\n", i + 1, r.address.c_str(), r.hello().host.c_str(),
                 r.hello().device.c_str(), clock.c_str());
  }
}

// Every point's repetitions into `report`; returns why the run stopped early ("" when it did not).
std::string run_points(std::vector<Receiver>& rs, McastEnd& sender, const std::vector<TestConfig>& points,
                       const cli::ClientOptions& o, const std::string& me, SweepReport& report) {
  const std::chrono::milliseconds timeout = std::chrono::seconds(o.timeout_s);
  uint32_t tag = 0;
  for (size_t pi = 0; pi < points.size(); ++pi) {
    std::vector<json> runs;
    for (uint32_t rep = 0; rep < o.spec.repetitions; ++rep) {
      if (g_interrupted) return "interrupted";
      EntryPlace at;
      at.family = pi;
      at.repetitions = o.spec.repetitions;
      at.repetition = rep;
      std::vector<json> records;
      try {
        std::vector<json> rows = run_point(rs, sender, points[pi], static_cast<uint32_t>(pi), ++tag, at, o.multicast,
                                           me, timeout, records);
        for (size_t i = 0; i < rows.size(); ++i) report.add(rows[i], records[i]);
        runs.insert(runs.end(), rows.begin(), rows.end());
      } catch (const std::exception& e) {
        at.name = at.run_name = "multicast/" + point_name(points[pi]) + "/src:0";
        json b = entry_head(at);
        b["point"] = point_name(points[pi]);
        mark_failed(b, e.what());
        report.add(b);
        report.write(false);
        return std::string("failed at ") + point_name(points[pi]) + ": " + e.what();
      }
      report.write(false);
    }
    if (o.spec.repetitions > 1)
      for (json& a : aggregate_entries(runs)) report.add(std::move(a));
  }
  return "";
}

}  // namespace

int multicast_client_main(cli::ClientOptions& o) {
  const std::vector<TestConfig> points = expand(o.spec);
  const std::vector<std::string> hosts = split_hosts(o.host);
  check_writable(o.out);
  LocalFabric fabric = LocalFabric::open(o.fabric);
  for (const TestConfig& c : points) check_device_limits(c, fabric.dev);
  SessionOptions so;
  so.timeout = std::chrono::seconds(o.timeout_s);
  so.interrupted = &g_interrupted;
  std::vector<Receiver> rs;
  for (const std::string& h : hosts) rs.push_back(connect_receiver(fabric, h, o, so));
  // Every receiver joins and posts its receives before anything is sent.
  for (Receiver& r : rs) r.ch().send(MsgType::McastStart, control::to_json(control::McastStart{o.multicast, points}));
  for (Receiver& r : rs) r.ch().expect(MsgType::McastStart, so.timeout);
  McastEnd sender(fabric.dev, fabric.gid, o.multicast, /*receiver=*/false, points, so.timeout);
  announce(o.multicast, fabric, rs, points.size());

  SweepReport report(o.out, make_context(o, fabric, rs, points.size()), mesh_console_layout(), "rdmasweep");
  size_t width = 5;
  for (const TestConfig& c : points) width = std::max(width, point_name(c).size() + 1);
  report.set_width(width);
  const std::string incomplete = run_points(rs, sender, points, o, fabric.hello().host, report);
  for (Receiver& r : rs) {
    try {
      r.session->close(incomplete);
    } catch (const std::exception&) {
      // A server that is gone needs no goodbye; the failure is in the results.
    }
  }
  report.write(true, incomplete);
  std::fprintf(stderr, "rdmasweep: %zu entries, %zu failed; results: %s, histograms: %s\n",
               report.doc()["benchmarks"].size(), report.failed(), report.path().c_str(), report.hist_path().c_str());
  if (report.print_if_unwritten()) return kFailed;
  if (g_interrupted) return kInterrupted;
  return incomplete.empty() && report.failed() == 0 ? kOk : kFailed;
}

}  // namespace rdmasweep
