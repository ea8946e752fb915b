// The knob table (core/config/knob_table.hpp) against every place generated from it: each knob
// set away from its default must show in the point name, survive the TestConfig JSON
// and the sweep file (what results contexts record), reach the expanded point, and be
// set by its command-line flag, for the client and the mesh alike.
#include "core/config/knobs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/mesh/options.hpp"
#include "core/config/config.hpp"
#include "core/config/sweep.hpp"
#include "core/setup/sizing.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A value other than the default that still makes a valid point on its own.
uint64_t other_value(const Knob& k) {
  switch (k.kind) {
    case KnobKind::Op:
    case KnobKind::Mode:
    case KnobKind::Scope:
    case KnobKind::Transport:
    case KnobKind::Arrivals:
    case KnobKind::Flag: return k.def == 0 ? 1 : 0;
    case KnobKind::Inline: return k.def == kInlineAuto ? 64 : kInlineAuto;
    case KnobKind::Rate: return parse_rate("1mpps");
    default: return k.def == 0 ? std::min<uint64_t>(k.hi, 1u << 20) : k.def < k.hi ? k.def + 1 : k.def - 1;
  }
}

// The value as a command line or a sweep override spells it: "write", "64", "1".
std::string value_text(const Knob& k, uint64_t v) {
  if (k.kind == KnobKind::Flag) return std::to_string(v);
  json j = knob_json(k, v);
  return j.is_string() ? j.get<std::string>() : j.dump();
}

TestConfig with(const Knob& k, uint64_t v) {
  TestConfig c;
  k.set(c, v);
  return c;
}

TEST(Knobs, KeysAreUniqueAndTheNestingIsAPermutation) {
  std::set<std::string> keys, tags, flags;
  std::set<int> nests;
  for (const Knob& k : knobs()) {
    EXPECT_TRUE(keys.insert(k.key).second) << k.key;
    EXPECT_TRUE(flags.insert(knob_flag(k)).second) << k.key;
    if (k.tag) {
      EXPECT_TRUE(tags.insert(k.tag).second) << k.key;
    }
    EXPECT_TRUE(nests.insert(k.nest).second) << k.key;
    EXPECT_GE(k.nest, 0);
    EXPECT_LT(k.nest, static_cast<int>(kKnobCount));
    EXPECT_NE(other_value(k), k.def) << k.key;
    EXPECT_EQ(k.get(TestConfig{}), k.def) << k.key << ": the field's default is not the table's";
  }
}

TEST(Knobs, EachChangesThePointNameWithItsTag) {
  const std::string plain = point_name(TestConfig{});
  for (const Knob& k : knobs()) {
    uint64_t v = other_value(k);
    std::string name = point_name(with(k, v));
    EXPECT_NE(name, plain) << k.key;
    if (!k.tag) continue;
    std::string part = "/" + std::string(k.tag) + (k.kind == KnobKind::Flag ? "" : ":" + value_text(k, v));
    EXPECT_NE(name.find(part), std::string::npos) << k.key << ": " << name;
  }
}

// Names are compared against committed baselines: the table must keep them byte for byte.
TEST(Knobs, PointNamesKeepTheirSpelling) {
  TestConfig c;
  c.work.op = Op::Write;
  c.work.qps = 4;
  c.work.size = 4096;
  c.knobs = {};
  c.knobs.tx_depth = 256;
  c.knobs.rx_depth = 64;
  c.knobs.post_list = 4;
  c.knobs.signal_every = 16;
  c.knobs.inline_size = 0;
  c.knobs.outs = 8;
  c.knobs.poll_batch = 32;
  c.knobs.events = true;
  EXPECT_EQ(point_name(c), "write/bw/qps:4/size:4096/cq:64/tx:256/rx:64/post:4/signal:16/inline:0/outs:8/poll:32/events");
  TestConfig s;
  s.work.mode = Mode::Lat;
  s.knobs.srq = true;
  s.knobs.cq_depth = 9000;
  EXPECT_EQ(point_name(s), "send/lat/qps:1/size:65536/cq:9000/srq");
}

