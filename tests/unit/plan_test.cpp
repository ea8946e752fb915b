// A sweep's plan (bench/sweep_plan.hpp): the points as the run names them, the
// estimate from iterations, duration, warm-up and repetitions, each side's buffers
// from core's own sizing, the rates an earlier run's results give; and `client
// --plan` run for real, connecting nothing.
#include "bench/sweep_plan.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/config/knobs.hpp"
#include "core/config/sweep.hpp"
#include "core/point/beside.hpp"
#include "core/setup/sizing.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep {
namespace {

using namespace std::chrono_literals;

// Round figures, so each expected time below can be added up by hand.
PlanRates round_rates() {
  PlanRates r;
  r.start = 1;
  r.new_qps = 0.1;
  r.per_qp = 0.01;
  r.reused = 0.001;
  r.per_run = 0.05;
  r.per_message = 1e-3;
  r.bytes_per_second = 1e30;  // no payload time unless a test wants it
  r.round_trip = 2;
  return r;
}

SweepSpec write_sweep() {
  SweepSpec s;
  s.op = {"write"};
  s.size = {64, 4096};
  s.size_given = true;
  s.qps = {1, 4};
  return s;
}

TEST(SweepPlan, ListsEveryPointAsTheRunNamesItInItsOrder) {
  const std::vector<TestConfig> points = expand(write_sweep());
  SweepPlan p = plan_sweep(points, 1, PlanRates{});
  ASSERT_EQ(p.points.size(), 4u);
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(p.points[i].name, point_name(points[i]));
  // QPs are set up once per QP count: the second size runs on the first one's.
  EXPECT_TRUE(p.points[0].new_qps);
  EXPECT_FALSE(p.points[1].new_qps);
  EXPECT_TRUE(p.points[2].new_qps);
  EXPECT_FALSE(p.points[3].new_qps);
  const std::string text = plan_text(p);
  for (const PlannedPoint& pp : p.points) EXPECT_NE(text.find("\n" + pp.name + " "), std::string::npos) << text;
  EXPECT_NE(text.find("4 point(s) x 1 repetition(s), QPs set up 2 time(s)"), std::string::npos) << text;
}

TEST(SweepPlan, IterationPointsTakeTheirMessagesWarmupAndRepetitions) {
  SweepSpec s;
  s.qps = {2};
  s.iters = 100;
  s.warmup = 10;
  s.repetitions = 3;
  SweepPlan p = plan_sweep(expand(s), s.repetitions, round_rates());
  // 2 QPs x (100 + 10) messages x 3 runs.
  EXPECT_EQ(p.messages, 660u);
  EXPECT_NEAR(p.message_seconds, 0.66, 1e-9);
  EXPECT_NEAR(p.setup_seconds, 0.1 + 2 * 0.01 + 2 * 0.001, 1e-9);  // set up once, then reused twice
  EXPECT_NEAR(p.run_seconds, 3 * 0.05, 1e-9);
  EXPECT_NEAR(p.duration_seconds, 0, 1e-9);
  EXPECT_NEAR(p.seconds, 1 + 0.122 + 0.66 + 0.15, 1e-9);
  EXPECT_NEAR(p.points[0].seconds, p.seconds - 1, 1e-9);

  // A latency round trip counts as round_trip messages; a payload adds its bytes' time.
  s.mode = {"lat"};
  PlanRates r = round_rates();
  r.bytes_per_second = 65536 / 1e-3;  // a 64 KiB payload: one more millisecond
  s.size = {65536};
  s.size_given = true;
  SweepPlan lat = plan_sweep(expand(s), s.repetitions, r);
  EXPECT_NEAR(lat.message_seconds, 660 * 2 * (1e-3 + 1e-3), 1e-9);
}

TEST(SweepPlan, DurationPointsTakeTheirDurationAndWhatIsInFlight) {
  SweepSpec s;
  s.duration = 2;
  s.warmup = 10;
  s.tx_depth = {128};
  s.repetitions = 2;
  SweepPlan p = plan_sweep(expand(s), s.repetitions, round_rates());
  EXPECT_EQ(p.messages, 20u);  // only the warm-up is counted
  EXPECT_NEAR(p.message_seconds, 20e-3, 1e-9);
  // Each run: 2 s, then one send queue's worth (128 messages) completes.
  EXPECT_NEAR(p.duration_seconds, 2 * (2 + 128e-3), 1e-9);
  EXPECT_NEAR(p.seconds, 1 + (0.1 + 0.01 + 0.001) + 20e-3 + 2 * 2.128 + 2 * 0.05, 1e-9);
}

TEST(SweepPlan, BuffersAreWhatCoreSizesEachSideBy) {
  SweepSpec s;
  s.op = {"send", "read"};  // WRITE bandwidth cannot --validate
  s.mode = {"bw", "lat"};
  s.qps = {1, 4};
  s.size = {64, 4096};
  s.size_given = true;
  s.threads = {1, 2};
  s.validate = {0, 1};
  const std::vector<TestConfig> points = expand(s);
  const std::vector<uint64_t> slots = plan_slots(points);
  SweepPlan p = plan_sweep(points, 1, PlanRates{});
  uint64_t most = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    // Each point here is reused only by a smaller size of its shape, planned for the shape's largest.
    EXPECT_EQ(p.points[i].side_bytes, side_buffer_bytes(points[i], slots[i])) << p.points[i].name;
    most = std::max(most, p.points[i].side_bytes);
  }
  EXPECT_EQ(p.max_side_bytes, most);
  // By hand: a bandwidth point shares one region, sized for its shape's largest message
  // (4 KiB); latency gives each QP its own, and every thread has its own;
  // --validate's SEND one buffer per message in flight (the deeper queue: rx 512).
  int checked = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const TestConfig& c = points[i];
    const uint64_t threads = c.knobs.threads, qps = c.work.qps;
    const bool own_regions = c.work.mode == Mode::Lat || c.knobs.validate;
    const uint64_t slots_per_region = c.knobs.validate && c.work.op == Op::Send ? c.knobs.rx_depth : 1;
    EXPECT_EQ(p.points[i].side_bytes, 2 * 4096 * (own_regions ? qps : 1) * slots_per_region * threads) << p.points[i].name;
    ++checked;
  }
  EXPECT_EQ(checked, 64);
}

