#include "bench/cli.hpp"

#include <algorithm>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include "core/config/multicast_point.hpp"
#include "core/config/sweep.hpp"
#include "bench/perftest_flags.hpp"

namespace rdmasweep::cli {

namespace po = boost::program_options;

void add_fabric_options(po::options_description& d, FabricConfig& f, int& timeout_s, FabricArgs& raw) {
  d.add_options()
    ("device,d", po::value(&f.device), "RDMA device (default: the first one; see `rdmasweep devices`)")
    ("gid-index,x", po::value(&raw.gid)->default_value(-1),
     "GID index (default: the port's RoCE v2 GID with an IPv4 address)")
    ("ib-port,i", po::value(&raw.ib_port)->default_value(1), "device port")
    ("timeout", po::value(&timeout_s)->default_value(10), "seconds before a silent peer is declared dead");
}

void finish_fabric(FabricConfig& f, int timeout_s, const FabricArgs& raw) {
  if (raw.ib_port < 1 || raw.ib_port > 255)
    throw UsageError("--ib-port: " + std::to_string(raw.ib_port) + " is out of range 1..255");
  f.port = static_cast<uint8_t>(raw.ib_port);
  if (raw.gid < -1 || raw.gid > 65535) throw UsageError("--gid-index: " + std::to_string(raw.gid) + " is out of range");
  f.gid_index = raw.gid;
  if (timeout_s < 1 || timeout_s > 86400) throw UsageError("--timeout: must be between 1 and 86400 seconds");
}

// The fabric options, and what the commands with a control connection add to them.
static po::options_description fabric_options(Common& c, FabricArgs& raw) {
  po::options_description o("Fabric");
  add_fabric_options(o, c.fabric, c.timeout_s, raw);
  o.add_options()
    ("port,p", po::value(&c.port)->default_value(18515), "TCP control port")
    ("cpus", po::value(&c.cpus), "cores for a point's threads, e.g. 2-9,12 (thread t on the t-th; also pins one "
     "thread); default: with --threads > 1, the cores of the device's NUMA node, less those its interrupts go to")
    ("verbose,v", po::bool_switch(&c.verbose), "print every QP's state and attributes after it connects");
  return o;
}

static po::variables_map run_parser(int argc, char** argv, const po::options_description& all,
                                    const po::positional_options_description* pos) {
  po::variables_map vm;
  try {
    po::command_line_parser p(argc, argv);
    p.options(all);
    if (pos) p.positional(*pos);
    po::store(p.run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    // A perftest flag this command does not define: say what rdmasweep calls it.
    const std::string pointer = perftest_pointer(e.get_option_name(), argc > 0 ? argv[0] : "");
    throw UsageError(pointer.empty() ? std::string(e.what()) : pointer);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

// Parses options plus one positional HOST into *host.
static po::variables_map run_parser_with_host(int argc, char** argv, const po::options_description& all,
                                              std::string* host) {
  po::positional_options_description pos;
  pos.add("host", 1);
  po::options_description hidden;
  hidden.add_options()("host", po::value(host));
  po::options_description parse_set;
  parse_set.add(all).add(hidden);
  return run_parser(argc, argv, parse_set, &pos);
}

// An option whose value (a list or a range) overrides the sweep's key.
static po::typed_value<std::string>* axis_value(std::map<std::string, std::string>& axis, const char* key) {
  return po::value<std::string>()->notifier([&axis, key](const std::string& v) { axis[key] = v; });
}

void add_length_options(po::options_description& d, std::map<std::string, std::string>& axis) {
  auto ax = [&](const char* key) { return axis_value(axis, key); };
  add_knob_option(d, axis, knob("size"));
  d.add_options()
    ("iters,n", ax("iters"), "measured messages (bw) or round trips (lat) per QP (default 1000)")
    ("duration,D", ax("duration"), "measure for this many seconds instead of --iters")
    ("warmup", ax("warmup"), "unmeasured messages per QP first (default 100)")
    ("repetitions", ax("repetitions"), "repeat each point; mean/median/stddev/cv are added (default 1)");
}

void add_workload_options(po::options_description& d, std::map<std::string, std::string>& axis, std::string* config_file,
                          std::string* policy) {
  d.add_options()("config", po::value(config_file), "sweep file (configs/*.json); options below override its keys");
  for (const char* key : {"op", "mode", "qps"}) add_knob_option(d, axis, knob(key));
  add_length_options(d, axis);
  add_knob_options(d, axis);
  add_cq_policy_option(d, policy);
  add_perftest_aliases(d, axis);
}


void add_clock_option(po::options_description& d, std::string* clock) {
  d.add_options()("clock", po::value(clock)->default_value("auto"),
                  "latency timestamps: tsc (the CPU's time-stamp counter, as perftest), system (clock_gettime), or "
                  "auto (tsc where the CPU declares it invariant or two calibrations agree within 0.1 %, else "
                  "clock_gettime)");
}

void add_cq_policy_option(po::options_description& d, std::string* policy) {
  d.add_options()("cq-policy", po::value(policy)->default_value("error"),
                  "when the QPs' outstanding work needs more than one CQ of the device's max_cqe entries: error, or "
                  "cap (halve the queue depths until it fits, shown in the point's name)");
}

void add_interval_option(po::options_description& d, double* interval) {
  d.add_options()("interval", po::value(interval),
                  "seconds between throughput-over-time samples: each point (each mesh flow) reports its slowest "
                  "and fastest interval (interval_min/interval_max) and FILE.hist.json keeps the series (default 0.1 "
                  "with --duration, off with --iters; 0: off)");
}

void add_plan_from_option(po::options_description& d, std::string* file) {
  d.add_options()("plan-from", po::value(file),
                  "FILE: the rates of the plan's estimate (a message's time, QP setup, each run's own work) from an "
                  "earlier run's results file on the same hosts; default: Soft-RoCE's in the rxe lab VM, far slower "
                  "at messages than a hardware NIC");
}

void add_progress_file_option(po::options_description& d, std::string* file) {
  d.add_options()("progress-file", po::value(file),
                  "FILE: append a line as each point starts, its traffic starts, it ends (done or failed) and the run "
                  "ends: \"EVENT NAME pid=PID t=SECONDS\", for a script that acts on a known moment of a point");
}

void check_interval(bool given, double interval) {
  if (given && !(interval == 0 || (interval >= 0.001 && interval <= 3600)))
    throw UsageError("--interval: must be 0 (off) or between 0.001 and 3600 seconds");
}

bool cq_policy_caps(const std::string& policy) {
  if (policy != "error" && policy != "cap") throw UsageError("--cq-policy: '" + policy + "' is not one of error, cap");
  return policy == "cap";
}

void cap_points(std::vector<TestConfig>& points, uint64_t max_cqe, const std::string& whose, const char* prefix) {
  for (TestConfig& p : points) {
    TestConfig capped = cap_to_cq(p, max_cqe);
    if (point_name(capped) == point_name(p)) continue;
    if (prefix) std::fprintf(stderr,
                 "%s: %s: capped to fit %s max_cqe %llu: tx_depth %u -> %u, rx_depth %u -> %u, signal_every %u -> %u "
                 "(runs as %s)\n",
                 prefix, point_name(p).c_str(), whose.c_str(), static_cast<unsigned long long>(max_cqe), p.knobs.tx_depth,
                 capped.knobs.tx_depth, p.knobs.rx_depth, capped.knobs.rx_depth, p.knobs.signal_every,
                 capped.knobs.signal_every, point_name(capped).c_str());
    p = capped;
  }
}

void add_knob_option(po::options_description& d, std::map<std::string, std::string>& axis, const Knob& k) {
  po::typed_value<std::string>* v = axis_value(axis, k.key);
  if (k.kind == KnobKind::Flag) v->implicit_value("1");  // --srq alone: on
  d.add_options()(k.option, v, k.help);
}

void add_knob_options(po::options_description& d, std::map<std::string, std::string>& axis) {
  for (const Knob& k : knobs())
    if (k.loop) add_knob_option(d, axis, k);
}

static HelpRenderer& help_renderer() {
  static HelpRenderer r;
  return r;
}

void set_help_renderer(HelpRenderer r) { help_renderer() = std::move(r); }

std::string render_help(const std::string& usage, const po::options_description& all) {
  if (help_renderer()) return help_renderer()(usage, all);
  std::ostringstream s;
  s << usage << "\n" << all;
  return s.str();
}

SweepSpec sweep_from(const std::string& config_file, const std::map<std::string, std::string>& given) {
  const std::map<std::string, std::string> axis = resolve_perftest_aliases(given);
  if (axis.count("iters") && axis.count("duration")) throw UsageError(refusal_text("iters-duration"));
  try {
    SweepSpec spec;
    if (!config_file.empty()) spec = load_sweep_file(resolve_sweep_file(config_file));
    for (const auto& [k, v] : axis) apply_override(spec, k, v);
    if (axis.count("iters")) spec.duration = 0;
    return spec;
  } catch (const ConfigError& e) {
    throw UsageError(e.what());
  }
}

// --multicast: a group, a multicast sweep, not --cm; HOST may list several servers only then.
static void check_multicast_client(ClientOptions& c, const std::map<std::string, std::string>& axis) {
  if (c.multicast.empty()) {
    if (c.host.find(',') != std::string::npos)
      throw UsageError("client: one server per run (HOST lists several only with --multicast)");
    return;
  }
  multicast_group("--multicast", c.multicast);
  if (c.cm) throw UsageError("--multicast sends UD datagrams; --cm connects RC QPs: give one of them");
  multicast_sweep(c.spec, axis, c.config_file, "--multicast");
}

ClientOptions parse_client(int argc, char** argv, std::string* help_text) {
  ClientOptions c;
  // Google Benchmark's own flags pass through untouched.
  std::vector<char*> mine;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::string(argv[i]).rfind("--benchmark_", 0) == 0)
      c.benchmark_args.push_back(argv[i]);
    else
      mine.push_back(argv[i]);
  }
  FabricArgs raw;
  po::options_description fabric = fabric_options(c, raw);
  fabric.add_options()
    ("cm,R", po::bool_switch(&c.cm), "connect the QPs with RDMA-CM (librdmacm: resolve the server's address and "
     "route, then rdma_connect) instead of exchanging QP data on the control channel; the GID comes from routing")
    ("cm-address", po::value(&c.cm_address), "with --cm: the server's address on its RDMA interface (default: HOST)")
    ("multicast", po::value(&c.multicast), "GROUP: send UD datagrams to this multicast group instead, received by every "
     "server in HOST (several: comma-separated) started with --join GROUP; each reports sent, received, lost and "
     "one-way latency (across hosts against an estimated clock offset). SEND, counted, 1 KiB unless -s");
  po::options_description work(kWorkloadTitle);
  std::map<std::string, std::string> axis;
  std::string policy;
  add_workload_options(work, axis, &c.config_file, &policy);
  work.add_options()("beside", po::value(&c.beside), "KNOBS: measure each point alone, then again beside a background "
                     "workload on QPs and a connection of its own, e.g. 'op=write,mode=bw,qps=8,size=64k' (sweep keys, "
                     "one value each); the second row is NAME/beside, with its ratio to alone and the background's rates");
  po::options_description out("Output");
  std::string format;
  out.add_options()
    ("out", po::value(&c.out), "results file (Google Benchmark JSON); histograms go to FILE with .hist.json")
    ("format", po::value(&format)->default_value("table"),
     "what stdout shows as points end: table (rdmasweep's) or perftest (perftest 4.5's ib_*_bw and ib_*_lat "
     "tables, for scripts that parse them; MB/sec is 2^20 bytes a second; docs/results.md says each column's source)")
    ("plan", po::bool_switch(&c.plan), "print the points as the run names them, the estimated duration and the "
     "buffers each side pins, then exit: no device opened, nothing connected (a run estimated over 10 minutes "
     "says so on stderr as it starts)");
  add_plan_from_option(out, &c.plan_from);
  add_clock_option(out, &c.clock);
  add_interval_option(out, &c.interval);
  add_progress_file_option(out, &c.progress_file);
  std::vector<std::string> labels;
  out.add_options()
    ("label", po::value(&labels)->composing(),
     "KEY=VALUE recorded in the results' context under \"labels\" (repeatable): what CI knows about the run, "
     "e.g. --label commit=abc123 --label run=42 (tools/history names change points by the commit label)")
    ("no-progress", "no progress line on stderr")
    ("help,h", "this help");
  po::options_description all;
  all.add(fabric).add(work).add(out);
  po::variables_map vm = run_parser_with_host(static_cast<int>(mine.size()), mine.data(), all, &c.host);
  if (vm.count("help")) {
    c.help = true;
    *help_text = render_help("usage: rdmasweep client HOST [options] [--benchmark_filter=REGEX ...]", all);
    return c;
  }
  finish_fabric(c.fabric, c.timeout_s, raw);
  if (c.host.empty()) throw UsageError("client: give the server's host name or address (rdmasweep client HOST)");
  if (!c.cm_address.empty() && !c.cm) throw UsageError(refusal_text("cm-address"));
  if (c.cm && raw.gid != -1) throw UsageError(refusal_text("cm-gid"));
  if (c.cm && c.cm_address.empty()) c.cm_address = c.host;
  c.spec = sweep_from(c.config_file, axis);
  check_multicast_client(c, axis);
  c.format = parse_console_format(format);
  if (c.format == ConsoleFormat::Perftest && !c.multicast.empty()) throw UsageError(refusal_text("format-multicast"));
  if (c.plan && !c.multicast.empty()) throw UsageError("--plan plans a sweep against one server, not --multicast");
  check_interval(vm.count("interval") > 0, c.interval);
  c.progress = !vm.count("no-progress");
  c.labels = parse_labels(labels);
  c.cap_to_cq = cq_policy_caps(policy);
  if (c.out.empty()) c.out = default_out_path();
  return c;
}

ConsoleFormat parse_console_format(const std::string& text) {
  if (text == "table") return ConsoleFormat::Table;
  if (text == "perftest") return ConsoleFormat::Perftest;
  throw UsageError("--format: '" + text + "' is not one of table, perftest");
}

void multicast_sweep(SweepSpec& spec, const std::map<std::string, std::string>& axis, const std::string& config_file,
                     const std::string& who) {
  if (!axis.count("size") && config_file.empty()) {
    spec.size = {kMcastDefaultSize};
    spec.size_given = true;  // the multicast default, in latency points too
  }
  for (const std::string& op : spec.op)
    if (op != "send") throw UsageError(who + ": --op " + op + ": multicast sends (use --op send)");
  const bool all_ud = std::all_of(spec.transport.begin(), spec.transport.end(), [](const std::string& t) { return t == "ud"; });
  if (!all_ud && axis.count("transport")) throw UsageError(who + " runs over UD (--transport ud)");
  spec.transport = {"ud"};
  try {
    for (const TestConfig& c : expand(spec)) check_multicast_point(c);
  } catch (const ConfigError& e) {
    throw UsageError(e.what());
  }
}

std::string multicast_group(const std::string& option, const std::string& group) {
  if (!is_multicast_address(group))
    throw UsageError(option + ": '" + group + "' is not a numeric multicast address (IPv4 224.0.0.0/4 or IPv6 ff00::/8)");
  return group;
}

std::map<std::string, std::string> parse_labels(const std::vector<std::string>& given) {
  std::map<std::string, std::string> out;
  for (const std::string& l : given) {
    const size_t eq = l.find('=');
    const std::string key = l.substr(0, eq);
    const bool ok = eq != std::string::npos && !key.empty() &&
                    key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
                        std::string::npos;
    if (!ok) throw UsageError("--label: '" + l + "' is not KEY=VALUE (KEY of letters, digits, '_', '.', '-')");
    if (!out.emplace(key, l.substr(eq + 1)).second) throw UsageError("--label: " + key + " given twice");
  }
  return out;
}

ServerOptions parse_server(int argc, char** argv, std::string* help_text) {
  ServerOptions s;
  FabricArgs raw;
  po::options_description all = fabric_options(s, raw);
  all.add_options()
    ("bind", po::value(&s.bind), "address to listen on (default: all addresses)")
    ("join", po::value(&s.join), "GROUP: also receive a `client --multicast GROUP`'s datagrams on this numeric IPv4 "
     "or IPv6 multicast group, joined through RDMA-CM for each such client")
    ("once", "serve one client, then exit")
    ("cm,R", po::bool_switch(&s.cm), "serve only clients that connect their QPs with RDMA-CM (client --cm); "
     "without it the server follows each client's choice");
  add_progress_file_option(all, &s.progress_file);
  all.add_options()("help,h", "this help");
  po::variables_map vm = run_parser(argc, argv, all, nullptr);
  if (vm.count("help")) {
    s.help = true;
    *help_text = render_help("usage: rdmasweep server [options]\nServes test after test, client after client (one at a time; `rdmasweep hunt`'s aggressor alongside), until killed.", all);
    return s;
  }
  finish_fabric(s.fabric, s.timeout_s, raw);
  s.once = vm.count("once") > 0;
  if (!s.join.empty()) multicast_group("--join", s.join);
  return s;
}

DevicesOptions parse_devices(int argc, char** argv, std::string* help_text) {
  DevicesOptions d;
  po::options_description all("Options");
  all.add_options()("json", "machine-readable output")("help,h", "this help");
  po::variables_map vm = run_parser(argc, argv, all, nullptr);
  d.json = vm.count("json") > 0;
  if (vm.count("help")) {
    d.help = true;
    *help_text = render_help("usage: rdmasweep devices [--json]", all);
  }
  return d;
}

DoctorOptions parse_doctor(int argc, char** argv, std::string* help_text) {
  DoctorOptions d;
  FabricArgs raw;
  po::options_description all = fabric_options(d, raw);
  std::string config;
  std::map<std::string, std::string> axis;
  all.add_options()("config", po::value(&config), "the sweep you plan to run: its plan (as client --plan prints it), "
                    "and the memory and device-limit checks");
  for (const char* key : {"op", "mode", "qps"}) add_knob_option(all, axis, knob(key));  // the planned points
  add_length_options(all, axis);
  add_plan_from_option(all, &d.plan_from);
  all.add_options()("help,h", "this help");
  po::variables_map vm = run_parser_with_host(argc, argv, all, &d.host);
  if (vm.count("help")) {
    d.help = true;
    *help_text = render_help("usage: rdmasweep doctor [HOST] [options]\nChecks what breaks RDMA runs and says how to fix each; "
                         "with HOST, also the server there.", all);
    return d;
  }
  finish_fabric(d.fabric, d.timeout_s, raw);
  d.spec = sweep_from(config, axis);
  d.sweep_given = !config.empty() || !axis.empty();
  return d;
}

double parse_seconds(const std::string& option, const std::string& text) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  if (used == 0 || scale < 0 || !(v > 0)) throw UsageError(option + ": '" + text + "' is not a time (e.g. 90s, 10m, 1h)");
  return v * scale;
}

HuntOptions parse_hunt(int argc, char** argv, std::string* help_text) {
  HuntOptions h;
  FabricArgs raw;
  po::options_description all = fabric_options(h, raw);
  std::string budget = "10m";
  all.add_options()
    ("budget", po::value(&budget)->default_value("10m"), "time for the whole hunt (90s, 10m, 1h): exploring, then "
     "confirming and shrinking what it flagged")
    ("space", po::value(&h.space_file), "space file: the axes searched, the oracles' thresholds, repetitions "
     "(docs/hunt.md; default: every op and mode, 1-16 QPs, 64 B-64 KiB, the loop knobs, 1-2 threads)")
    ("seed", po::value(&h.seed), "random seed (default: from the clock; the report says which, to run the same search "
     "again)")
    ("out", po::value(&h.out_dir), "directory for anomalies.md, anomalies.json and points.json (every run); "
     "default hunt-DATE-TIME")
    ("help,h", "this help");
  po::variables_map vm = run_parser_with_host(argc, argv, all, &h.host);
  if (vm.count("help")) {
    h.help = true;
    *help_text = render_help("usage: rdmasweep hunt HOST [--budget 10m] [--space FILE] [--seed N] [--out DIR]\n"
                             "Searches the workload space against `rdmasweep server` on HOST for performance anomalies, "
                             "confirms each with repetitions, shrinks it to its smallest trigger and writes the command "
                             "that shows it again.", all);
    return h;
  }
  finish_fabric(h.fabric, h.timeout_s, raw);
  if (h.host.empty()) throw UsageError("hunt: give the server's host name or address (rdmasweep hunt HOST)");
  h.budget_s = parse_seconds("--budget", budget);
  h.seed_given = vm.count("seed") > 0;
  for (const char* o : {"device", "gid-index", "ib-port", "port", "timeout"})
    if (!vm[o].defaulted() && vm.count(o)) {
      std::ostringstream v;
      if (std::string(o) == "device") v << h.fabric.device;
      else if (std::string(o) == "gid-index") v << h.fabric.gid_index;
      else if (std::string(o) == "ib-port") v << unsigned{h.fabric.port};
      else if (std::string(o) == "port") v << h.port;
      else v << h.timeout_s;
      h.connect_args += (h.connect_args.empty() ? "--" : " --") + std::string(o) + " " + v.str();
    }
  if (h.out_dir.empty()) {
    char stamp[32];
    std::time_t t = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
    h.out_dir = std::string("hunt-") + stamp;
  }
  return h;
}

std::string default_out_path() {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  struct stat st {};
  std::string dir = (::stat("reports", &st) == 0 && S_ISDIR(st.st_mode)) ? "reports/" : "";
  return dir + "rdmasweep-" + stamp + ".json";
}

static bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> sweep_dirs() {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return {};
  std::string dir(exe, static_cast<size_t>(n));
  dir.erase(dir.rfind('/'));  // <prefix>/bin, or <build>/bench
  std::vector<std::string> dirs;
  for (const char* rel : {"/../share/rdmasweep/configs", "/../../configs"}) {
    char real[PATH_MAX];
    struct stat st {};
    if (::realpath((dir + rel).c_str(), real) && ::stat(real, &st) == 0 && S_ISDIR(st.st_mode)) dirs.push_back(real);
  }
  return dirs;
}

std::string resolve_sweep_file(const std::string& name) {
  // A path (anything with a slash) is taken as given: load_sweep_file says why it cannot read it.
  if (is_file(name) || name.find('/') != std::string::npos) return name;
  std::vector<std::string> dirs = sweep_dirs();
  for (const std::string& d : dirs)
    for (const std::string& f : {name, name + ".json"})
      if (is_file(d + "/" + f)) return d + "/" + f;
  if (dirs.empty()) throw UsageError("--config: no sweep file '" + name + "' here, and no installed sweeps beside rdmasweep: give a path");
  throw UsageError("--config: no sweep file '" + name + "' here or in " + dirs[0] +
                   " (`rdmasweep help --configs` lists them)");
}

}  // namespace rdmasweep::cli
