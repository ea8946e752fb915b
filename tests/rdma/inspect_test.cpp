// What the tool shows about the fabric, checked against the device itself:
// `rdmasweep devices` (limits, ports, GID table, the GID it would pick) and
// `--verbose` (every QP's state and attributes after connection, on both sides).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <unistd.h>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/host/counters.hpp"
#include "core/verbs/device.hpp"
#include "core/verbs/gid.hpp"
#include "tests/support/process.hpp"

namespace rdmasweep::test {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(Devices, JsonAndTableMatchTheDevice) {
  REQUIRE_DEVICE();
  Outcome o = run({kBin, "devices", "--json"}, 60s);
  ASSERT_EQ(o.code, 0) << o.err;
  json all = json::parse(o.out, nullptr, false);
  ASSERT_TRUE(all.is_array()) << o.out;
  std::vector<std::string> names = verbs::list_devices();
  ASSERT_EQ(all.size(), names.size());
  for (const json& d : all) {
    SCOPED_TRACE(d["name"].get<std::string>());
    verbs::Device dev = verbs::Device::open(d["name"], 1);
    EXPECT_EQ(d["max_qp"], dev.attr().max_qp);
    EXPECT_EQ(d["max_qp_wr"], dev.attr().max_qp_wr);
    EXPECT_EQ(d["max_cqe"], dev.attr().max_cqe);
    EXPECT_EQ(d["max_srq_wr"], dev.attr().max_srq_wr);
    EXPECT_EQ(d["max_inline"], dev.max_inline());
    // What it is and can do, from the device: its transport type and attributes.
    EXPECT_EQ(d["transport"], dev.is_iwarp() ? "iWARP" : dev.is_ethernet() ? "RoCE" : "InfiniBand");
    EXPECT_EQ(d["capabilities"]["atomics"], dev.attr().atomic_cap != IBV_ATOMIC_NONE);
    EXPECT_EQ(d["capabilities"]["ud"], !dev.is_iwarp());
    EXPECT_EQ(d["capabilities"]["max_inline"], dev.max_inline());
    ASSERT_EQ(d["ports"].size(), dev.attr().phys_port_cnt);
    const json& p = d["ports"][0];
    EXPECT_EQ(p["state"], verbs::port_state_name(dev.port_attr().state));
    EXPECT_EQ(p["link_layer"], verbs::link_layer_name(dev.port_attr().link_layer));
    EXPECT_EQ(p["active_mtu"], verbs::mtu_bytes(dev.port_attr().active_mtu));
    // The GID table as the device has it, and exactly the entry a run would use marked.
    std::vector<GidEntry> table = gid_table(dev);
    ASSERT_EQ(p["gids"].size(), table.size());
    int marked = -1, count = 0;
    for (size_t i = 0; i < table.size(); ++i) {
      const json& g = p["gids"][i];
      EXPECT_EQ(g["index"], table[i].index);
      EXPECT_EQ(g["gid"], gid_to_string(table[i].gid));
      EXPECT_TRUE(dev.is_iwarp() ? g["type"] == "iWARP" : g["type"] == "IB" || g["type"] == "RoCE v1" || g["type"] == "RoCE v2")
          << g;
      if (g["default"].get<bool>()) marked = g["index"], ++count;
    }
    if (!table.empty()) {
      EXPECT_EQ(count, 1);
      EXPECT_EQ(marked, select_gid(dev, -1).index);
    }
    // The counters the port has, by the names a sweep records them under.
    PortCounters pc = PortCounters::open(dev.name(), 1);
    if (pc.available()) {
      ASSERT_TRUE(p["counters"].is_object()) << p;
      std::vector<std::string> listed;
      for (const auto& [k, v] : p["counters"].items()) listed.push_back(k);
      EXPECT_EQ(listed, pc.names());
    } else {
      EXPECT_TRUE(p["counters"].is_null()) << p;
    }
  }
  // The table for people says the same, with the picked entry starred.
  Outcome t = run({kBin, "devices"}, 60s);
  ASSERT_EQ(t.code, 0) << t.err;
  verbs::Device first = verbs::Device::open("", 1);
  EXPECT_NE(t.out.find(first.name() + "  firmware"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("max_qp_wr " + std::to_string(first.attr().max_qp_wr)), std::string::npos) << t.out;
  EXPECT_TRUE(std::regex_search(t.out, std::regex("\\* GID " + std::to_string(select_gid(first, -1).index) + " ")))
      << t.out;
  EXPECT_NE(t.out.find("    counters"), std::string::npos) << t.out;
}

// One "QP i qpn N: state S, ..., dest qpn M, ..., timeout T, retry R, ..., sgid index G,
// traffic class T, sl S, flow label F" line per QP.
struct QpLine {
  std::string state;
  unsigned qpn, dest, mtu, sgid, tclass, sl, flow, timeout, retry;
};
static std::map<unsigned, QpLine> qp_lines(const std::string& log) {
  std::map<unsigned, QpLine> out;
  std::regex re("QP ([0-9]+) qpn ([0-9]+): state ([A-Z]+), path MTU ([0-9]+), dest qpn ([0-9]+),.*sgid index ([0-9]+), "
                "traffic class ([0-9]+), sl ([0-9]+), flow label ([0-9]+)");
  std::regex retries("timeout ([0-9]+), retry ([0-9]+),");
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    auto num = [&](int i) { return static_cast<unsigned>(std::stoul(m[i])); };
    QpLine l{m[3], num(2), num(5), num(4), num(6), num(7), num(8), num(9), 0, 0};
    if (std::regex_search(line, m, retries)) {
      l.timeout = num(1);
      l.retry = num(2);
    }
    out[static_cast<unsigned>(std::stoul(line.substr(line.find("QP ") + 3)))] = l;
  }
  return out;
}

// Where verbose_run's client writes its results: one file a process, since two tests
// of this suite run at once (tools/rdma-tests), and a shared name let one read the
// other's point.
static std::string verbose_out() { return "/tmp/rdmasweep-verbose-" + std::to_string(::getpid()) + ".json"; }

// A client run with -v (plus `extra`) against a -v --once server: each side's QP lines.
static void verbose_run(const std::vector<std::string>& extra, std::map<unsigned, QpLine>* mine,
                        std::map<unsigned, QpLine>* theirs) {
  Process server({kBin, "server", "--port", "0", "--bind", "127.0.0.1", "-v", "--once"});
  std::string line = server.wait_for_stderr("listening on", 60s);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(":([0-9]+),"))) << server.err();
  std::vector<std::string> argv = {kBin, "client", "127.0.0.1", "--port", m[1], "-v", "--no-progress", "--op", "write",
                                   "-q", "3", "-s", "64", "-n", "10", "--out", verbose_out()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Outcome c = run(argv, 120s);
  ASSERT_EQ(c.code, 0) << c.err;
  ASSERT_EQ(server.wait(30s), 0) << server.err();
  *mine = qp_lines(c.err);
  *theirs = qp_lines(server.err());
  ASSERT_EQ(mine->size(), 3u) << c.err;
  ASSERT_EQ(theirs->size(), 3u) << server.err();
}

