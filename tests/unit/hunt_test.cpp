// `rdmasweep hunt`'s search on made-up landscapes (bench/hunt/): the space file, the
// sampler, each oracle, confirmation by repetitions, shrinking to the minimal trigger
// and the reproduce command, which must parse back into exactly that trigger.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/hunt/report.hpp"
#include "bench/hunt/search.hpp"
#include "bench/hunt/space.hpp"
#include "core/config/sweep.hpp"

namespace rdmasweep::hunt {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A small space: write and send bandwidth, 1-4 QPs, 256 B-8 KiB, two depths.
Space small_space() {
  return Space::from_json(json::parse(R"({
    "axes": {"op": ["send", "write"], "mode": ["bw"], "qps": [1, 2, 4],
             "size": [256, 512, 1024, 2048, 4096, 8192], "tx_depth": [16, 128], "post_list": [1, 4],
             "duration": 0.2, "warmup": 8},
    "repetitions": 3})"));
}

// A simulated bench: every run takes 0.5 s of simulated time; `landscape` decides it.
struct FakeBench {
  Clock::time_point t = Clock::now();
  size_t runs = 0;
  std::function<Measurement(const Candidate&)> landscape;
  Measure measure() {
    return [this](const Candidate& c, const std::string&) {
      t += std::chrono::milliseconds(500);
      ++runs;
      return landscape(c);
    };
  }
  std::function<Clock::time_point()> now() {
    return [this] { return t; };
  }
};

// Bytes/s that grow with size and QPs, as a healthy link's do; counters clean.
Measurement healthy(const Candidate& c) {
  Measurement m;
  m.ok = true;
  m.messages = 10000;
  m.msg_rate = 1e5 * c.point.work.qps;
  m.byte_rate = m.msg_rate * static_cast<double>(c.point.work.size);
  m.has_counters = true;
  m.counters = {{"retransmits", 0}, {"rnr_naks", 0}, {"errors", 0}};
  return m;
}

HuntResult hunt(const Space& s, FakeBench& bench, double budget_s, uint64_t seed = 7) {
  Sampler sampler(s, seed);
  Hunter h(s, sampler, bench.measure(), std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget_s)),
           {}, {}, bench.now());
  return h.run();
}

TEST(HuntSpace, FileKeysAreCheckedAndMustHoldDefaultsToRepetitions) {
  Space s = small_space();
  EXPECT_EQ(s.repetitions, 3u);
  EXPECT_EQ(s.must_hold, 3u);
  std::vector<std::string> searched;
  for (const Knob* k : s.searched()) searched.push_back(k->key);
  EXPECT_EQ(searched, (std::vector<std::string>{"op", "qps", "tx_depth", "post_list", "size"}));
  EXPECT_THROW(Space::from_json(json::parse(R"({"axis": {}})")), ConfigError);
  EXPECT_THROW(Space::from_json(json::parse(R"({"repetitions": 2, "must_hold": 3})")), ConfigError);
  EXPECT_THROW(Space::from_json(json::parse(R"({"thresholds": {"counters": {"bogus": 1}}})")), ConfigError);
  EXPECT_THROW(Space::from_json(json::parse(R"({"axes": {"duration": 0}})")), ConfigError);
  Space t = Space::from_json(json::parse(R"({"thresholds": {"counters": {"retransmits": null, "cnp_sent": 0.5}}})"));
  EXPECT_EQ(t.thresholds.counters.count("retransmits"), 0u);
  EXPECT_EQ(t.thresholds.counters.at("cnp_sent"), 0.5);
  // What the report records reads back as the same space.
  EXPECT_EQ(Space::from_json(s.to_json()).to_json(), s.to_json());
}

