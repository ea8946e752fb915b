// Command-line parsing (Boost.Program_options) into small option structs.
// perftest's short flags are kept where they mean the same thing.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/usage_error.hpp"
#include "core/config/config.hpp"
#include "core/config/knobs.hpp"
#include "core/config/sweep.hpp"

namespace boost::program_options {
class options_description;
}

namespace rdmasweep::cli {


struct Common {
  FabricConfig fabric;
  uint16_t port = 18515;
  int timeout_s = 10;  // handshake steps and peer silence
  std::string cpus;    // --cpus: empty for the default placement (core/host/placement.hpp)
  bool verbose = false;
  std::string progress_file;  // --progress-file FILE: each point's steps, appended as they happen
  bool help = false;
};

// --format: what the client prints on stdout as points end.
enum class ConsoleFormat : uint8_t { Table, Perftest };  // rdmasweep's table; perftest's (docs/results.md)
ConsoleFormat parse_console_format(const std::string& text);  // UsageError on anything else

struct ClientOptions : Common {
  std::string host;
  std::string config_file;
  SweepSpec spec;
  std::string out;  // results file; the histogram file goes beside it
  ConsoleFormat format = ConsoleFormat::Table;
  bool progress = true;
  bool cap_to_cq = false;  // --cq-policy cap
  std::string clock = "auto";  // latency timestamps: auto, tsc, system
  double interval = -1;        // --interval seconds; -1: 0.1 in duration mode, off otherwise
  std::vector<std::string> benchmark_args;  // --benchmark_* flags handed to Google Benchmark
  bool cm = false;          // --cm: connect the QPs with RDMA-CM
  std::string cm_address;   // --cm-address: the server's RDMA address (default: host)
  std::map<std::string, std::string> labels;  // --label KEY=VALUE: the context's "labels"
  std::string multicast;    // --multicast GROUP: UD datagrams to the servers in HOST that joined it
  bool plan = false;        // --plan: print the sweep's plan (bench/sweep_plan.hpp), connect nothing
  std::string plan_from;    // --plan-from FILE: the plan's rates from an earlier run's results
  std::string beside;       // --beside KNOBS: each point also measured beside this background workload
};

struct ServerOptions : Common {
  std::string bind;  // empty: all addresses
  bool once = false;
  bool cm = false;   // --cm: serve only clients whose QPs connect with RDMA-CM
  std::string join;  // --join GROUP: receive a --multicast client's datagrams
};

struct DoctorOptions : Common {
  std::string host;  // empty: local checks only
  SweepSpec spec;    // the planned sweep, for the memory and limit checks
  bool sweep_given = false;  // --config or a workload option: the plan is printed too
  std::string plan_from;     // --plan-from FILE, as the client's
};

struct HuntOptions : Common {
  std::string host;
  std::string space_file;    // empty: hunt's default space
  double budget_s = 600;     // --budget: 90s, 10m, 1h or plain seconds
  uint64_t seed = 0;
  bool seed_given = false;
  std::string out_dir;
  std::string connect_args;  // the fabric options as given, for the report's commands
};

struct DevicesOptions {
  bool json = false;
  bool help = false;
};

// Each throws UsageError with one line naming the bad option; with --help, sets
// help and leaves the text in *help_text.
ClientOptions parse_client(int argc, char** argv, std::string* help_text);
// --label KEY=VALUE, repeatable: KEY -> VALUE; UsageError on a malformed or repeated KEY.
std::map<std::string, std::string> parse_labels(const std::vector<std::string>& given);
ServerOptions parse_server(int argc, char** argv, std::string* help_text);
DevicesOptions parse_devices(int argc, char** argv, std::string* help_text);
DoctorOptions parse_doctor(int argc, char** argv, std::string* help_text);
HuntOptions parse_hunt(int argc, char** argv, std::string* help_text);
// *o from PARSE; true once the help is printed, when the line asked for --help.
template <class Options>
bool help_printed(Options (*parse)(int, char**, std::string*), int argc, char** argv, Options* o) {
  std::string help;
  *o = parse(argc, argv, &help);
  if (o->help) std::fputs(help.c_str(), stdout);
  return o->help;
}
// "90s", "10m", "1h", "1.5m" or plain seconds; throws UsageError naming `option`.
double parse_seconds(const std::string& option, const std::string& text);

std::string default_out_path();

// --config NAME: NAME itself when that file exists; otherwise, for a bare name such as
// `quick`, NAME or NAME.json among the sweeps installed beside the executable
// (<prefix>/share/rdmasweep/configs, found from /proc/self/exe so relocated installs
// work) or, in a build tree, the source's configs/. Throws UsageError naming where it
// looked when there is none.
std::string resolve_sweep_file(const std::string& name);
// Where the bare names are looked up, first match wins; only the ones that exist.
std::vector<std::string> sweep_dirs();

// Every parser's --help goes through render_help with its usage text and its own
// options_description. `rdmasweep help --man` and `--bash-completion` swap the
// renderer to read those very descriptions, so the manual cannot drift from the parser.
using HelpRenderer = std::function<std::string(const std::string& usage,
                                               const boost::program_options::options_description& options)>;
void set_help_renderer(HelpRenderer r);  // empty: the plain text --help prints
std::string render_help(const std::string& usage, const boost::program_options::options_description& options);

// -s, -n, -D, --warmup, --repetitions: what each point sends, for how long and how
// often, the same for client and mesh: each value lands in axis[key].
void add_length_options(boost::program_options::options_description& d, std::map<std::string, std::string>& axis);
// --cq-policy error|cap, the same for client and mesh: the value lands in *policy;
// cq_policy_caps() checks it (UsageError) and says whether it is cap.
void add_cq_policy_option(boost::program_options::options_description& d, std::string* policy);
bool cq_policy_caps(const std::string& policy);

constexpr const char* kWorkloadTitle = "Workload (each takes a list \"1,2,4\" or a range \"64:65536:x2\" to sweep)";
// The workload options every sweeping command (client, mesh) takes, in this order:
// --config (into *config_file), --op/--mode/--qps, the lengths, every loop knob, and
// --cq-policy (into *policy); the others land in axis[key].
void add_workload_options(boost::program_options::options_description& d, std::map<std::string, std::string>& axis,
                          std::string* config_file, std::string* policy);
// The sweep file (if any, resolved as --config names it) with the command line's axes
// over it; UsageError (one line) on a bad file, value or combination.
SweepSpec sweep_from(const std::string& config_file, const std::map<std::string, std::string>& axis);
// A multicast sweep (mesh --pattern multicast, client --multicast; `who` names it in
// errors): SEND over UD, 1 KiB datagrams unless -s or a sweep file says otherwise (the
// default 64 KiB is over every MTU), every point one multicast can run.
void multicast_sweep(SweepSpec& spec, const std::map<std::string, std::string>& axis, const std::string& config_file,
                     const std::string& who);
// `group` when it is a numeric multicast address, else a UsageError naming `option`.
std::string multicast_group(const std::string& option, const std::string& group);
// --clock (client and mesh) into *clock: tsc, system or auto (ticks::parse checks it).
void add_clock_option(boost::program_options::options_description& d, std::string* clock);
// --interval (client and mesh) into *interval; check_interval() rejects a `given`
// value that is neither 0 (off) nor 0.001 to 3600 seconds (UsageError).
void add_interval_option(boost::program_options::options_description& d, double* interval);
// --plan-from FILE (client and doctor) into *file: the rates of the plan's estimate.
void add_plan_from_option(boost::program_options::options_description& d, std::string* file);
// --progress-file FILE (client, server, mesh): core/results/progress_file.hpp.
void add_progress_file_option(boost::program_options::options_description& d, std::string* file);
void check_interval(bool given, double interval);
// What --cq-policy cap does: each point whose QPs' outstanding work needs more than one
// CQ of `max_cqe` entries gets its depths halved until it fits (core's cap_to_cq), and
// a line on stderr ("<prefix>: <point>: capped to fit <whose> max_cqe ...") says so
// (no line when prefix is null: another process says it).
void cap_points(std::vector<TestConfig>& points, uint64_t max_cqe, const std::string& whose, const char* prefix);
// The fabric options of every command that opens a device (client, server, doctor,
// hunt, mesh): --device, --gid-index, --ib-port, --timeout. `raw` holds what
// finish_fabric() checks and moves into `f` once the command line is parsed.
struct FabricArgs {
  int gid = -1;
  unsigned ib_port = 1;
};
void add_fabric_options(boost::program_options::options_description& d, FabricConfig& f, int& timeout_s,
                        FabricArgs& raw);
void finish_fabric(FabricConfig& f, int timeout_s, const FabricArgs& raw);
// One knob's option, flag and help from the knob table (core/config/knob_table.hpp): its value lands
// in axis[key]; a Flag alone (--srq) means 1.
void add_knob_option(boost::program_options::options_description& d, std::map<std::string, std::string>& axis,
                     const Knob& k);
// Every loop knob's option (the table's LoopKnobs rows: -t, -r, --cq-depth, -l, -Q, -I,
// --outs, --poll-batch, --srq, --events), the same for client and mesh.
void add_knob_options(boost::program_options::options_description& d, std::map<std::string, std::string>& axis);

}  // namespace rdmasweep::cli
