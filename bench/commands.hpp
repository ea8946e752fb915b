// The subcommands of the rdmasweep tool. Each returns the process exit code.
#pragma once

#include <atomic>

namespace rdmasweep {

// Exit codes shared by every subcommand.
enum Exit : int { kOk = 0, kFailed = 1, kUsage = 2, kInterrupted = 130 };

extern std::atomic<bool> g_interrupted;  // set by SIGINT/SIGTERM

int client_main(int argc, char** argv);
int server_main(int argc, char** argv);
namespace cli {
struct ClientOptions;
}
int multicast_client_main(cli::ClientOptions& o);  // client --multicast (bench/multicast_client.cpp)
int devices_main(int argc, char** argv);
int doctor_main(int argc, char** argv);
int mesh_main(int argc, char** argv);        // checks the options, then execs rdmasweep-mesh
int mesh_ranks_main(int argc, char** argv);  // in rdmasweep-mesh: one rank, started by mpirun
int hunt_main(int argc, char** argv);
int render_main(int argc, char** argv);  // not in help: a results file shown as --format shows it

}  // namespace rdmasweep