TEST(HuntSpace, ShrinkPathsRunFromTheSimplestValueOut) {
  const std::vector<uint64_t> sizes = {256, 512, 1024, 4096};
  EXPECT_EQ(shrink_target(knob("size"), sizes), 256u);  // smaller, whatever the default
  EXPECT_EQ(shrink_path(knob("size"), sizes, 1024), (std::vector<uint64_t>{256, 512, 1024}));
  EXPECT_EQ(shrink_target(knob("signal_every"), {1, 32, 64}), 32u);  // the default
  EXPECT_EQ(shrink_path(knob("signal_every"), {1, 32, 64}, 1), (std::vector<uint64_t>{32, 1}));
  const uint64_t write = static_cast<uint64_t>(Op::Write), send = static_cast<uint64_t>(Op::Send);
  EXPECT_EQ(shrink_path(knob("op"), {send, write}, write), (std::vector<uint64_t>{send, write}));
  EXPECT_EQ(shrink_path(knob("op"), {send, write}, send), (std::vector<uint64_t>{send}));
}

TEST(HuntSpace, SamplerDrawsValidPointsAndNeighboursDifferInOneKnob) {
  Space s = Space::defaults();
  Sampler a(s, 42), b(s, 42);
  for (int i = 0; i < 200; ++i) {
    Candidate c = a.random();
    EXPECT_EQ(c.key(), b.random().key());  // the seed alone decides
    EXPECT_NO_THROW(validate(c.point));
    EXPECT_FALSE(c.point.knobs.srq && c.point.work.op != Op::Send);
    EXPECT_EQ(c.point.work.duration, s.axes.duration);
    Candidate n = a.neighbour(c);
    b.neighbour(c);
    if (n.aggressor.has_value() != c.aggressor.has_value()) continue;  // the aggressor added or dropped
    int differ = 0;
    for (const Knob& k : knobs()) differ += k.get(n.point) != k.get(c.point);
    EXPECT_TRUE(differ == 1 || n.key() != c.key()) << c.key() << " -> " << n.key();
    EXPECT_LE(differ, 1) << c.key() << " -> " << n.key();
  }
}

TEST(HuntOracles, ThroughputComparesOnlyWithPointsThatHaveNoMore) {
  Thresholds t;
  TestConfig big, small;
  big.work.size = 4096;
  big.work.qps = 2;
  small.work.size = 1024;
  small.work.qps = 1;
  Measurement mb = healthy({big, {}}), ms = healthy({small, {}});
  EXPECT_TRUE(is_reference("throughput", big, small));
  EXPECT_FALSE(is_reference("throughput", small, big));  // bigger messages are no reference for smaller
  TestConfig other_list = small;
  other_list.knobs.post_list = 4;
  EXPECT_FALSE(is_reference("throughput", big, other_list));  // loop knobs must match
  std::vector<Observed> hist = {{{small, {}}, ms}, {{big, {}}, mb}};
  EXPECT_LT(top_score(judge({big, {}}, mb, hist, t)), 1);
  mb.byte_rate = 0.4 * ms.byte_rate;  // moving less than half what a smaller point moves
  std::vector<Finding> f = judge({big, {}}, mb, hist, t);
  auto it = std::find_if(f.begin(), f.end(), [](const Finding& x) { return x.oracle == "throughput"; });
  ASSERT_NE(it, f.end());
  EXPECT_NEAR(it->score, 0.5 / 0.4, 1e-9);
  EXPECT_EQ(point_name(*it->reference), point_name(small));
}

TEST(HuntOracles, LatencyCountersAndIsolation) {
  Thresholds t;
  TestConfig lat, bigger;
  lat.work.mode = bigger.work.mode = Mode::Lat;
  lat.work.size = 64;
  bigger.work.size = 4096;
  Measurement ml = healthy({lat, {}}), mg = healthy({bigger, {}});
  ml.p99_us = 50;
  mg.p99_us = 10;  // a 64 B ping slower than 4 KiB ones: 50 > 4 x 10
  std::vector<Finding> f = judge({lat, {}}, ml, {{{bigger, {}}, mg}}, t);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().oracle, "latency");
  EXPECT_NEAR(f.front().score, 50.0 / 40.0, 1e-9);
  // errors has a limit of 0: a single one flags.
  Measurement me = healthy({lat, {}});
  me.counters["errors"] = 1;
  EXPECT_GE(rejudge("counters:errors", {lat, {}}, me, nullptr, nullptr, t)->score, 1);
  EXPECT_LT(rejudge("counters:retransmits", {lat, {}}, me, nullptr, nullptr, t)->score, 1);
  // Isolation: 80% slower beside the aggressor is over the 75% limit; 50% is not.
  Candidate pair{lat, bigger};
  Measurement mp = healthy(pair);
  mp.beside_rate = 0.2 * mp.msg_rate;
  EXPECT_GE(rejudge("isolation", pair, mp, nullptr, nullptr, t)->score, 1);
  mp.beside_rate = 0.5 * mp.msg_rate;
  EXPECT_LT(rejudge("isolation", pair, mp, nullptr, nullptr, t)->score, 1);
}