TEST(Knobs, EachSurvivesTheTestConfigJson) {
  json plain = TestConfig{};
  EXPECT_EQ(plain.size(), kKnobCount + 3);  // + iters, duration, warmup
  for (const Knob& k : knobs()) {
    uint64_t v = other_value(k);
    json j = with(k, v);
    ASSERT_TRUE(j.contains(k.key)) << k.key;
    EXPECT_NE(j[k.key], plain[k.key]) << k.key;
    TestConfig back;
    from_json(j, back);
    EXPECT_EQ(k.get(back), v) << k.key;
    EXPECT_EQ(json(back), j) << k.key;
  }
}

// What results contexts record ("sweep": sweep_json, client and mesh alike).
TEST(Knobs, EachSurvivesTheSweepFileAndReachesThePoint) {
  for (const Knob& k : knobs()) {
    uint64_t v = other_value(k);
    SweepSpec s;
    apply_override(s, k.key, value_text(k, v));
    if (std::string(k.key) == "arrivals") apply_override(s, "rate", "1mpps");  // a schedule needs a rate
    EXPECT_EQ(k.axis(s), std::vector<uint64_t>{v}) << k.key;
    json j = sweep_json(s);
    ASSERT_TRUE(j.contains(k.key)) << k.key;
    EXPECT_NE(j[k.key], sweep_json(SweepSpec{})[k.key]) << k.key;
    SweepSpec back;
    apply_json(back, j);
    EXPECT_EQ(k.axis(back), std::vector<uint64_t>{v}) << k.key;
    std::vector<TestConfig> points = expand(back);
    ASSERT_EQ(points.size(), 1u) << k.key;
    EXPECT_EQ(k.get(points[0]), v) << k.key;
  }
  std::vector<std::string> axes = sweep_axes();
  EXPECT_EQ(axes.size(), kKnobCount);
  for (const Knob& k : knobs()) EXPECT_EQ(axes.at(static_cast<size_t>(k.nest)), k.key);
}

TEST(Knobs, OnlyShapingKnobsSplitTheVerbsObjects) {
  for (const Knob& k : knobs()) {
    TestConfig a, b = with(k, other_value(k));
    EXPECT_EQ(same_shape(a, b), !k.shapes) << k.key;
  }
}

TEST(Knobs, RangesAreChecked) {
  for (const Knob& k : knobs()) {
    if (k.hi >= 0xffffffffu || k.kind == KnobKind::Flag) continue;
    TestConfig c = with(k, k.hi + 1);
    try {
      validate(c);
      ADD_FAILURE() << k.key << " " << k.hi + 1 << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(k.key, 0), 0u) << e.what();
    }
  }
}

// argv for a parser: the command's name first.
template <class Parse>
auto parse(Parse p, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::string help;
  return p(static_cast<int>(argv.size()), argv.data(), &help);
}

TEST(Knobs, EachFlagSetsItForTheClient) {
  for (const Knob& k : knobs()) {
    uint64_t v = other_value(k);
    std::vector<std::string> args = {"client", "host", knob_flag(k)};
    if (!(k.kind == KnobKind::Flag && v == 1)) args.push_back(value_text(k, v));  // --srq alone means 1
    cli::ClientOptions o = parse(cli::parse_client, args);
    EXPECT_EQ(k.axis(o.spec), std::vector<uint64_t>{v}) << k.key;
  }
}

// --cm (perftest's -R): the QPs' address defaults to the host; --cm-address alone,
// or --cm with a GID index (the GID then comes from routing), is refused.
TEST(Knobs, CmOptionsOfTheClient) {
  cli::ClientOptions o = parse(cli::parse_client, {"client", "host", "-R"});
  EXPECT_TRUE(o.cm);
  EXPECT_EQ(o.cm_address, "host");
  o = parse(cli::parse_client, {"client", "host", "--cm", "--cm-address", "192.0.2.1"});
  EXPECT_EQ(o.cm_address, "192.0.2.1");
  EXPECT_FALSE(parse(cli::parse_client, {"client", "host"}).cm);
  EXPECT_THROW(parse(cli::parse_client, {"client", "host", "--cm-address", "192.0.2.1"}), cli::UsageError);
  EXPECT_THROW(parse(cli::parse_client, {"client", "host", "--cm", "-x", "1"}), cli::UsageError);
  EXPECT_TRUE(parse(cli::parse_server, {"server", "-R"}).cm);
  EXPECT_FALSE(parse(cli::parse_server, {"server"}).cm);
}

