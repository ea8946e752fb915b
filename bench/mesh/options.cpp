// `rdmasweep mesh`'s option parsing (Boost.Program_options): see options.hpp.
#include "bench/mesh/options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "bench/cli.hpp"
#include "bench/mesh/launch.hpp"
#include "core/engine/multicast.hpp"
#include "core/measure/clock.hpp"

namespace rdmasweep::mesh_detail {

namespace po = boost::program_options;

const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::Pairs: return "pairs";
    case Pattern::Incast: return "incast";
    case Pattern::AllToAll: return "all-to-all";
    case Pattern::Multicast: return "multicast";
    case Pattern::Victim: return "victim";
  }
  return "?";
}

const char* to_string(Schedule s) { return s == Schedule::Matching ? "matching" : "sequential"; }

namespace {

void set_pattern(MeshOptions& m, const std::string& pattern, const std::string& schedule) {
  if (pattern == "pairs") m.pattern = Pattern::Pairs;
  else if (pattern == "incast") m.pattern = Pattern::Incast;
  else if (pattern == "all-to-all" || pattern == "alltoall") m.pattern = Pattern::AllToAll;
  else if (pattern == "multicast") m.pattern = Pattern::Multicast;
  else if (pattern == "victim") m.pattern = Pattern::Victim;
  else throw cli::UsageError("--pattern: '" + pattern + "' is not one of pairs, incast, all-to-all, multicast, victim");
  if (schedule.empty()) return;
  if (schedule == "matching") m.schedule = Schedule::Matching;
  else if (schedule == "sequential") m.schedule = Schedule::Sequential;
  else throw cli::UsageError("--schedule: '" + schedule + "' is not one of matching, sequential");
  if (m.pattern != Pattern::Pairs) throw cli::UsageError("--schedule orders --pattern pairs only");
  m.schedule_given = true;
}

// --pattern victim's background, from --beside (each rank parses its own: the same text).
void set_background(MeshOptions& m) {
  if (m.pattern != Pattern::Victim) {
    if (!m.beside.empty()) throw cli::UsageError("--beside goes with --pattern victim (the client takes it too)");
    return;
  }
  if (m.beside.empty())
    throw cli::UsageError("--pattern victim needs --beside KNOBS: the background every rank but 0 and 1 sends onto "
                          "rank 0, e.g. --beside 'op=write,mode=bw,qps=8,size=64k'");
  try {
    m.background = background_point(m.beside);
  } catch (const ConfigError& e) {
    throw cli::UsageError(e.what());
  }
  if (m.background->work.mode != Mode::Bw || m.background->knobs.bidir || is_ud(*m.background))
    throw cli::UsageError("--beside: the background onto rank 0 is an RC bandwidth workload one way (mode=bw)");
}

// The sweep (rank 0 only): the sweep file, then the command line's axes over it.
void load_mesh_sweep(MeshOptions& m, const std::map<std::string, std::string>& axis) {
  m.spec = cli::sweep_from(m.config_file, axis);
  // A mesh flow's far end only answers; both directions are two flows (--pattern all-to-all).
  if (std::find(m.spec.bidir.begin(), m.spec.bidir.end(), 1) != m.spec.bidir.end())
    throw cli::UsageError("--bidir runs between a client and a server; in a mesh, --pattern all-to-all runs both directions");
  // --rate paces each flow (each is a point's loop on its own QPs). A share of the flat-out
  // rate would need every flow's own flat-out twin first: the client's alone.
  for (uint64_t r : m.spec.rate)
    if (is_share(r))
      throw cli::UsageError("--rate " + rate_string(r) + ": in a mesh each flow is paced at an absolute rate (e.g. "
                            "5kpps or 1gbps); a share of the flat-out rate is the client's alone");
  if (m.pattern == Pattern::Multicast) return cli::multicast_sweep(m.spec, axis, m.config_file, "--pattern multicast");
  // A mesh flow's receiver holds its sender to exact counts; UD's losses are the client's to count.
  for (const std::string& t : m.spec.transport)
    if (t != "rc") throw cli::UsageError("--transport " + t + ": mesh runs RC only; measure UD with rdmasweep client");
  if (m.pattern != Pattern::Pairs && m.pattern != Pattern::Victim) {
    // Latency is a property of one link: it is measured by pairs (and the victim's pair). A sweep that also
    // has bandwidth points (configs/quick.json) runs those and says what it left out.
    std::vector<std::string> modes;
    for (const std::string& mode : m.spec.mode)
      if (mode != "lat") modes.push_back(mode);
    if (modes.empty())
      throw cli::UsageError(std::string("--mode lat runs with --pattern pairs only (got ") + to_string(m.pattern) + ")");
    if (modes.size() != m.spec.mode.size())
      std::fprintf(stderr, "rdmasweep mesh: latency points skipped: --pattern %s measures bandwidth (latency runs with pairs)\n",
                   to_string(m.pattern));
    m.spec.mode = modes;
  }
}

}  // namespace