// A planted fault: every WRITE of 1024 B or more retransmits (and sees packets out of
// sequence: one trouble, two counters, one anomaly). The hunt must find it,
// confirm it and shrink it to write, 1024 B, one QP, no post list and the default send
// depth (16 is smaller, but not valid with the default signal interval of 32).
TEST(HuntSearch, FindsAndShrinksAPlantedAnomaly) {
  FakeBench bench;
  bench.landscape = [](const Candidate& c) {
    Measurement m = healthy(c);
    if (c.point.work.op == Op::Write && c.point.work.size >= 1024) {
      m.counters["retransmits"] = 50;
      m.counters["out_of_sequence"] = 30;
    }
    return m;
  };
  const Space s = small_space();
  HuntResult r = hunt(s, bench, 600);
  ASSERT_EQ(r.anomalies.size(), 1u);
  const Anomaly& a = r.anomalies[0];
  EXPECT_EQ(a.found.oracle, "counters:retransmits");
  EXPECT_TRUE(a.shrink_complete);
  EXPECT_EQ(point_name(a.minimal.point), "write/bw/qps:1/size:1024/cq:4");
  EXPECT_EQ(a.evidence.held, 3u);
  EXPECT_EQ(a.also_shows, std::vector<std::string>{"counters:out_of_sequence"});
  // 512 B was tried and did not show it: the trigger is the size threshold itself.
  const bool tried_512 = std::any_of(a.steps.begin(), a.steps.end(),
                                     [](const std::string& step) { return step.find("-> 512: held 0") != std::string::npos; });
  EXPECT_TRUE(tried_512);
  for (const Flagged& f : r.others) EXPECT_EQ(f.status, "covered by anomaly 1") << f.cand.key();
  EXPECT_GT(r.explored, 100u);
  EXPECT_LE(r.seconds, 600.5);  // the budget holds (the last run may end just past it)
}

// Points that flag once at random never flag again: repetitions dismiss them as noise.
TEST(HuntSearch, NoiseIsDismissedNotReported) {
  FakeBench bench;
  size_t n = 0;
  bench.landscape = [&n](const Candidate& c) {
    Measurement m = healthy(c);
    if (++n % 37 == 0) m.counters["retransmits"] = 100;  // now and then, anywhere
    return m;
  };
  HuntResult r = hunt(small_space(), bench, 300);
  EXPECT_TRUE(r.anomalies.empty());
  ASSERT_FALSE(r.others.empty());
  for (const Flagged& f : r.others) {
    EXPECT_EQ(f.status, "noise") << f.cand.key();
    EXPECT_LT(f.probe.held, 3u);
  }
}

// From 2048 B on, SEND moves a tenth of the bytes.
Measurement send_cliff_at_2048(const Candidate& c) {
  Measurement m = healthy(c);
  if (c.point.work.op == Op::Send && c.point.work.size >= 2048) m.byte_rate /= 10;
  return m;
}

// A throughput cliff: from 2048 B on, SEND moves a tenth of the bytes. Its minimal
// trigger is send at 2048 B, compared with a point at a smaller size.
TEST(HuntSearch, ThroughputCliffShrinksToTheFirstSizePastIt) {
  FakeBench bench;
  bench.landscape = send_cliff_at_2048;
  HuntResult r = hunt(small_space(), bench, 900);
  ASSERT_FALSE(r.anomalies.empty());
  const Anomaly& a = r.anomalies[0];
  EXPECT_EQ(a.found.oracle, "throughput");
  EXPECT_EQ(a.minimal.point.work.size, 2048u);
  EXPECT_EQ(a.minimal.point.work.op, Op::Send);
  ASSERT_TRUE(a.reference);
  EXPECT_LT(a.reference->work.size, 2048u);
}

