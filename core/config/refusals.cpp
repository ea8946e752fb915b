#include "core/config/refusals.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/config/config.hpp"
#include "core/config/knobs.hpp"

namespace rdmasweep {

namespace {

using C = const TestConfig&;
using X = const PointContext&;

bool cq_too_small(C c, X) { return c.knobs.cq_depth != 0 && c.knobs.cq_depth < required_cq_entries(c); }

// Rows in the order validate() checks them: the first that refuses is the one reported.
const std::vector<Refusal> kRefusals = {
    {"post-list-depth", "post_list, tx_depth", "--post-list over --tx-depth",
     "post_list: {post_list} must be between 1 and tx_depth ({tx_depth})",
     [](C c, X) { return c.knobs.post_list < 1 || c.knobs.post_list > c.knobs.tx_depth; }},
    // Progress needs a signaled WR among any window of outstanding WRs the loop can wait on.
    {"signal-window", "signal_every, post_list, tx_depth", "--signal-every + --post-list over --tx-depth + 1",
     "signal_every: {signal_every} + post_list {post_list} must not exceed tx_depth + 1 ({tx_depth_plus_1}), or the "
     "send queue fills with no signaled work request to free it; lower --signal-every or --post-list, or raise "
     "--tx-depth",
     [](C c, X) { return uint64_t{c.knobs.signal_every} + c.knobs.post_list > uint64_t{c.knobs.tx_depth} + 1; }},
    {"srq-op", "srq, op", "--srq with --op write, read, cas or faa",
     "srq: only SEND tests have receive queues to share; drop --srq or use --op send",
     [](C c, X) { return c.knobs.srq && c.work.op != Op::Send; }},
    {"atomic-size", "op, size", "--op cas or faa with --size other than 8",
     "{op}: an atomic moves 8 bytes: --size {size} must be 8 (a sweep does this itself)",
     [](C c, X) { return is_atomic(c.work.op) && c.work.size != kAtomicBytes; }},
    {"ud-op", "transport, op", "--transport ud with --op write, read, cas or faa",
     "transport: ud carries SEND only; --op {op} needs --transport rc",
     [](C c, X) { return is_ud(c) && c.work.op != Op::Send; }},
    {"ud-size", "transport, size, mtu", "--transport ud with --size over --mtu",
     "size: {size} is over the UD limit of {mtu} bytes (the path MTU, --mtu): a UD message is one packet; lower "
     "--size or raise --mtu",
     [](C c, X) { return is_ud(c) && c.knobs.mtu != 0 && c.work.size > c.knobs.mtu; }},
    {"cq-depth", "cq_depth, qps, tx_depth, rx_depth, signal_every, threads, cq_scope",
     "--cq-depth below what the QPs can have outstanding",
     "cq_depth: {cq_depth} cannot hold the {cq_need} completions {qps} QPs can have outstanding (qps x "
     "(tx_depth/signal_every + rx_depth for SEND), x threads with --cq-scope process); raise --cq-depth or lower "
     "--qps/--tx-depth/--rx-depth",
     cq_too_small},
    {"bidir-lat", "bidir, mode", "--bidir with --mode lat",
     "bidir: a latency test already goes both ways; use --mode bw",
     [](C c, X) { return c.knobs.bidir && c.work.mode != Mode::Bw; }},
    {"bidir-ud", "bidir, transport", "--bidir with --transport ud", "bidir: runs over RC only (--transport rc)",
     [](C c, X) { return c.knobs.bidir && is_ud(c); }},
    // Each side must know how many SENDs to wait for before its loop may end.
    {"bidir-send-duration", "bidir, op, duration", "--bidir SEND with --duration",
     "bidir: SEND both ways counts the messages each side waits for: use --iters, not --duration (WRITE, READ and "
     "the atomics take --duration)",
     [](C c, X) { return both_ways_send(c) && c.work.duration != 0; }},
    // --validate needs a point where the receiving side sees each message (core/engine/validate.hpp).
    {"validate-atomic", "validate, op", "--validate with --op cas or faa",
     "validate: the atomics already check the server's words; drop --validate",
     [](C c, X) { return c.knobs.validate && is_atomic(c.work.op); }},
    {"validate-ud", "validate, transport", "--validate with --transport ud",
     "validate: checks RC only (--transport rc)", [](C c, X) { return c.knobs.validate && is_ud(c); }},
    {"validate-bidir", "validate, bidir", "--validate with --bidir",
     "validate: not with --bidir; check each direction on its own",
     [](C c, X) { return c.knobs.validate && c.knobs.bidir; }},
    {"validate-write-bw", "validate, op, mode", "--validate with --op write --mode bw",
     "validate: a WRITE target sees no completion per message in bw mode; check WRITE with --mode lat",
     [](C c, X) { return c.knobs.validate && c.work.op == Op::Write && c.work.mode == Mode::Bw; }},
    // Threads sleeping on one completion channel would take each other's events.
    {"events-shared-cq", "events, threads, cq_scope", "--events with --threads over 1 and --cq-scope process",
     "events: --cq-scope process with several threads has one CQ for all of them; use --cq-scope thread (each "
     "thread its own CQ and completion channel) or busy polling",
     [](C c, X) { return c.knobs.events && c.knobs.threads > 1 && c.knobs.cq_scope == CqScope::Process; }},
    // RDMA-CM here connects RC QPs; a UD QP has no connection to make.
    {"cm-ud", "cm, transport", "client --cm with --transport ud",
     "--cm connects RC QPs; UD QPs take no connection: drop --cm or use --transport rc",
     [](C c, X x) { return x.cm && is_ud(c); }},
    {"cm-address", "cm-address, cm", "client --cm-address without --cm", "--cm-address needs --cm", nullptr},
    {"cm-gid", "cm, gid-index", "client --cm with --gid-index",
     "--gid-index and --cm exclude each other: with --cm the GID comes from routing", nullptr},
    {"format-multicast", "format, multicast", "client --format perftest with --multicast",
     "--format perftest prints perftest's tables, one row a point; --multicast's rows (one a server) have no such "
     "layout: drop --format perftest", nullptr},
    {"iwarp-cm", "device transport, cm", "an iWARP device's QPs connected without RDMA-CM (mesh, or a client "
     "without --cm at an iWARP server)",
     "iWARP QPs connect only through RDMA-CM: run the client with --cm (on an iWARP device it does so by itself); "
     "mesh connects QPs without it and runs on InfiniBand and RoCE only",
     nullptr},
    {"rate-lat", "rate, mode", "--rate with --mode lat",
     "rate: paces bandwidth points; a latency point keeps one message in flight per QP: use --mode bw with --rate",
     [](C c, X) { return c.knobs.rate != kRateNone && c.work.mode != Mode::Bw; }},
    {"rate-post-list", "rate, post_list", "--rate with --post-list over 1",
     "rate: each message is posted alone when it is due: --post-list must be 1 with --rate",
     [](C c, X) { return c.knobs.rate != kRateNone && c.knobs.post_list != 1; }},
    {"arrivals-rate", "arrivals, rate", "--arrivals poisson without --rate",
     "arrivals: says when --rate's messages are due: give --rate too",
     [](C c, X) { return c.knobs.arrivals != ArrivalProcess::Constant && c.knobs.rate == kRateNone; }},
    {"iters-duration", "iters, duration", "--iters with --duration",
     "--iters and --duration exclude each other: give one", nullptr},
    {"server-cm", "server --cm, client without --cm", "a client without --cm at a server started with --cm",
     "this server was started with --cm: it serves only clients whose QPs connect with RDMA-CM (run the client "
     "with --cm too)",
     nullptr},
};

std::string value_of(const std::string& key, const TestConfig& c) {
  if (key == "cq_need") return std::to_string(required_cq_entries(c));
  if (key == "tx_depth_plus_1") return std::to_string(uint64_t{c.knobs.tx_depth} + 1);
  const Knob& k = knob(key);  // a row naming no knob is a bug the unit test finds
  const uint64_t v = k.get(c);
  return knob_text(k, v);
}

}  // namespace

const std::vector<Refusal>& refusals() { return kRefusals; }

const Refusal& refusal(const std::string& id) {
  for (const Refusal& r : kRefusals)
    if (id == r.id) return r;
  throw std::out_of_range("no refusal '" + id + "'");
}

std::string refusal_text(const Refusal& r, const TestConfig& c) {
  std::string out, text = r.reason;
  for (size_t i = 0; i < text.size();) {
    const size_t open = text.find('{', i), close = text.find('}', open == std::string::npos ? i : open);
    if (open == std::string::npos || close == std::string::npos) {
      out += text.substr(i);
      break;
    }
    out += text.substr(i, open - i) + value_of(text.substr(open + 1, close - open - 1), c);
    i = close + 1;
  }
  return out;
}

std::string refusal_text(const std::string& id) { return refusal_text(refusal(id), TestConfig{}); }

void check_refusals(const TestConfig& c, const PointContext& ctx) {
  for (const Refusal& r : kRefusals)
    if (r.refuses && r.refuses(c, ctx)) throw ConfigError(refusal_text(r, c));
}

nlohmann::json refusals_json() {
  nlohmann::json a = nlohmann::json::array();
  for (const Refusal& r : kRefusals)
    a.push_back({{"id", r.id}, {"knobs", r.knobs}, {"when", r.when}, {"reason", r.reason}});
  return a;
}

std::string refusals_markdown() {
  std::string md = "| knobs | refused when | the one line it ends with (`{key}`: the point's value) |\n|---|---|---|\n";
  for (const Refusal& r : kRefusals)
    md += std::string("| ") + r.knobs + " | " + r.when + " | " + r.reason + " |\n";
  return md;
}

static void require(bool ok, const std::string& what) {
  if (!ok) throw ConfigError(what);
}

void validate(const TestConfig& c, const PointContext& ctx) {
  const Workload& w = c.work;
  const LoopKnobs& k = c.knobs;
  // size's own words first (the table's range would say the same less plainly).
  require(w.size >= 1, "size: a message must carry at least 1 byte (got 0)");
  require(w.size <= (1ull << 30), "size: " + std::to_string(w.size) + " bytes is over the 1 GiB limit");
  for (const Knob& kn : knobs()) check_knob_range(kn, kn.get(c));
  require(w.duration >= 0 && w.duration <= 86400, "duration: must be between 0 and 86400 seconds");
  require(w.duration > 0 || w.iters >= 1, "iters: at least 1 measured iteration is needed (or set a duration)");
  require(w.iters <= (1ull << 40), "iters: " + std::to_string(w.iters) + " is too large");
  require(w.warmup <= (1ull << 32), "warmup: " + std::to_string(w.warmup) + " is too large");
  require(k.mtu == 0 || k.mtu == 256 || k.mtu == 512 || k.mtu == 1024 || k.mtu == 2048 || k.mtu == 4096,
          "mtu: " + std::to_string(k.mtu) + " is not a path MTU: use 256, 512, 1024, 2048 or 4096 (0: the ports' own)");
  check_refusals(c, ctx);  // the combinations that cannot run: core/config/refusals.cpp
}

}  // namespace rdmasweep
