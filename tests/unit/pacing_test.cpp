// --rate and --arrivals: the knob's values, the schedule, and the paced loop on the
// fake device (never early, every message counted, a late post counted, latency from
// when each message was due).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <numeric>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/config/knobs.hpp"
#include "core/config/refusals.hpp"
#include "core/config/sweep.hpp"
#include "core/engine/loop_paced.hpp"
#include "core/results/model.hpp"
#include "core/results/records.hpp"
#include "tests/support/fake_device.hpp"
#include "tests/support/late_peer.hpp"

namespace rdmasweep {
namespace {

using detail::Clock;
using testing::FakeDevice;
using testing::LatePeer;
using testing::LaterPeer;

TEST(Rate, ParsesUnitsAndSaysThemBack) {
  EXPECT_EQ(rate_string(parse_rate("10gbps")), "10gbps");
  EXPECT_EQ(rate_string(parse_rate("2.5gbps")), "2.5gbps");
  EXPECT_EQ(rate_string(parse_rate("2500mbps")), "2.5gbps");
  EXPECT_EQ(rate_string(parse_rate("800mbps")), "800mbps");
  EXPECT_EQ(rate_string(parse_rate("1.5mpps")), "1.5mpps");
  EXPECT_EQ(rate_string(parse_rate("200kpps")), "200kpps");
  EXPECT_EQ(rate_string(parse_rate("50pps")), "50pps");
  EXPECT_EQ(parse_rate("none"), kRateNone);
  EXPECT_EQ(parse_rate("0"), kRateNone);
  EXPECT_DOUBLE_EQ(rate_messages_per_second(parse_rate("1gbps"), 1000), 125000.0);  // 8000 bits a message
  EXPECT_DOUBLE_EQ(rate_messages_per_second(parse_rate("1.5mpps"), 4096), 1.5e6);
  EXPECT_DOUBLE_EQ(rate_messages_per_second(kRateNone, 64), 0.0);
  for (const char* bad : {"10", "10gb", "gbps", "-1gbps", "1e3gbps", "10 gbps", "0gbps"})
    EXPECT_THROW(parse_rate(bad), ConfigError) << bad;
}

// --rate 50%: a share of the point's own flat-out rate, made absolute only once that
// rate is measured.
TEST(Rate, AShareOfTheFlatOutRate) {
  EXPECT_EQ(rate_string(parse_rate("50%")), "50%");
  EXPECT_EQ(rate_string(parse_rate("12.5%")), "12.5%");
  EXPECT_EQ(rate_string(parse_rate("100%")), "100%");
  EXPECT_EQ(rate_string(parse_rate("0.001%")), "0.001%");
  EXPECT_TRUE(is_share(parse_rate("5%")));
  EXPECT_FALSE(is_share(parse_rate("5mpps")));
  for (const char* bad : {"%", "0%", "101%", "-5%", "5 %", "1e1%", "0.0001%"})
    EXPECT_THROW(parse_rate(bad), ConfigError) << bad;
  EXPECT_THROW(rate_messages_per_second(parse_rate("50%"), 64), std::logic_error);  // never paced unresolved
  EXPECT_EQ(rate_string(share_of(parse_rate("25%"), 2e6)), "500kpps");
  EXPECT_EQ(rate_string(share_of(parse_rate("12.5%"), 1000)), "125pps");
  EXPECT_EQ(rate_string(share_of(parse_rate("0.001%"), 10)), "1pps");  // at least one message a second
  SweepSpec s;
  apply_override(s, "rate", "10%:90%:+20%");
  ASSERT_EQ(s.rate.size(), 5u);
  EXPECT_EQ(rate_string(s.rate[4]), "90%");
  EXPECT_THROW(apply_override(s, "rate", "10%:90%:+1mpps"), ConfigError);  // one kind of unit
}

TestConfig paced(const char* rate, Op op = Op::Write) {
  TestConfig c;
  c.work.op = op;
  c.work.size = 64;
  c.knobs.rate = parse_rate(rate);
  return c;
}

// Each share point's flat-out twin runs before it, once, and the share is taken of
// what the twin achieved.
TEST(Rate, ASharePointsFlatOutTwinRunsFirst) {
  SweepSpec s;
  apply_override(s, "op", "write");
  apply_override(s, "size", "64,4096");
  apply_override(s, "rate", "50%,none,90%");  // the sweep's own flat-out point comes after a share
  const std::vector<TestConfig> points = expand(s);
  std::vector<std::string> names;
  for (const TestConfig& c : points) names.push_back(point_name(c));
  ASSERT_EQ(names.size(), 6u);
  for (size_t i : {0u, 3u}) {
    EXPECT_EQ(names[i].find("rate"), std::string::npos) << names[i];  // the twin, unpaced
    EXPECT_NE(names[i + 1].find("/rate:50%"), std::string::npos) << names[i + 1];
    EXPECT_NE(names[i + 2].find("/rate:90%"), std::string::npos) << names[i + 2];
    EXPECT_EQ(point_name(flat_out_twin(points[i + 1])), names[i]);  // its CQ may be smaller: not every message signaled
  }
  TestConfig c = paced("50%");
  c.knobs.arrivals = ArrivalProcess::Poisson;
  const TestConfig twin = flat_out_twin(c);
  EXPECT_EQ(twin.knobs.rate, kRateNone);
  EXPECT_EQ(twin.knobs.arrivals, ArrivalProcess::Constant);
  const TestConfig at = paced_at_share(c, 3e6);
  EXPECT_EQ(rate_string(at.knobs.rate), "1.5mpps");
  EXPECT_EQ(at.knobs.arrivals, ArrivalProcess::Poisson);
  try {
    paced_at_share(c, 0);
    FAIL() << "a share of nothing was paced";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(point_name(twin) + " gave no rate"), std::string::npos) << e.what();
  }
}

// A sweep of latency and paced bandwidth points (the load-latency chart's input) runs each
// latency point once, closed-loop; latency points alone with --rate stay refused.
TEST(Rate, ALatencyPointBesideAPacedSeriesRunsOnceClosedLoop) {
  SweepSpec s;
  apply_override(s, "op", "write");
  apply_override(s, "mode", "lat,bw");
  apply_override(s, "size", "64");
  apply_override(s, "rate", "10%:30%:+10%");
  apply_override(s, "arrivals", "constant,poisson");
  std::vector<std::string> names;
  for (const TestConfig& c : expand(s)) {
    names.push_back(point_name(c));
    if (c.work.mode == Mode::Lat) {
      EXPECT_EQ(c.knobs.rate, kRateNone);
      EXPECT_EQ(c.knobs.arrivals, ArrivalProcess::Constant);
    }
  }
  ASSERT_EQ(names.size(), 8u) << names.size();  // one latency point, the twin, 3 shares x 2 arrivals
  EXPECT_EQ(std::count_if(names.begin(), names.end(), [](const std::string& n) { return n.find("/lat/") != n.npos; }), 1);
  apply_override(s, "rate", "none,1mpps");  // the unpaced value makes the latency point itself
  apply_override(s, "arrivals", "constant");
  names.clear();
  for (const TestConfig& c : expand(s)) names.push_back(point_name(c));
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(std::count_if(names.begin(), names.end(), [](const std::string& n) { return n.find("/lat/") != n.npos; }), 1);
  apply_override(s, "mode", "lat");
  EXPECT_THROW(expand(s), ConfigError);
}

TEST(Rate, SweepsAsAListOrARangeInOneUnit) {
  SweepSpec s;
  apply_override(s, "rate", "1gbps:3gbps:+1gbps,500kpps");
  ASSERT_EQ(s.rate.size(), 4u);
  EXPECT_EQ(rate_string(s.rate[0]), "1gbps");
  EXPECT_EQ(rate_string(s.rate[2]), "3gbps");
  EXPECT_EQ(rate_string(s.rate[3]), "500kpps");
  apply_override(s, "rate", "100kpps:1mpps:x2");
  ASSERT_EQ(s.rate.size(), 4u);  // 100, 200, 400, 800 kpps
  EXPECT_EQ(rate_string(s.rate[3]), "800kpps");
  EXPECT_THROW(apply_override(s, "rate", "1gbps:2mpps:+1gbps"), ConfigError);
  EXPECT_THROW(apply_override(s, "rate", "1gbps:3gbps:+1mpps"), ConfigError);
  EXPECT_THROW(apply_override(s, "rate", "5"), ConfigError);
}

TEST(Rate, NamesItsPointsAndRoundTripsThroughJson) {
  TestConfig c = paced("2.5gbps");
  c.knobs.arrivals = ArrivalProcess::Poisson;
  EXPECT_NE(point_name(c).find("/rate:2.5gbps/arrivals:poisson"), std::string::npos) << point_name(c);
  nlohmann::json j = c;
  EXPECT_EQ(j["rate"], "2.5gbps");
  EXPECT_EQ(j["arrivals"], "poisson");
  TestConfig back = j.get<TestConfig>();
  EXPECT_EQ(point_name(back), point_name(c));
  EXPECT_EQ(point_name(TestConfig{}).find("rate"), std::string::npos);  // flat out: no tag
}

TEST(Rate, EveryPacedMessageIsSignaledAndTheCqSizedForIt) {
  TestConfig c = paced("1mpps");
  c.knobs.signal_every = 32;
  EXPECT_EQ(effective_signal_every(c), 1u);
  EXPECT_EQ(required_cq_entries(c), uint64_t{c.knobs.tx_depth});
  c.knobs.rate = kRateNone;
  EXPECT_EQ(effective_signal_every(c), 32u);
}

TEST(Rate, WhatCannotBePacedIsRefusedInOneLine) {
  auto refused = [](TestConfig c) {
    try {
      validate(c);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  TestConfig lat = paced("1mpps");
  lat.work.mode = Mode::Lat;
  EXPECT_NE(refused(lat).find("use --mode bw with --rate"), std::string::npos) << refused(lat);
  TestConfig chain = paced("1mpps");
  chain.knobs.post_list = 4;
  EXPECT_NE(refused(chain).find("--post-list must be 1"), std::string::npos) << refused(chain);
  TestConfig both = paced("1mpps");  // each direction paced at the rate
  both.knobs.bidir = true;
  EXPECT_EQ(refused(both), "");
  TestConfig poisson;
  poisson.knobs.arrivals = ArrivalProcess::Poisson;
  EXPECT_NE(refused(poisson).find("give --rate too"), std::string::npos) << refused(poisson);
  EXPECT_EQ(refused(paced("1mpps")), "");
}

TEST(PaceSchedule, ConstantGapsFromZero) {
  detail::PaceSchedule s(250.0, ArrivalProcess::Constant);
  for (int k = 0; k < 10; ++k) EXPECT_DOUBLE_EQ(s.next(), 250.0 * k);
}

TEST(PaceSchedule, PoissonGapsAreSeededExponentialWithTheExactMean) {
  detail::PaceSchedule a(1000.0, ArrivalProcess::Poisson), b(1000.0, ArrivalProcess::Poisson);
  std::vector<double> gaps;
  double last = a.next();
  EXPECT_EQ(last, b.next());
  for (size_t i = 0; i < detail::PaceSchedule::kPoissonGaps; ++i) {
    const double d = a.next();
    EXPECT_EQ(d, b.next());  // the same schedule every run
    gaps.push_back(d - last);
    last = d;
  }
  // One cycle of gaps spans exactly its count of mean gaps: the offered rate is the rate.
  EXPECT_NEAR(last, 1000.0 * detail::PaceSchedule::kPoissonGaps, 1e-6);
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
  double var = 0;
  for (double g : gaps) {
    EXPECT_GT(g, 0);
    var += (g - mean) * (g - mean);
  }
  const double cv = std::sqrt(var / static_cast<double>(gaps.size())) / mean;
  EXPECT_NEAR(cv, 1.0, 0.1);  // exponential: standard deviation = mean
}

// The fake device, and the time of every post.
struct Timed {
  FakeDevice& fake;
  std::vector<Clock::time_point> at;
  std::chrono::microseconds cost{0};  // each post takes at least this long (a slow loop)
  int post(uint32_t q, ibv_send_wr* w) {
    at.push_back(Clock::now());
    if (cost.count() > 0) std::this_thread::sleep_for(cost);
    return fake.post(q, w);
  }
  int poll(int n, ibv_wc* wc) { return fake.poll(n, wc); }
  uint32_t recv(const ibv_wc& wc) { return fake.recv(wc); }
};

struct PacedRun {
  detail::PacedPlan p;
  std::vector<SendQueue> sq;
  detail::SendWrs wrs;
  RunControl ctl;
  FakeDevice::Options dev;
  PacedRun(uint32_t nqp, uint32_t depth, uint64_t per_qp, double gap_ns, ArrivalProcess a = ArrivalProcess::Constant)
      : sq(nqp), wrs(nqp, 1, IBV_WR_RDMA_WRITE, 0) {
    p.nqp = nqp;
    p.depth = depth;
    p.per_qp = per_qp;
    p.gap_ns = gap_ns;
    p.arrivals = a;
    ctl.idle_timeout = std::chrono::seconds(10);
    dev.nqp = nqp;
    dev.sq_depth = depth;
    dev.cq_depth = uint64_t{nqp} * depth;
  }
  PacedStats run(Timed& ops) {
    detail::IdleWatch watch(ctl);
    return detail::paced_initiator_loop(ops, wrs, sq, p, watch);
  }
};

TEST(PacedLoop, NeverPostsEarlyCountsEveryMessageAndSignalsEach) {
  for (ArrivalProcess a : {ArrivalProcess::Constant, ArrivalProcess::Poisson}) {
    SCOPED_TRACE(to_string(a));
    PacedRun r(3, 16, 100, 20000.0, a);  // 3 x 100 messages, one every 20 us
    FakeDevice fake(r.dev);
    Timed ops{fake, {}};
    PacedStats st = r.run(ops);
    ASSERT_EQ(ops.at.size(), 300u);
    detail::PaceSchedule due(r.p.gap_ns, a);
    double last = 0;
    for (size_t k = 0; k < ops.at.size(); ++k) {
      const auto at = std::chrono::duration<double, std::nano>(ops.at[k] - st.began).count();
      last = due.next();
      ASSERT_GE(at, last) << "message " << k << " posted " << last - at << " ns early";
    }
    // The schedule's own rate: its 300 messages over the 300 gaps they span.
    EXPECT_NEAR(st.offered_per_second, 300 / (due.next() * 1e-9), 1e-9 * st.offered_per_second);
    if (a == ArrivalProcess::Constant) {
      EXPECT_NEAR(st.offered_per_second, 50000.0, 1e-6 * 50000);
    }
    // The window runs from the first message's due time to the last completion.
    EXPECT_GE(st.seconds * 1e9, last);
    for (uint32_t q = 0; q < 3; ++q) {
      EXPECT_EQ(st.per_qp[q], 100u);
      EXPECT_EQ(fake.signaled(q), 100u);
    }
    EXPECT_EQ(fake.refused_posts, 0u);
    EXPECT_EQ(fake.cq_overruns, 0u);
    EXPECT_EQ(st.from_due.count(), 300u);
    EXPECT_EQ(st.from_post.count(), 300u);
  }
}

// --bidir SEND: the loop goes on until the peer's messages are in (each reposted and
// counted), but its window, timeline and latencies are its own messages' alone.
TEST(PacedLoop, BidirSendWaitsForThePeersMessagesPastItsOwnWindow) {
  PacedRun r(1, 16, 100, 200000.0);  // 100 messages, one every 200 us: about 20 ms
  r.p.interval = 0.005;
  FakeDevice fake(r.dev);
  LatePeer ops{fake, r.sq, 100, 10, std::chrono::milliseconds(150)};  // the peer's 10, 150 ms after ours
  Arrivals in = testing::awaiting(10);
  detail::IdleWatch watch(r.ctl);
  const Clock::time_point t0 = Clock::now();
  PacedStats st = detail::paced_initiator_loop(ops, r.wrs, r.sq, r.p, watch, &in);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(in.got[0], 10u);
  EXPECT_EQ(in.missing, 0u);
  EXPECT_EQ(st.per_qp[0], 100u);
  EXPECT_GE(took, st.seconds + 0.15);  // it waited, past its window, for the peer's
  EXPECT_EQ(st.from_due.count(), 100u);  // the peer's messages are no samples of ours
  ASSERT_FALSE(st.timeline.t.empty());
  for (double t : st.timeline.t) EXPECT_LE(t, st.seconds + 1e-9) << "a sample after the window";
}

// --bidir SEND's following end (await_peer): the schedule's clock starts once the
// leading end's first message is in, so nothing is posted, or due, before it.
TEST(PacedLoop, BidirFollowerStartsItsScheduleAtThePeersFirstMessage) {
  for (bool await : {false, true}) {
    SCOPED_TRACE(await ? "await_peer" : "leading");
    PacedRun r(1, 16, 50, 200000.0);  // 50 messages, one every 200 us
    r.p.await_peer = await;
    FakeDevice fake(r.dev);
    LaterPeer ops{fake, 10, std::chrono::milliseconds(50)};
    Arrivals in = testing::awaiting(10);
    detail::IdleWatch watch(r.ctl);
    PacedStats st = detail::paced_initiator_loop(ops, r.wrs, r.sq, r.p, watch, &in);
    EXPECT_EQ(in.got[0], 10u);
    EXPECT_EQ(st.per_qp[0], 50u);
    if (await) {
      EXPECT_EQ(ops.posts_before_first, 0u);
      EXPECT_GE(st.began, ops.first_arrival);
    } else {
      EXPECT_GT(ops.posts_before_first, 0u);
      EXPECT_LT(st.began, ops.first_arrival);
    }
  }
}

// A paced duration-mode point stops posting once wound up (client --beside's
// background), and ends with every message it posted completed and counted.
TEST(PacedLoop, AWoundUpDurationPointStopsPostingAndCountsWhatItPosted) {
  PacedRun r(2, 16, 0, 20000.0);  // one every 20 us
  r.p.duration = 30.0;
  std::atomic<bool> wind_up{false};
  r.ctl.wind_up = &wind_up;
  FakeDevice fake(r.dev);
  fake.raise_after(500, wind_up);
  Timed ops{fake, {}};
  PacedStats st = r.run(ops);
  EXPECT_LT(st.seconds, 30.0);
  EXPECT_GE(fake.posts, 500u);
  EXPECT_EQ(st.per_qp[0] + st.per_qp[1], fake.posts);
  EXPECT_EQ(st.from_due.count(), fake.posts);
}

// The measured window opens (RunControl::on_window: --progress-file's `measuring`)
// once, before the schedule's clock starts: nothing posted yet, every message due after.
TEST(PacedLoop, TheWindowOpensOnceBeforeTheFirstPost) {
  PacedRun r(2, 16, 40, 20000.0);
  FakeDevice fake(r.dev);
  std::vector<uint64_t> posts_then;
  r.ctl.on_window = [&] { posts_then.push_back(fake.posts); };
  Timed ops{fake, {}};
  PacedStats st = r.run(ops);
  ASSERT_EQ(posts_then.size(), 1u);
  EXPECT_EQ(posts_then[0], 0u);
  EXPECT_EQ(st.per_qp[0] + st.per_qp[1], 80u);
}

TEST(PacedLoop, AMessageWhoseQpIsFullIsPostedLateCountedAndNeverSkipped) {
  // One QP of 2 slots, each WR completing 200 us after the previous, messages due every
  // 20 us: the queue is full for most of the run, so the messages wait, late.
  PacedRun r(1, 2, 50, 20000.0);
  r.dev.delay = std::chrono::microseconds(200);
  FakeDevice fake(r.dev);
  Timed ops{fake, {}};
  PacedStats st = r.run(ops);
  EXPECT_EQ(st.per_qp[0], 50u);
  EXPECT_EQ(ops.at.size(), 50u);
  EXPECT_GE(st.late, 40u);
  EXPECT_GE(st.late_full, 40u);  // each of them found the QP full once due: the device held it
  EXPECT_LE(st.late_full, st.late);
  EXPECT_GE(st.late_max_ns, 40 * 180e3);  // the 50th waited for about 50 x 200 - 50 x 20 us
  // From due includes the wait for a slot; from post does not. Message k waits for the
  // completion of k - 2, at least (k - 2) x 200 us after the first post, and was due at
  // k x 20 us: about 4 ms late on average, however busy the machine.
  EXPECT_GT(st.from_due.mean() - st.from_post.mean(), 2e6);
  EXPECT_GE(st.from_due.max(), static_cast<uint64_t>(st.late_max_ns));
}

TEST(PacedLoop, AMessageLateWhileItsQpHadRoomIsTheLoopsNotTheDevices) {
  // Completions at once into a deep QP, but every post takes 100 us where messages are
  // due every 20 us: the loop falls behind with room in the queue all along.
  PacedRun r(1, 64, 50, 20000.0);
  FakeDevice fake(r.dev);
  Timed ops{fake, {}};
  ops.cost = std::chrono::microseconds(100);
  PacedStats st = r.run(ops);
  EXPECT_EQ(st.per_qp[0], 50u);
  EXPECT_GE(st.late, 40u);
  EXPECT_EQ(st.late_full, 0u);
}

TEST(PacedResult, FiguresSayTheScheduleHowItWasKeptAndBothLatencies) {
  PointResult r;
  r.cfg = paced("1mpps");
  r.seconds = 1;
  r.messages = 990;
  r.bytes = 990 * 64;
  r.per_qp = {990};
  r.paced = true;
  r.offered_per_second = 1000;
  r.late_posts = 2;
  r.late_posts_queue_full = 1;
  r.late_max_ns = 5000;
  r.late_sum_ns = 6000;
  r.hist.record(1000);
  r.hist.record(3000);
  r.posted_hist.emplace();
  r.posted_hist->record(500);
  std::map<std::string, double> f;
  for (const auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_DOUBLE_EQ(f.at("items_per_second"), 990);
  EXPECT_DOUBLE_EQ(f.at("offered_items_per_second"), 1000);
  EXPECT_DOUBLE_EQ(f.at("offered_bytes_per_second"), 64000);
  EXPECT_NEAR(f.at("pacing_error_pct"), -1.0, 1e-12);
  EXPECT_DOUBLE_EQ(f.at("late_posts"), 2);
  EXPECT_DOUBLE_EQ(f.at("late_posts_queue_full"), 1);
  EXPECT_DOUBLE_EQ(f.at("late_max_us"), 5);
  EXPECT_DOUBLE_EQ(f.at("late_mean_us"), 3);
  EXPECT_DOUBLE_EQ(f.at("lat_min_us"), 1);  // from due
  EXPECT_DOUBLE_EQ(f.at("lat_max_us"), 3);
  EXPECT_DOUBLE_EQ(f.at("posted_lat_max_us"), 0.5);  // from the post
  // The histogram record keeps both, and says what the latency runs from.
  const nlohmann::json rec = histogram_record({r});
  EXPECT_EQ(rec.at("histogram").at("count"), 2);
  EXPECT_EQ(rec.at("posted_histogram").at("count"), 1);
  EXPECT_NE(rec.at("latency_kind").get<std::string>().find("due"), std::string::npos);
  r.paced = false;
  f.clear();
  for (const auto& [k, v] : figures(r)) f[k] = v;
  EXPECT_EQ(f.count("pacing_error_pct") + f.count("lat_max_us") + f.count("posted_lat_max_us"), 0u);
}

}  // namespace
}  // namespace rdmasweep