TEST(Verbose, EveryQpsStateAndPeerOnBothSides) {
  REQUIRE_DEVICE();
  std::map<unsigned, QpLine> mine, theirs;
  ASSERT_NO_FATAL_FAILURE(verbose_run({}, &mine, &theirs));
  verbs::Device dev = verbs::Device::open("", 1);
  unsigned gid = static_cast<unsigned>(select_gid(dev, -1).index);
  for (unsigned q = 0; q < 3; ++q) {
    SCOPED_TRACE("QP " + std::to_string(q));
    EXPECT_EQ(mine[q].state, "RTS");
    EXPECT_EQ(theirs[q].state, "RTS");
    EXPECT_EQ(mine[q].dest, theirs[q].qpn);  // each QP is connected to its partner
    EXPECT_EQ(theirs[q].dest, mine[q].qpn);
    EXPECT_EQ(mine[q].mtu, static_cast<unsigned>(verbs::mtu_bytes(dev.port_attr().active_mtu)));
    if (dev.is_ethernet()) {
      EXPECT_EQ(mine[q].sgid, gid);
    }
    EXPECT_EQ(mine[q].tclass + mine[q].sl + mine[q].flow, 0u);  // the defaults
    EXPECT_EQ(mine[q].timeout, 14u);
    EXPECT_EQ(mine[q].retry, 7u);
  }
}

// --tclass, --sl, --flow-label, --mtu, --qp-timeout and --retry-count reach every QP of
// both sides (the server follows the client's point), as ibv_query_qp reports them. RoCE packets carry no
// SL: Soft-RoCE keeps none, so it is checked on InfiniBand only.
TEST(Verbose, PathAttributesOnEveryQpOfBothSides) {
  REQUIRE_DEVICE();
  const bool roce = verbs::Device::open("", 1).is_ethernet();
  std::map<unsigned, QpLine> mine, theirs;
  ASSERT_NO_FATAL_FAILURE(
      verbose_run({"--tclass", "96", "--sl", "3", "--flow-label", "77", "--mtu", "512", "--qp-timeout", "18",
                   "--retry-count", "5"},
                  &mine, &theirs));
  for (auto* side : {&mine, &theirs})
    for (const auto& [q, l] : *side) {
      SCOPED_TRACE((side == &mine ? "client QP " : "server QP ") + std::to_string(q));
      EXPECT_EQ(l.state, "RTS");
      EXPECT_EQ(l.mtu, 512u);
      EXPECT_EQ(l.tclass, 96u);
      if (!roce) {
        EXPECT_EQ(l.sl, 3u);
      }
      EXPECT_EQ(l.flow, 77u);
      EXPECT_EQ(l.timeout, 18u);
      EXPECT_EQ(l.retry, 5u);
    }
  json r = load_json(verbose_out());
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["benchmarks"][0]["name"],
            "write/bw/qps:3/size:64/cq:12/tclass:96/sl:3/flow:77/mtu:512/qp_timeout:18/retry:5");
  EXPECT_EQ(r["benchmarks"][0]["config"]["tclass"], 96);
  EXPECT_EQ(r["benchmarks"][0]["config"]["qp_timeout"], 18);
  EXPECT_EQ(r["benchmarks"][0]["config"]["retry_count"], 5);
}