// --label KEY=VALUE (repeatable) for the context's "labels"; a malformed or repeated
// key is refused in one line.
TEST(Knobs, LabelsOfTheClient) {
  cli::ClientOptions o =
      parse(cli::parse_client, {"client", "host", "--label", "commit=abc=1", "--label", "run.id=42", "--label", "x="});
  EXPECT_EQ(o.labels, (std::map<std::string, std::string>{{"commit", "abc=1"}, {"run.id", "42"}, {"x", ""}}));
  EXPECT_TRUE(parse(cli::parse_client, {"client", "host"}).labels.empty());
  for (const char* bad : {"commit", "=v", "a b=1"})
    EXPECT_THROW(parse(cli::parse_client, {"client", "host", "--label", bad}), cli::UsageError) << bad;
  EXPECT_THROW(parse(cli::parse_client, {"client", "host", "--label", "a=1", "--label", "a=2"}), cli::UsageError);
}

// Every knob's flag, loop knobs and --op/--mode/--qps/--size alike: the mesh's
// options come from the same table as the client's.
TEST(Knobs, EachKnobFlagSetsItForTheMesh) {
  for (const Knob& k : knobs()) {
    if (k.kind == KnobKind::Transport) continue;  // the mesh runs RC only (below)
    uint64_t v = other_value(k);
    auto p = [](int argc, char** argv, std::string* help) { return mesh_detail::parse_mesh(argc, argv, help, true); };
    // Refused, naming what to use: --bidir (a mesh flow's far end only answers) and a
    // --rate share of the flat-out rate (each flow is paced at an absolute rate).
    for (auto [key, value, fix] : {std::tuple{"bidir", value_text(k, v), "--pattern all-to-all"},
                                   std::tuple{"rate", std::string("50%"), "the client's alone"}}) {
      if (std::string(k.key) != key) continue;
      try {
        parse(p, {"mesh", knob_flag(k), value});
        ADD_FAILURE() << "mesh took " << knob_flag(k) << " " << value;
      } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find(fix), std::string::npos) << e.what();
      }
    }
    if (std::string(k.key) == "bidir") continue;
    mesh_detail::MeshOptions o = parse(p, {"mesh", knob_flag(k), value_text(k, v)});
    EXPECT_EQ(k.axis(o.spec), std::vector<uint64_t>{v}) << k.key;
  }
}

// The fabric options are one set: every command that opens a device takes the same
// spelling into the same FabricConfig, and refuses the same bad values alike.
TEST(Knobs, FabricOptionsAreOneSetInEveryCommand) {
  const std::vector<std::string> given = {"-d", "mlx5_1", "-x", "3", "-i", "2", "--timeout", "7"};
  auto with_given = [&](std::vector<std::string> head) {
    head.insert(head.end(), given.begin(), given.end());
    return head;
  };
  auto mesh = [](int argc, char** argv, std::string* help) { return mesh_detail::parse_mesh(argc, argv, help, false); };
  auto fabric_of = [](const auto& options) { return std::pair{options.fabric, options.timeout_s}; };
  std::vector<std::pair<FabricConfig, int>> seen = {
      fabric_of(parse(cli::parse_client, with_given({"client", "host"}))),
      fabric_of(parse(cli::parse_server, with_given({"server"}))),
      fabric_of(parse(cli::parse_doctor, with_given({"doctor"}))),
      fabric_of(parse(cli::parse_hunt, with_given({"hunt", "host"}))),
      fabric_of(parse(mesh, with_given({"mesh"})))};
  for (const auto& [f, timeout] : seen) {
    EXPECT_EQ(f.device, "mlx5_1");
    EXPECT_EQ(f.gid_index, 3);
    EXPECT_EQ(f.port, 2);
    EXPECT_EQ(timeout, 7);
  }
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"-i", "0"}, {"-x", "-2"}, {"--timeout", "0"}}) {
    std::vector<std::string> messages;
    for (std::vector<std::string> head : {std::vector<std::string>{"client", "host"}, {"server"}, {"mesh"}}) {
      head.insert(head.end(), bad.begin(), bad.end());
      try {
        if (head[0] == "client") parse(cli::parse_client, head);
        else if (head[0] == "server") parse(cli::parse_server, head);
        else parse(mesh, head);
        ADD_FAILURE() << head[0] << " took " << bad[0] << " " << bad[1];
      } catch (const cli::UsageError& e) {
        messages.push_back(e.what());
      }
    }
    ASSERT_EQ(messages.size(), 3u);
    EXPECT_EQ(messages[0], messages[1]);
    EXPECT_EQ(messages[0], messages[2]);
  }
}