namespace {

// What the command line gave as text, before it is checked into MeshOptions.
struct MeshArgs {
  cli::FabricArgs fabric;
  std::string pattern, schedule, policy;
  std::map<std::string, std::string> axis;
};

po::options_description workload_options(MeshOptions& m, MeshArgs& a) {
  po::options_description work(cli::kWorkloadTitle);
  work.add_options()
    ("pattern", po::value(&a.pattern)->default_value("pairs"),
     "pairs (every ordered pair), incast (all to rank 0 at once), all-to-all, multicast (rank 0 sends UD "
     "datagrams to a group every other rank joined through RDMA-CM: received and lost counted per receiver), or "
     "victim (rank 1 -> rank 0 alone, then beside the --beside background every other rank sends onto rank 0)")
    ("beside", po::value(&m.beside), "--pattern victim: KNOBS of the background every rank but 0 and 1 sends onto "
                                     "rank 0, e.g. 'op=write,mode=bw,qps=8,size=64k' (as client --beside)")
    ("group", po::value(&m.group), "--pattern multicast: the group's numeric IPv4 or IPv6 multicast address "
                                   "(default 239.255.82.1)")
    ("schedule", po::value(&a.schedule),
     "pairs: matching (disjoint pairs measured together, 2(N-1) phases; the default on more than 2 ranks) or "
     "sequential (one ordered pair at a time, N(N-1) phases: for fabrics where concurrent pairs may share a link)");
  cli::add_workload_options(work, a.axis, &m.config_file, &a.policy);  // per flow
  return work;
}

po::options_description output_options(MeshOptions& m) {
  po::options_description out("Output");
  out.add_options()
    ("out", po::value(&m.out), "results file (Google Benchmark JSON), written by rank 0 after every point");
  cli::add_clock_option(out, &m.clock);
  cli::add_interval_option(out, &m.interval);
  cli::add_progress_file_option(out, &m.progress_file);
  out.add_options()
    ("plan", po::value(&m.plan), "print what a run on N ranks would do (phases, flows, QPs and memory per rank, "
                                 "an estimated duration), without MPI or a device, and exit")
    ("json", "with --plan: print the plan as JSON")
    ("help,h", "this help");
  return out;
}

// The options' checks, each a one-line UsageError; then the sweep (when asked).
void finish_mesh(MeshOptions& m, MeshArgs& a, const po::variables_map& vm, bool load_sweep) {
  cli::finish_fabric(m.fabric, m.timeout_s, a.fabric);
  set_pattern(m, a.pattern, a.schedule);
  if (vm.count("group") && m.pattern != Pattern::Multicast) throw cli::UsageError("--group goes with --pattern multicast");
  set_background(m);
  cli::multicast_group("--group", m.group);
  if (!m.hosts.empty()) parse_hosts(m.hosts);  // a bad list: one line, before anything starts
  if (vm.count("plan") && (m.plan < 2 || m.plan > (1 << 20)))
    throw cli::UsageError("--plan: " + std::to_string(m.plan) + " ranks is out of range 2..1048576");
  m.plan_json = vm.count("json") > 0;
  if (m.plan_json && !m.plan) throw cli::UsageError("--json goes with --plan N");
  m.cap_to_cq = cli::cq_policy_caps(a.policy);
  cli::check_interval(vm.count("interval") > 0, m.interval);
  try {
    ticks::parse(m.clock);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  if (a.axis.count("iters") && a.axis.count("duration")) throw cli::UsageError(refusal_text("iters-duration"));
  if (load_sweep) load_mesh_sweep(m, a.axis);
  if (m.out.empty()) m.out = cli::default_out_path();
}

}  // namespace

MeshOptions parse_mesh(int argc, char** argv, std::string* help_text, bool load_sweep) {
  MeshOptions m;
  MeshArgs a;
  po::options_description fabric("Fabric (each rank opens its own; with mpirun's A : B syntax ranks may differ)");
  cli::add_fabric_options(fabric, m.fabric, m.timeout_s, a.fabric);
  po::options_description launch("Launch");
  launch.add_options()
    ("hosts", po::value(&m.hosts), "HOST[:RANKS],...: start the ranks with mpirun on these hosts (one rank each "
                                   "unless :RANKS, placed host by host in turn), once every host has answered ssh; "
                                   "a host that does not is one line, and nothing starts");
  po::options_description all;
  all.add(launch).add(fabric).add(workload_options(m, a)).add(output_options(m));
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw cli::UsageError(e.what());
  }
  if (vm.count("help")) {
    m.help = true;
    *help_text = cli::render_help(
        "usage: rdmasweep mesh --hosts A,B,C --pattern pairs|incast|all-to-all|multicast [options]\n"
        "   or: mpirun -np N rdmasweep mesh --pattern pairs|incast|all-to-all|multicast [options]\n"
        "Runs the sweep between N ranks (one per node on a cluster: mpirun --map-by ppr:1:node).\n"
        "MPI only starts the ranks and swaps connection data; all measured traffic is RDMA on our own QPs.",
        all);
    return m;
  }
  finish_mesh(m, a, vm, load_sweep);
  return m;
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

}  // namespace rdmasweep::mesh_detail