// The same cliff: its best references have as many QPs as the point (more QPs, more
// bytes/s), so shrinking the point's QPs must move its reference's with them, or the
// reference, with more QPs than the point, is no reference and the QPs cannot shrink.
// The minimal trigger has 1 QP, and so has its reference.
TEST(HuntSearch, ShrinkingMovesTheReferenceWithTheCandidate) {
  FakeBench bench;
  bench.landscape = send_cliff_at_2048;
  HuntResult r = hunt(small_space(), bench, 900);
  ASSERT_FALSE(r.anomalies.empty());
  const Anomaly& a = r.anomalies[0];
  EXPECT_EQ(a.found.oracle, "throughput");
  EXPECT_TRUE(a.shrink_complete);
  EXPECT_EQ(a.minimal.point.work.qps, 1u);
  ASSERT_TRUE(a.reference);
  EXPECT_EQ(a.reference->work.qps, 1u);
  EXPECT_LT(a.reference->work.size, 2048u);
  EXPECT_TRUE(is_reference("throughput", a.minimal.point, *a.reference));
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// The reproduce command, run through the client's own parser, expands to exactly the
// minimal trigger and its reference.
TEST(HuntReport, ReproduceCommandParsesBackToTheTriggerAndItsReference) {
  TestConfig p, ref;
  p.work.op = ref.work.op = Op::Write;
  p.work.size = 2048;
  ref.work.size = 512;
  p.knobs.tx_depth = ref.knobs.tx_depth = 16;
  p.knobs.srq = false;
  p.knobs.signal_every = ref.knobs.signal_every = 1;
  p.knobs.inline_size = ref.knobs.inline_size = 0;
  const Space s = small_space();
  Anomaly a;
  a.found.oracle = "throughput";
  a.minimal = {p, std::nullopt};
  a.reference = ref;
  ReportContext ctx{"10.0.0.2", "--port 9999", 1, 60, "points.json", json::object()};
  const std::string cmd = reproduce_command(a, s, ctx);
  std::vector<std::string> argv = words(cmd);
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[0], "rdmasweep");
  argv.erase(argv.begin());  // the parser sees "client HOST ..."
  std::vector<char*> args;
  for (std::string& w : argv) args.push_back(w.data());
  std::string help;
  cli::ClientOptions o = cli::parse_client(static_cast<int>(args.size()), args.data(), &help);
  EXPECT_EQ(o.host, "10.0.0.2");
  EXPECT_EQ(o.port, 9999);
  EXPECT_EQ(o.spec.repetitions, s.repetitions);
  std::set<std::string> got;
  for (const TestConfig& c : expand(o.spec)) {
    got.insert(point_name(c));
    EXPECT_EQ(c.work.duration, s.axes.duration);
    EXPECT_EQ(c.work.warmup, s.axes.warmup);
  }
  EXPECT_EQ(got, (std::set<std::string>{point_name(p), point_name(ref)}));
}

TEST(HuntReport, MarkdownNamesEachAnomalyItsEvidenceAndTheDismissed) {
  FakeBench bench;
  bench.landscape = [](const Candidate& c) {
    Measurement m = healthy(c);
    if (c.point.work.qps >= 4) m.counters["rnr_naks"] = 400;
    return m;
  };
  const Space s = small_space();
  HuntResult r = hunt(s, bench, 300);
  ASSERT_EQ(r.anomalies.size(), 1u);
  json j = report_json(r, s, {"host-b", "", 7, 300, "points.json", json::object()});
  EXPECT_EQ(j["anomalies"][0]["minimal"]["changed"], json({{"qps", 4}, {"size", 256}}));
  EXPECT_EQ(j["explored"], r.explored);
  std::string md = report_markdown(j);
  EXPECT_NE(md.find("## Anomaly 1: counters:rnr_naks"), std::string::npos) << md;
  EXPECT_NE(md.find("rnr_naks=400 over 10000 messages"), std::string::npos) << md;
  EXPECT_NE(md.find("rdmasweep client host-b --op send --mode bw --qps 4 --size 256"), std::string::npos) << md;
  EXPECT_NE(md.find("held in 3 of 3 runs"), std::string::npos) << md;
}

}  // namespace
}  // namespace rdmasweep::hunt