TEST(Knobs, TheMeshRefusesUdInOneLine) {
  auto p = [](int argc, char** argv, std::string* help) { return mesh_detail::parse_mesh(argc, argv, help, true); };
  EXPECT_EQ(parse(p, {"mesh", "--transport", "rc"}).spec.transport, std::vector<std::string>{"rc"});
  try {
    parse(p, {"mesh", "--transport", "rc,ud"});
    ADD_FAILURE() << "--transport ud accepted by the mesh";
  } catch (const cli::UsageError& e) {
    EXPECT_STREQ(e.what(), "--transport ud: mesh runs RC only; measure UD with rdmasweep client");
  }
}

// Each mesh command line refused in one line naming `why`.
static void expect_refused_in_one_line(const std::vector<std::pair<std::vector<std::string>, std::string>>& refused) {
  auto p = [](int argc, char** argv, std::string* help) { return mesh_detail::parse_mesh(argc, argv, help, true); };
  for (const auto& [args, why] : refused) {
    try {
      parse(p, args);
      ADD_FAILURE() << "accepted: " << args.back();
    } catch (const cli::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

// --pattern multicast: UD SEND of 1 KiB unless told, the default group; a group that
// is not a multicast address, an op other than SEND, or a size below the datagram's
// header are refused in one line before anything runs.
TEST(Knobs, TheMeshMulticastDefaultsAndRefusals) {
  auto p = [](int argc, char** argv, std::string* help) { return mesh_detail::parse_mesh(argc, argv, help, true); };
  mesh_detail::MeshOptions o = parse(p, {"mesh", "--pattern", "multicast"});
  EXPECT_EQ(o.pattern, mesh_detail::Pattern::Multicast);
  EXPECT_EQ(o.spec.size, std::vector<uint64_t>{1024});
  EXPECT_EQ(o.spec.transport, std::vector<std::string>{"ud"});
  EXPECT_EQ(o.group, "239.255.82.1");
  o = parse(p, {"mesh", "--pattern", "multicast", "--group", "ff15::1", "-s", "64,512", "--mode", "bw,lat"});
  EXPECT_EQ(o.group, "ff15::1");
  EXPECT_EQ(o.spec.size, (std::vector<uint64_t>{64, 512}));
  EXPECT_EQ(o.spec.mode, (std::vector<std::string>{"bw", "lat"}));  // latency is one-way, sender to receiver
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"mesh", "--pattern", "multicast", "--group", "10.0.0.1"}, "not a numeric multicast address"},
      {{"mesh", "--pattern", "multicast", "--group", "nowhere"}, "not a numeric multicast address"},
      {{"mesh", "--pattern", "pairs", "--group", "239.1.1.1"}, "--group goes with --pattern multicast"},
      {{"mesh", "--pattern", "multicast", "--op", "write"}, "multicast sends"},
      {{"mesh", "--pattern", "multicast", "-s", "8"}, "below 16 bytes"},
      {{"mesh", "--pattern", "multicast", "-q", "2"}, "one QP and one thread"},
      {{"mesh", "--pattern", "multicast", "--duration", "1"}, "give --iters"},
      {{"mesh", "--pattern", "multicast", "--transport", "rc"}, "runs over UD"},
      {{"mesh", "--pattern", "multicast", "--validate", "1"}, "checks RC only"}};
  expect_refused_in_one_line(refused);
}

