// rdmasweep render FILE [--format table|perftest]: a client's results file shown as the
// client shows its points as they end, through the same console reporters. Left out
// of help and the manual: it is how tests/tools/test_perftest_format.py gets
// --format perftest's output from real results without a device (docs/testing.md).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "bench/commands.hpp"
#include "bench/reporter.hpp"
#include "core/results/document.hpp"

namespace rdmasweep {

static constexpr const char* kRenderUsage = "usage: rdmasweep render RESULTS.json [--format table|perftest]";

int render_main(int argc, char** argv) {
  std::string file, format = "table";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kRenderUsage << "\n";
      return kOk;
    }
    if (a == "--format" && i + 1 < argc) format = argv[++i];
    else if (a.rfind("--format=", 0) == 0) format = a.substr(9);
    else if (file.empty() && a.rfind("-", 0) != 0) file = a;
    else throw cli::UsageError(kRenderUsage);
  }
  if (file.empty()) throw cli::UsageError(kRenderUsage);
  const cli::ConsoleFormat f = cli::parse_console_format(format);
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file);
  const nlohmann::json results = nlohmann::json::parse(in);  // its error names the offset
  ResultsDocument doc(file, results.value("context", nlohmann::json::object()));
  size_t width = 5;
  for (const nlohmann::json& b : results.at("benchmarks")) {
    width = std::max(width, b.value("name", std::string()).size());
    doc.add(b);
  }
  auto console = console_reporter(f, width, std::cout, std::cerr);
  console->report_context(doc);
  console->report_entries(doc, 0);
  doc.find_knees();
  console->finalize(doc);
  return kOk;
}

}  // namespace rdmasweep
