// The table of combinations that cannot run (core/config/refusals.hpp): each row refuses the
// point it describes with its own words, the option pairs take theirs from it too,
// `help --refusals` prints it, and docs/usage.md's list is the table as rendered.
#include "core/config/refusals.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "core/config/config.hpp"
#include "core/config/sweep.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep {
namespace {

using namespace std::chrono_literals;

// One point per row that only that row's rule (among the table's) refuses.
std::map<std::string, std::pair<TestConfig, PointContext>> triggers() {
  std::map<std::string, std::pair<TestConfig, PointContext>> t;
  auto add = [&](const char* id, auto set, PointContext x = {}) {
    TestConfig c;
    set(c);
    t[id] = {c, x};
  };
  add("post-list-depth", [](TestConfig& c) { c.knobs.tx_depth = 8, c.knobs.signal_every = 1, c.knobs.post_list = 9; });
  add("signal-window", [](TestConfig& c) { c.knobs.tx_depth = 16, c.knobs.post_list = 4, c.knobs.signal_every = 16; });
  add("srq-op", [](TestConfig& c) { c.knobs.srq = true, c.work.op = Op::Write; });
  add("atomic-size", [](TestConfig& c) { c.work.op = Op::Faa; });
  add("ud-op", [](TestConfig& c) { c.knobs.transport = Transport::Ud, c.work.op = Op::Read, c.work.size = 64; });
  add("ud-size", [](TestConfig& c) { c.knobs.transport = Transport::Ud, c.knobs.mtu = 1024, c.work.size = 8192; });
  add("cq-depth", [](TestConfig& c) { c.work.qps = 4, c.knobs.cq_depth = 8; });
  add("bidir-lat", [](TestConfig& c) { c.knobs.bidir = true, c.work.mode = Mode::Lat; });
  add("bidir-ud", [](TestConfig& c) { c.knobs.bidir = true, c.knobs.transport = Transport::Ud, c.work.size = 64; });
  add("bidir-send-duration", [](TestConfig& c) { c.knobs.bidir = true, c.work.duration = 1; });
  add("validate-atomic", [](TestConfig& c) { c.knobs.validate = true, c.work.op = Op::Cas, c.work.size = 8; });
  add("validate-ud", [](TestConfig& c) { c.knobs.validate = true, c.knobs.transport = Transport::Ud, c.work.size = 64; });
  add("validate-bidir", [](TestConfig& c) { c.knobs.validate = true, c.knobs.bidir = true; });
  add("validate-write-bw", [](TestConfig& c) { c.knobs.validate = true, c.work.op = Op::Write; });
  add("events-shared-cq",
      [](TestConfig& c) { c.knobs.events = true, c.knobs.threads = 2, c.knobs.cq_scope = CqScope::Process; });
  add("rate-lat", [](TestConfig& c) { c.knobs.rate = parse_rate("1gbps"), c.work.mode = Mode::Lat; });
  add("rate-post-list", [](TestConfig& c) { c.knobs.rate = parse_rate("1gbps"), c.knobs.post_list = 4; });
  add("rate-bidir", [](TestConfig& c) { c.knobs.rate = parse_rate("1gbps"), c.knobs.bidir = true; });
  add("arrivals-rate", [](TestConfig& c) { c.knobs.arrivals = ArrivalProcess::Poisson; });
  add("cm-ud", [](TestConfig& c) { c.knobs.transport = Transport::Ud, c.work.size = 64; }, PointContext{true});
  return t;
}

std::string error_of(const TestConfig& c, const PointContext& x) {
  try {
    validate(c, x);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Refusals, EachRowRefusesItsPointWithItsOwnWords) {
  const auto t = triggers();
  for (const Refusal& r : refusals()) {
    SCOPED_TRACE(r.id);
    if (!r.refuses) continue;
    ASSERT_TRUE(t.count(r.id)) << "add a point this row refuses to triggers()";
    const auto& [c, x] = t.at(r.id);
    EXPECT_TRUE(r.refuses(c, x));
    EXPECT_EQ(error_of(c, x), refusal_text(r, c));
    EXPECT_EQ(refusal_text(r, c).find('{'), std::string::npos) << refusal_text(r, c);
    // Without the combination the same knobs run: undo the point's context or see it pass.
    if (x.cm) {
      EXPECT_EQ(error_of(c, PointContext{}), "");
    }
  }
  EXPECT_EQ(error_of(TestConfig{}, PointContext{true}), "");
}

TEST(Refusals, TheWordsTheTestsAndUsersKnow) {
  const auto t = triggers();
  auto text = [&](const char* id) { return error_of(t.at(id).first, t.at(id).second); };
  EXPECT_EQ(text("atomic-size"), "faa: an atomic moves 8 bytes: --size 65536 must be 8 (a sweep does this itself)");
  EXPECT_EQ(text("ud-op"), "transport: ud carries SEND only; --op read needs --transport rc");
  EXPECT_EQ(text("cq-depth").rfind("cq_depth: 8 cannot hold the ", 0), 0u) << text("cq-depth");
  EXPECT_NE(text("signal-window").find("(17)"), std::string::npos) << text("signal-window");
}

TEST(Refusals, RowsAreOneLineWithStableIds) {
  std::set<std::string> ids;
  for (const Refusal& r : refusals()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    for (const char* s : {r.knobs, r.when, r.reason}) {
      EXPECT_EQ(std::string(s).find('\n'), std::string::npos) << r.id;
      EXPECT_EQ(std::string(s).find('|'), std::string::npos) << r.id << ": breaks the Markdown table";
    }
    EXPECT_NO_THROW(refusal_text(r, TestConfig{})) << r.id << ": a {key} that is no knob";
  }
}

// --srq with no SEND in the sweep used to expand to no point at all (the client then
// connected, ran nothing and failed); it is refused by the table's row instead.
TEST(Refusals, SrqWithoutSendIsRefusedNotEmpty) {
  SweepSpec s;
  s.srq = {1};
  s.op = {"write"};
  try {
    std::vector<TestConfig> points = expand(s);
    ADD_FAILURE() << "expanded to " << points.size() << " points";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(refusal_text("srq-op")), std::string::npos) << e.what();
  }
  s.op = {"send", "write"};
  EXPECT_EQ(expand(s).size(), 1u);  // a sweep over ops still skips SRQ where it does not apply
  s.op = {"write"};
  s.srq = {0, 1};
  EXPECT_EQ(expand(s).size(), 1u);
}

template <class Parse>
std::string usage_error(Parse p, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::string help;
  try {
    p(static_cast<int>(argv.size()), argv.data(), &help);
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Refusals, OptionPairsTakeTheTablesWords) {
  EXPECT_EQ(usage_error(cli::parse_client, {"client", "h", "--cm-address", "a"}), refusal_text("cm-address"));
  EXPECT_EQ(usage_error(cli::parse_client, {"client", "h", "--cm", "-x", "1"}), refusal_text("cm-gid"));
  EXPECT_EQ(usage_error(cli::parse_client, {"client", "h", "-n", "1", "-D", "1"}), refusal_text("iters-duration"));
  EXPECT_EQ(usage_error(cli::parse_client, {"client", "h", "--format", "perftest", "--multicast", "239.1.2.3"}),
            refusal_text("format-multicast"));
  EXPECT_EQ(usage_error(cli::parse_client, {"client", "h", "--format", "csv"}),
            "--format: 'csv' is not one of table, perftest");
  // --cm with UD is a point's refusal: the client expands its sweep with its context.
  cli::ClientOptions o;
  o.spec.transport = {"ud"};
  o.spec.size = {64};
  o.spec.size_given = true;
  EXPECT_THROW(expand(o.spec, PointContext{true}), ConfigError);
  EXPECT_EQ(expand(o.spec).size(), 1u);
}

TEST(Refusals, HelpPrintsTheTable) {
  test::Outcome o = test::run({RDMASWEEP_BIN, "help", "--refusals"}, 10s);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out), refusals_json());
  EXPECT_EQ(refusals_json().size(), refusals().size());
}

// docs/usage.md holds the table between two marker lines; `rdmasweep help
// --refusals-md` prints what belongs there.
TEST(Refusals, UsageDocListsExactlyTheTable) {
  std::ifstream in(std::string(RDMASWEEP_SOURCE_DIR) + "/docs/usage.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- refusals: generated by `rdmasweep help --refusals-md` -->\n";
  const std::string end = "<!-- end refusals -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/usage.md lacks the line " << begin;
  ASSERT_NE(e, std::string::npos) << "docs/usage.md lacks the line " << end;
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), refusals_markdown())
      << "docs/usage.md's cannot-combine table differs from core/config/refusals.cpp: paste `rdmasweep help --refusals-md` "
         "between its markers";
}

}  // namespace
}  // namespace rdmasweep