// --pattern victim: the background from --beside (every rank parses the same), latency
// points kept (the victim's pair is one link); what cannot be its background, and
// --beside without it, refused in one line.
TEST(Knobs, TheMeshVictimTakesItsBackgroundFromBeside) {
  auto p = [](int argc, char** argv, std::string* help) { return mesh_detail::parse_mesh(argc, argv, help, true); };
  mesh_detail::MeshOptions o =
      parse(p, {"mesh", "--pattern", "victim", "--mode", "lat,bw", "--beside", "op=write,mode=bw,qps=8,size=64k"});
  EXPECT_EQ(o.pattern, mesh_detail::Pattern::Victim);
  EXPECT_EQ(o.spec.mode, (std::vector<std::string>{"lat", "bw"}));
  ASSERT_TRUE(o.background.has_value());
  EXPECT_EQ(point_name(*o.background), point_name(background_point("op=write,mode=bw,qps=8,size=64k")));
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"mesh", "--pattern", "victim"}, "--pattern victim needs --beside KNOBS"},
      {{"mesh", "--pattern", "incast", "--beside", "op=write"}, "--beside goes with --pattern victim"},
      {{"mesh", "--pattern", "victim", "--beside", "op=write,mode=lat"}, "an RC bandwidth workload one way"},
      {{"mesh", "--pattern", "victim", "--beside", "op=send,bidir=1"}, "an RC bandwidth workload one way"},
      {{"mesh", "--pattern", "victim", "--beside", "qps=1,2"}, "is not KEY=VALUE"}};
  expect_refused_in_one_line(refused);
}

TEST(Knobs, HelpKnobsPrintsTheTable) {
  test::Outcome o = test::run({RDMASWEEP_BIN, "help", "--knobs"}, 10s);
  ASSERT_EQ(o.code, 0) << o.err;
  json table = json::parse(o.out);
  EXPECT_EQ(table, knobs_table_json());
  ASSERT_EQ(table.size(), kKnobCount);
  for (const json& row : table) {
    std::set<std::string> fields;
    for (const auto& [f, v] : row.items()) fields.insert(f);
    EXPECT_EQ(fields, (std::set<std::string>{"key", "tag", "flag", "default", "help"}));
  }
  const json op = {{"key", "op"}, {"tag", nullptr}, {"flag", "--op"}, {"default", "send"},
                   {"help", "send, write, read, or the 8-byte atomics cas (compare-and-swap) and faa (fetch-and-add) (default send)"}};
  EXPECT_EQ(table[0], op);
  std::map<std::string, json> by_key;
  for (const json& row : table) {
    const Knob& k = knob(row["key"].get<std::string>());
    EXPECT_EQ(row["default"], knob_json(k, k.def));
    by_key[k.key] = row;
  }
  EXPECT_EQ(by_key["inline_size"]["default"], "auto");
  EXPECT_EQ(by_key["srq"]["default"], false);
  EXPECT_EQ(by_key["tx_depth"]["tag"], "tx");
  EXPECT_EQ(by_key["tx_depth"]["flag"], "--tx-depth");
  EXPECT_EQ(by_key["tx_depth"]["default"], 128);
}

}  // namespace
}  // namespace rdmasweep

namespace rdmasweep {

// docs/usage.md's option table has a row for every knob of the table: a knob's docs
// line is part of what adding it costs.
TEST(Knobs, EveryKnobHasItsRowInTheUsageDoc) {
  std::ifstream in(std::string(RDMASWEEP_SOURCE_DIR) + "/docs/usage.md");
  ASSERT_TRUE(in) << "docs/usage.md not found";
  std::ostringstream text;
  text << in.rdbuf();
  std::set<std::string> rows;  // each table row's first cell
  std::istringstream lines(text.str());
  for (std::string l; std::getline(lines, l);)
    if (l.rfind("| `", 0) == 0) rows.insert(l.substr(0, l.find(" |", 2)));
  for (const Knob& k : knobs()) {
    const std::string flag = "--" + std::string(k.option).substr(0, std::string(k.option).find(','));
    const bool found = std::any_of(rows.begin(), rows.end(), [&](const std::string& cell) {
      const size_t at = cell.find(flag);
      const char after = at == std::string::npos || at + flag.size() >= cell.size() ? '\0' : cell[at + flag.size()];
      return after == '`' || after == ' ';  // `--flag` or `--flag VALUES`
    });
    EXPECT_TRUE(found) << flag << " (" << k.key << ") has no row in docs/usage.md's option table";
  }
}

}  // namespace rdmasweep