TEST(SweepPlan, DefaultRatesAreTheLabRunTheyCameFrom) {
  const PlanRates lab = rates_from_file(std::string(RDMASWEEP_SOURCE_DIR) + "/reports/fabric/rxe0.json");
  const PlanRates def;
  auto near = [](double got, double want) { return got > want * 0.85 && got < want * 1.15; };
  EXPECT_TRUE(near(lab.per_message, def.per_message)) << lab.per_message;
  EXPECT_TRUE(near(lab.bytes_per_second, def.bytes_per_second)) << lab.bytes_per_second;
  EXPECT_TRUE(near(lab.round_trip, def.round_trip)) << lab.round_trip;
  EXPECT_TRUE(near(lab.start, def.start)) << lab.start;
  EXPECT_TRUE(near(lab.per_run, def.per_run)) << lab.per_run;
  EXPECT_TRUE(near(lab.reused, def.reused)) << lab.reused;
  EXPECT_TRUE(near(lab.new_qps, def.new_qps)) << lab.new_qps;
  EXPECT_NE(lab.source.find("rxe0.json (72 runs on rxe0, rxe-lab)"), std::string::npos) << lab.source;
}

TEST(SweepPlan, RatesFromOneSizeScaleTheModel) {
  // One size cannot fit a line: the default shape, scaled to what was measured (here 10x).
  TestConfig c;
  c.work.size = 64;
  const double per = message_seconds(c, PlanRates{}) * 10;
  nlohmann::json cfg;
  to_json(cfg, c);
  nlohmann::json results = {{"context", nullptr},
                            {"benchmarks", {{{"run_type", "iteration"}, {"config", cfg}, {"seconds", per * 1000},
                                             {"messages", 1000}},
                                            {{"run_type", 5}},  // not an entry of ours: left out
                                            {{"run_type", "aggregate"}, {"config", cfg}}}}};
  PlanRates r = rates_from_results(results, "f.json");
  EXPECT_NEAR(message_seconds(c, r), per, per * 1e-9);
  EXPECT_EQ(r.source, "f.json (1 run on ?, ?)");
  // A plan from a file names it, and says nothing of Soft-RoCE's rates.
  const std::string text = plan_text(plan_sweep({c}, 1, r));
  EXPECT_NE(text.find("rates: f.json"), std::string::npos) << text;
  EXPECT_EQ(text.find("Soft-RoCE"), std::string::npos) << text;
  EXPECT_THROW(rates_from_results(nlohmann::json::object(), "f.json"), ConfigError);
  EXPECT_THROW(rates_from_results({{"benchmarks", nlohmann::json::array()}}, "f.json"), ConfigError);
  EXPECT_THROW(rates_from_file("/nonexistent/results.json"), ConfigError);
}

