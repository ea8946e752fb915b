#include "bench/perftest_flags.hpp"

#include <cctype>
#include <sstream>

#include <boost/program_options.hpp>

#include "bench/usage_error.hpp"

#include "core/config/config.hpp"
#include "core/config/knobs.hpp"
#include "core/config/sweep_spec.hpp"

namespace rdmasweep::cli {

// Every short flag of perftest 4.5's ib_* tools (their --help, committed in
// tests/tools/data/perftest-4.5/; tests/tools/test_perftest_flags.py checks each letter).
const std::vector<PerftestFlag>& perftest_flags() {
  static const std::vector<PerftestFlag> flags = {
    {'a', "--all", "--all", "every size from 2 B to 8 MiB, doubling"},
    {'A', "--atomic_type", "--atomic-type", "CMP_AND_SWAP or FETCH_AND_ADD: --op cas or faa"},
    {'b', "--bidirectional", "--bidir", nullptr},
    {'c', "--connection", "--connection", "RC or UD (--transport rc|ud); a sweep file is --config FILE"},
    {'C', "--report-cycles", nullptr, "latency is reported in ns, never cycles; the timestamp clock is --clock tsc|system"},
    {'d', "--ib-dev", "--device", nullptr},
    {'D', "--duration", "--duration", nullptr},
    {'e', "--events", "--events", nullptr},
    {'f', "--margin", nullptr, "no time margins: --warmup N messages per QP come first, then --duration S is measured"},
    {'F', "--CPU-freq", "--cpu-freq", "accepted and ignored: rdmasweep has no CPU-frequency warning to silence"},
    {'g', "--mcg", nullptr, "multicast is --multicast GROUP (UD SEND to every server started with --join GROUP)"},
    {'h', "--help", "--help", nullptr},
    {'H', "--report-histogram", nullptr, "every point's latency histogram is in FILE.hist.json beside --out FILE"},
    {'i', "--ib-port", "--ib-port", nullptr},
    {'I', "--inline_size", "--inline-size", nullptr},
    {'l', "--post_list", "--post-list", nullptr},
    {'L', "--hop_limit", nullptr, "not supported: the hop limit stays the device's default"},
    {'m', "--mtu", "--mtu", nullptr},
    {'M', "--MGID", nullptr, "multicast is --multicast GROUP, a numeric IPv4 or IPv6 group"},
    {'n', "--iters", "--iters", "rdmasweep counts per QP, as perftest does"},
    {'N', "--noPeak", nullptr, "rdmasweep computes no peak bandwidth: nothing to cancel"},
    {'o', "--outs", "--outs", "rdmasweep's output file (or directory) is --out"},
    {'O', "--dualport", nullptr, "not supported: run a client per port (-i PORT)"},
    {'p', "--port", "--port", nullptr},
    {'q', "--qp", "--qps", nullptr},
    {'Q', "--cq-mod", "--signal-every", nullptr},
    {'r', "--rx-depth", "--rx-depth", nullptr},
    {'R', "--rdma_cm", "--cm", nullptr},
    {'s', "--size", "--size", nullptr},
    {'S', "--sl", "--sl", nullptr},
    {'t', "--tx-depth", "--tx-depth", nullptr},
    {'T', "--tos", "--tclass", "the IP ToS byte of every QP, with or without --cm; threads are --threads N"},
    {'u', "--qp-timeout", "--qp-timeout", nullptr},
    {'U', "--report-unsorted", nullptr, "every point's latency histogram is in FILE.hist.json beside --out FILE"},
    {'V', "--version", nullptr, "the version is `rdmasweep --version`"},
    {'w', "--limit_bw", nullptr, "a bandwidth floor is a baseline for rdmasweep-compare (it exits non-zero below it)"},
    {'W', "--report-counters", nullptr, "every result entry has the port's counters; `rdmasweep devices` lists them"},
    {'x', "--gid-index", "--gid-index", nullptr},
    {'X', "--vector", nullptr, "not supported: --events uses completion vector 0"},
    {'y', "--limit_msgrate", nullptr, "a message-rate floor is a baseline for rdmasweep-compare (it exits non-zero below it)"},
    {'z', "--com_rdma_cm", nullptr, "the control channel is always TCP; -R/--cm connects the QPs with RDMA-CM"},
  };
  return flags;
}

std::string perftest_pointer(const std::string& option, const std::string& command) {
  if (option.size() != 2 || option[0] != '-') return "";
  for (const PerftestFlag& f : perftest_flags()) {
    if (f.letter != option[1]) continue;
    std::string line = option + " is perftest's " + f.perftest + ": ";
    if (!f.rdmasweep) return line + f.pointer;
    // One of perftest's flags that rdmasweep has, but not in this command.
    line += "rdmasweep client's " + std::string(f.rdmasweep) + ", which `rdmasweep " + command + "` does not take";
    if (command == "server") line += " (the server runs each point as its client asks)";
    if (f.pointer && (f.letter == 'o' || f.letter == 'c' || f.letter == 'T')) line += std::string("; ") + f.pointer;
    return line;
  }
  return "";
}

// A table cell: a '|' in the text would end it.
static std::string cell(const std::string& text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

std::string perftest_flags_markdown() {
  std::string md = "| perftest | rdmasweep | |\n|---|---|---|\n";
  for (const PerftestFlag& f : perftest_flags()) {
    const std::string letter(1, f.letter);
    md += "| `-" + letter + "`, `" + f.perftest + "` | ";
    md += f.rdmasweep ? "`-" + letter + "`, `" + f.rdmasweep + "`" : std::string("not defined");
    md += " | " + cell(f.pointer ? f.pointer : "the same") + " |\n";
  }
  return md;
}

static std::string knob_default(const char* key) {
  const Knob& k = knob(key);
  if (k.kind == KnobKind::Inline && k.def == kInlineAuto) return "auto";
  return std::to_string(k.def);
}

std::string perftest_defaults_markdown() {
  const SweepSpec spec;
  struct Row {
    std::string what, perftest, rdmasweep, why;
  };
  // perftest's values: its --help where it says (tests/tools/data/perftest-4.5/), else
  // perftest_parameters.h (DEF_CQ_MOD 100, DEF_MARGIN 2) and ctx_set_max_inline.
  const Row rows[] = {
    {"`-n/--iters`, bandwidth", "5000", std::to_string(spec.iters),
     "a sweep runs many points; `-n 5000` counts as perftest does (latency: 1000 on both)"},
    {"`-Q/--signal-every` (CQ moderation)", "100", knob_default("signal_every"),
     "four signaled WRs in a `-t " + knob_default("tx_depth") + "` queue (perftest's: one), so a QP's queue refills "
     "before it drains"},
    {"`-I/--inline-size`, bandwidth", "0 (inline in latency tests only)", knob_default("inline_size"),
     "auto: what the device allows, up to perftest's latency sizes (236 B SEND, 220 B WRITE), in both modes; "
     "`-I 0` is perftest's bandwidth behaviour"},
    {"`--warmup`", "none (bandwidth: `--perform_warm_up` for WRITE, READ, atomics)",
     std::to_string(spec.warmup) + " messages per QP", "unmeasured, before the window opens; `--warmup 0` for none"},
    {"`-D/--duration` window", "the middle: `-f/--margin` 2 s cut from each end", "all of it, after `--warmup`",
     "the window opens when the warm-up ends and closes at the last completion"},
    {"`-t/--tx-depth`, latency", "1", knob_default("tx_depth"), "a ping-pong keeps one message in flight either way"},
    {"latency clock", "the TSC", "`--clock auto`", "the TSC where it is invariant, else `clock_gettime` (docs above)"},
  };
  std::string md = "| default | perftest 4.5 | rdmasweep | |\n|---|---|---|---|\n";
  for (const Row& r : rows)
    md += "| " + r.what + " | " + cell(r.perftest) + " | " + cell(r.rdmasweep) + " | " + cell(r.why) + " |\n";
  md += "\nThe same on both: `-q` " + knob_default("qps") + ", `-s` " + knob_default("size") + " (latency: " +
        std::to_string(kLatDefaultBytes) + "), `-t` " + knob_default("tx_depth") + " (bandwidth), `-r` " +
        knob_default("rx_depth") + ", `-l` " + knob_default("post_list") + ", `-o` the devices' limit (" +
        knob_default("outs") + "), `-u` " + knob_default("qp_timeout") + ", `--retry_count` " +
        knob_default("retry_count") + ", `-S` " + knob_default("sl") + ", `-m` the port's MTU (" + knob_default("mtu") +
        ").\n";
  return md;
}

namespace po = boost::program_options;

// perftest's spellings of a few axes (-a, -A, -c): each lands under its own key and
// resolve_perftest_aliases turns it into the axis it names.
void add_perftest_aliases(po::options_description& d, std::map<std::string, std::string>& axis) {
  d.add_options()
    ("all,a", po::bool_switch()->notifier([&axis](bool on) { if (on) axis["-a"] = "1"; }),
     "every size from 2 B to 8 MiB, doubling (perftest's -a/--all; the same as -s 2:8m:x2)")
    ("atomic-type,A", po::value<std::string>()->notifier([&axis](const std::string& v) { axis["-A"] = v; }),
     "CMP_AND_SWAP or FETCH_AND_ADD (perftest's -A/--atomic_type; the same as --op cas or faa)")
    ("connection,c", po::value<std::string>()->notifier([&axis](const std::string& v) { axis["-c"] = v; }), "RC or UD (perftest's -c/--connection; the same as --transport rc or ud)")
    ("cpu-freq,F", po::bool_switch(), "accepted for perftest's scripts (-F/--CPU-freq) and ignored: rdmasweep has no "
     "CPU-frequency warning to silence");
}

// Turns -a, -A and -c into the size, op and transport axes; UsageError when the axis is
// also given under its own name, or the value is not one rdmasweep runs.
std::map<std::string, std::string> resolve_perftest_aliases(std::map<std::string, std::string> axis) {
  auto take = [&axis](const char* alias, const char* key, const std::string& own, const std::string& value) {
    if (axis.count(key)) throw UsageError(std::string(alias) + " and " + own + " both set the " + key + ": give one");
    axis[key] = value;
    axis.erase(alias);
  };
  if (axis.count("-a")) take("-a", "size", "-s/--size", "2:8m:x2");
  if (axis.count("-A")) {
    std::string ops;
    std::stringstream list(axis["-A"]);
    for (std::string t; std::getline(list, t, ',');) {
      if (t != "CMP_AND_SWAP" && t != "FETCH_AND_ADD")
        throw UsageError("-A: '" + t + "' is not CMP_AND_SWAP or FETCH_AND_ADD (or give --op cas|faa)");
      ops += (ops.empty() ? "" : ",") + std::string(t == "CMP_AND_SWAP" ? "cas" : "faa");
    }
    take("-A", "op", "--op", ops);
  }
  if (axis.count("-c")) {
    std::string transports;
    std::stringstream list(axis["-c"]);
    for (std::string t; std::getline(list, t, ',');) {
      std::string lower;
      for (char ch : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (lower != "rc" && lower != "ud")
        throw UsageError("-c: '" + t + "' is not RC or UD, the connections rdmasweep runs (-c is perftest's "
                         "connection type; a sweep file is --config FILE)");
      transports += (transports.empty() ? "" : ",") + lower;
    }
    take("-c", "transport", "--transport", transports);
  }
  return axis;
}

}  // namespace rdmasweep::cli