// An MTU the port cannot carry, or that is no MTU, ends in one line before any QP.
TEST(Verbose, PathMtuAboveThePortsIsRefusedInOneLine) {
  REQUIRE_DEVICE();
  verbs::Device dev = verbs::Device::open("", 1);
  auto one_line = [](const Outcome& o, const std::string& needle) {
    EXPECT_NE(o.code, 0) << o.err;
    EXPECT_NE(o.err.find(needle), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  };
  one_line(run({kBin, "client", "127.0.0.1", "--port", "9", "--mtu", "3000"}, 30s), "mtu: 3000 is not a path MTU");
  if (verbs::mtu_bytes(dev.port_attr().active_mtu) < 4096)
    one_line(run({kBin, "client", "127.0.0.1", "--port", "9", "--mtu", "4096"}, 30s),
             "path MTU 4096 is over the device's port active MTU");
}

// docs/troubleshooting.md's first sample: each `$ rdmasweep ...` run here prints the
// words the page shows, no more (but where it writes "..."), in order. Only words
// without digits count (numbers, addresses and device names differ from host to host),
// across lines (a long list wraps where its numbers' widths put it), and GID rows are
// left out (as many as the port has addresses, which other tests add and remove).
static std::vector<std::string> words_without_digits(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;)
    if (std::none_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      out.push_back(w);
  return out;
}

// The words of `lines` as above; a "..." line becomes an empty word, the page's gap.
static std::vector<std::string> skeleton(const std::vector<std::string>& lines) {
  static const std::regex gid_row(R"(^\s+\*?\s*GID \d+\s)");
  std::vector<std::string> out;
  for (const std::string& l : lines) {
    if (std::regex_search(l, gid_row)) continue;
    if (l.rfind("...", 0) == 0) {
      out.push_back("");
      continue;
    }
    for (const std::string& w : words_without_digits(l)) out.push_back(w);
  }
  return out;
}

// Whether `printed` is `page` with its gaps filled: each stretch between gaps found
// in order, the first at the start and the last at the end unless a gap is there.
static bool fills(const std::vector<std::string>& page, const std::vector<std::string>& printed) {
  auto at = printed.begin();
  bool gap = false;
  for (auto p = page.begin(); p != page.end();) {
    if (p->empty()) {
      gap = true;
      ++p;
      continue;
    }
    auto stretch_end = std::find(p, page.end(), std::string());
    auto found = gap ? std::search(at, printed.end(), p, stretch_end)
                     : (static_cast<size_t>(printed.end() - at) >= static_cast<size_t>(stretch_end - p) &&
                                std::equal(p, stretch_end, at)
                            ? at
                            : printed.end());
    if (found == printed.end() && p != stretch_end) return false;
    at = found + (stretch_end - p);
    p = stretch_end;
    gap = false;
  }
  return gap || at == printed.end();
}

TEST(Docs, TroubleshootingSamplesAreWhatTheBinaryPrints) {
  REQUIRE_DEVICE();
  if (verbs::list_devices().at(0).rfind("rxe", 0) != 0) GTEST_SKIP() << "the sample is Soft-RoCE's (the rxe lab)";
  std::ifstream in(std::string(RDMASWEEP_SOURCE_DIR) + "/docs/troubleshooting.md");
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "```") {
      if (inside) break;
      inside = true;
    } else if (inside) {
      block += line + "\n";
    }
  }
  std::istringstream lines(block);
  std::vector<std::pair<std::string, std::vector<std::string>>> runs;  // command, its sample lines
  while (std::getline(lines, line)) {
    if (line.rfind("$ rdmasweep ", 0) == 0) runs.push_back({line.substr(12, line.find("  #") - 12), {}});
    else if (!runs.empty()) runs.back().second.push_back(line);
  }
  ASSERT_EQ(runs.size(), 3u) << block;
  // From the source tree, as the page runs them (configs/quick.json is relative).
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(RDMASWEEP_SOURCE_DIR), 0);
  struct Back {
    const char* dir;
    ~Back() { (void)::chdir(dir); }
  } back{cwd};
  for (const auto& [command, sample] : runs) {
    SCOPED_TRACE(command);
    std::vector<std::string> argv = {kBin};
    std::istringstream words(command);
    for (std::string w; words >> w;) argv.push_back(w);
    if (command.find("127.0.0.1") != std::string::npos) {
      argv.push_back("--port");  // nothing listens there, whatever else this host runs
      argv.push_back("9");
    }
    Outcome o = run(argv, 60s);
    std::istringstream printed(o.out + o.err);
    std::vector<std::string> got;
    for (std::string l; std::getline(printed, l);) got.push_back(l);
    std::string page;
    for (const std::string& l : sample) page += l + "\n";
    EXPECT_TRUE(fills(skeleton(sample), skeleton(got))) << "--- the page:\n" << page << "--- printed:\n" << o.out << o.err;
  }
}

}  // namespace rdmasweep::test