TEST(SweepPlan, LongRunLine) {
  SweepPlan p;
  p.points.resize(1932);
  p.repetitions = 3;
  p.seconds = 48.3 * 60;
  EXPECT_EQ(long_run_line(p), "rdmasweep: 1,932 points x 3 repetitions, about 48.3 min (--plan for details)");
  EXPECT_EQ(thousands(0), "0");
  EXPECT_EQ(thousands(999), "999");
  EXPECT_EQ(thousands(1000000), "1,000,000");
}

// A TCP listener on 127.0.0.1 that nobody should connect to.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ADD_FAILURE() << "listener: " << std::strerror(errno);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd_); }
  std::string port() const { return std::to_string(port_); }
  bool connected() const {
    int c = ::accept(fd_, nullptr, nullptr);
    if (c >= 0) ::close(c);
    return c >= 0;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(ClientPlan, PrintsThePointsAndConnectsNothing) {
  Listener server;  // where the client would connect: it must not
  const std::string bin = RDMASWEEP_BIN;
  test::Outcome o = test::run({bin, "client", "127.0.0.1", "--port", server.port(), "--timeout", "1", "--plan", "--op",
                               "write", "-s", "64,4096", "-q", "1,4"},
                              30s);
  EXPECT_EQ(o.code, 0) << test::both(o);
  for (const char* name : {"write/bw/qps:1/size:64/cq:4 ", "write/bw/qps:1/size:4096/cq:4 ",
                           "write/bw/qps:4/size:64/cq:16 ", "write/bw/qps:4/size:4096/cq:16 "})
    EXPECT_NE(o.out.find(std::string("\n") + name), std::string::npos) << name << "\n" << o.out;
  EXPECT_NE(o.out.find("estimated duration: "), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
  EXPECT_FALSE(server.connected());

  // doctor --config prints the same plan before its checks (which need a device here or not).
  test::Outcome d = test::run({bin, "doctor", "--op", "write", "-s", "64,4096", "-q", "1,4"}, 30s);
  EXPECT_EQ(d.out.rfind(o.out, 0), 0u) << test::both(d);
}

TEST(ClientPlan, BesideAddsEachPointsRowBesideTheBackgroundItsTimeAndBuffers) {
  Listener server;
  const std::string bin = RDMASWEEP_BIN;
  test::Outcome o = test::run({bin, "client", "127.0.0.1", "--port", server.port(), "--plan", "--op", "write", "-s",
                               "64", "-q", "1,4", "--repetitions", "2", "--beside", "op=write,mode=bw,qps=8,size=64k"},
                              30s);
  EXPECT_EQ(o.code, 0) << test::both(o);
  SweepSpec spec;
  apply_override(spec, "op", "write");
  apply_override(spec, "size", "64");
  apply_override(spec, "qps", "1,4");
  double extra = 0;
  for (const TestConfig& c : expand(spec)) extra += 2 * background_seconds(measuring_seconds(c, PlanRates{}));
  const TestConfig bg = background_point("op=write,mode=bw,qps=8,size=64k");
  const std::string line = "--beside: each point runs again as NAME/beside, while the background " + point_name(bg) +
                           " runs on a connection and QPs of its own until the point ends: about " +
                           human_seconds(extra) + " more if the point runs 10x slower beside it than alone, and " +
                           human_bytes(static_cast<double>(plan_sweep({bg}, 1, PlanRates{}).max_side_bytes)) +
                           " more buffers on each side while it runs\n";
  EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  EXPECT_FALSE(server.connected());
}

}  // namespace
}  // namespace rdmasweep
