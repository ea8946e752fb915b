// `rdmasweep mesh --hosts a,b:2,c`: rdmasweep starts mpirun itself, once every host
// has answered ssh. mpirun's own word on a host it cannot reach is a page of possible
// causes; here it is one line per host, with ssh's reason, before any rank starts.
// MPI-free (rdmasweep itself runs it; the ranks never see --hosts).
#pragma once

#include <string>
#include <vector>

namespace rdmasweep::mesh_detail {

struct HostSlots {
  std::string host;
  int ranks = 1;
};

// "a,b:2,c" -> {a,1},{b,2},{c,1}; throws cli::UsageError naming what is wrong.
std::vector<HostSlots> parse_hosts(const std::string& list);

// The command line without --hosts (and its value), for the ranks.
std::vector<std::string> without_hosts(int argc, char** argv);

// mpirun's argv: one rank per slot, placed host by host in turn (--map-by node), each
// running `self mesh ARGS`.
std::vector<std::string> mpirun_argv(const std::vector<HostSlots>& hosts, const std::string& self,
                                     const std::vector<std::string>& mesh_args);

// Asks every host at once over ssh (BatchMode, no password prompt) to run `true`;
// returns one line per host that did not, with ssh's own reason. `connect_s` bounds
// each TCP connection (a host that is down); `answer_s` the whole login, which on a
// loaded or emulated host can take many seconds of key exchange (a host that
// accepts and then stalls).
std::vector<std::string> unreachable_hosts(const std::vector<HostSlots>& hosts, int connect_s, int answer_s);

// Runs under an MPI launcher already (mpirun, srun): --hosts would start a second one.
bool under_mpi_launcher();

}  // namespace rdmasweep::mesh_detail
