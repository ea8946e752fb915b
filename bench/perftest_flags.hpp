// perftest's short flags (ib_{send,write,read,atomic}_{bw,lat}, perftest 4.5): each
// either means the same in rdmasweep, or is left undefined and answered with one line
// naming rdmasweep's spelling, so a perftest habit never silently means something else.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace boost::program_options {
class options_description;
}

namespace rdmasweep::cli {

struct PerftestFlag {
  char letter;
  const char* perftest;   // perftest's long option
  const char* rdmasweep;  // the same meaning here: rdmasweep's long option; nullptr: not defined
  const char* pointer;    // what to use instead (not defined), or a note on the mapping
};

const std::vector<PerftestFlag>& perftest_flags();

// The one-line answer to OPTION ("-C"), unknown to COMMAND's parser; empty when OPTION
// is not one of perftest's.
std::string perftest_pointer(const std::string& option, const std::string& command);

// perftest's -a (every size 2 B..8 MiB), -A (atomic type), -c (RC|UD) and -F (ignored),
// each value under its own key of `axis`; part of every sweeping command's workload options.
void add_perftest_aliases(boost::program_options::options_description& d, std::map<std::string, std::string>& axis);
// `axis` with -a, -A and -c turned into the size, op and transport axes; UsageError when
// the axis is also given under its own name, or the value is not one rdmasweep runs.
std::map<std::string, std::string> resolve_perftest_aliases(std::map<std::string, std::string> axis);

// docs/usage.md's table of perftest's flags (`rdmasweep help --perftest-md`).
std::string perftest_flags_markdown();

// docs/usage.md's defaults that differ from perftest's, and the ones that do not
// (`rdmasweep help --defaults-md`); rdmasweep's column comes from the knob table and
// SweepSpec's initializers, so it cannot drift from the code.
std::string perftest_defaults_markdown();

}  // namespace rdmasweep::cli
