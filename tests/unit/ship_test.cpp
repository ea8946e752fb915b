// What makes rdmasweep self-describing off the build machine: --version's fields,
// `help`, the manual page and completion generated from the parsers (every option a
// parser accepts appears there), and --config finding a bare sweep name.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "tests/support/process.hpp"

namespace rdmasweep::test {

using namespace std::chrono_literals;

// The long options in a --help text ("  -d [ --device ] arg", "  --json").
static std::set<std::string> long_options(const std::string& help) {
  std::set<std::string> out;
  std::regex re(R"((?:^|\n)  (?:-\w \[ )?(--[a-z][a-z-]*))");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

TEST(Ship, VersionSaysWhatWasBuilt) {
  Outcome v = run({kBin, "--version"}, 10s);
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_TRUE(std::regex_search(v.out, std::regex(R"(^rdmasweep \d+\.\d+\.\d+\n)"))) << v.out;
  EXPECT_TRUE(std::regex_search(v.out, std::regex(R"(\ngit revision: ([0-9a-f]{12}|unknown)\n)"))) << v.out;
  EXPECT_NE(v.out.find("\nbuild type: " RDMASWEEP_BUILD_TYPE "\n"), std::string::npos) << v.out;
  EXPECT_TRUE(std::regex_search(v.out, std::regex(R"(\ncompiler: \w+ \d+\.)"))) << v.out;
  EXPECT_TRUE(std::regex_search(v.out, std::regex(R"(\nbuilt against: libibverbs \d+\.)"))) << v.out;
}

TEST(Ship, HelpCommandIsTheCommandsHelp) {
  for (const char* cmd : {"server", "client", "devices", "doctor", "mesh"}) {
    SCOPED_TRACE(cmd);
    Outcome a = run({kBin, "help", cmd}, 10s), b = run({kBin, cmd, "--help"}, 10s);
    EXPECT_EQ(a.code, 0) << a.err;
    EXPECT_EQ(a.out, b.out);
    EXPECT_NE(a.out.find(std::string("usage: ")), std::string::npos) << a.out;
  }
  Outcome bad = run({kBin, "help", "clint"}, 10s);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("no command 'clint'"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

TEST(Ship, ManualAndCompletionListEveryOptionOfEveryParser) {
  Outcome man = run({kBin, "help", "--man"}, 10s), comp = run({kBin, "help", "--bash-completion"}, 10s);
  ASSERT_EQ(man.code, 0) << man.err;
  ASSERT_EQ(comp.code, 0) << comp.err;
  EXPECT_EQ(man.out.rfind(".\\\"", 0), 0u);
  EXPECT_NE(man.out.find("\n.TH RDMASWEEP 1 "), std::string::npos);
  for (const char* cmd : {"server", "client", "devices", "doctor", "mesh"}) {
    SCOPED_TRACE(cmd);
    Outcome h = run({kBin, cmd, "--help"}, 10s);
    std::set<std::string> opts = long_options(h.out);
    EXPECT_GE(opts.size(), 2u) << h.out;
    std::size_t section = man.out.find(std::string("\n.SS ") + cmd + "\n");
    ASSERT_NE(section, std::string::npos);
    std::size_t next = man.out.find("\n.SS ", section + 1);
    std::string man_part = man.out.substr(section, next - section);
    std::size_t line = comp.out.find(std::string("    ") + cmd + ") words=\"");
    ASSERT_NE(line, std::string::npos) << comp.out;
    std::string comp_line = comp.out.substr(line, comp.out.find('\n', line) - line);
    std::replace(comp_line.begin(), comp_line.end(), '"', ' ');
    for (const std::string& o : opts) {
      std::string roff = "\\fB";
      for (char ch : o) roff += ch == '-' ? std::string("\\-") : std::string(1, ch);
      roff += "\\fR";
      EXPECT_NE(man_part.find(roff), std::string::npos) << o;
      EXPECT_NE(comp_line.find(" " + o + " "), std::string::npos) << o;
    }
  }
  EXPECT_NE(comp.out.find("--op) COMPREPLY=($(compgen -W \"send write read cas faa\""), std::string::npos) << comp.out;
  EXPECT_NE(comp.out.find("--mode) COMPREPLY=($(compgen -W \"bw lat\""), std::string::npos) << comp.out;
}

TEST(Ship, ConfigFindsABareSweepName) {
  // The tests run in the build tree, where neither "quick" nor "quick.json" exists:
  // the name resolves to the source's configs/quick.json (build dir's ../configs).
  Outcome ok = run({kBin, "doctor", "--config", "quick", "--op", "bogus"}, 30s);
  EXPECT_EQ(ok.code, 2);
  EXPECT_NE(ok.err.find("op: 'bogus' is not one of"), std::string::npos) << ok.err;
  EXPECT_EQ(ok.err.find("--config"), std::string::npos) << ok.err;
  Outcome missing = run({kBin, "doctor", "--config", "no-such-sweep"}, 30s);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("--config: no sweep file 'no-such-sweep' here or in "), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  Outcome list = run({kBin, "help", "--configs"}, 10s);
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("/configs/quick.json\n"), std::string::npos) << list.out;
}

}  // namespace rdmasweep::test
