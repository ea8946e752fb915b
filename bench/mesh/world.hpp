// The MPI side of `rdmasweep mesh`: MPI only starts the ranks, swaps connection data
// and synchronizes them, and these helpers are all of it (no measured byte goes
// through MPI). Every call is collective over MPI_COMM_WORLD. Only world.cpp and
// mesh_cmd.cpp include mpi.h; this header does not, so the rest of the mesh code
// speaks strings and ints.
#pragma once

#include <string>
#include <vector>

namespace rdmasweep::mesh_detail {

struct World {
  int rank = 0, size = 1;
};

// Every rank's string, in rank order, on every rank.
std::vector<std::string> allgather(const World& w, const std::string& mine);

// out[r] goes to rank r; returns what each rank sent to us.
std::vector<std::string> alltoall(const World& w, const std::vector<std::string>& out);

// Every rank's string, in rank order, on rank 0 (empty on the others).
std::vector<std::string> gather_to_root(const World& w, const std::string& mine);

// Rank 0's value, on every rank.
std::string broadcast(const World& w, std::string s);
int broadcast(int v);

// True on every rank when `mine` is true on any.
bool any_rank(bool mine);

// Every rank's error ("" when fine); all ranks learn the first one, prefixed with its rank.
std::string first_error(const World& w, const std::vector<std::string>& hosts, const std::string& mine);

// A barrier that sleeps while it waits, so ranks waiting for their turn (and a
// latency responder's main thread) leave the CPU to the flows that are measuring.
void quiet_barrier();

// A plain MPI barrier: once every rank is waiting in it (after a quiet_barrier), they
// leave it within microseconds of each other, so the moment each leaves is the
// phase's common zero for its flows' measured windows.
void barrier();

// The MPI library's version line, for the results' context.
std::string mpi_library_version();

}  // namespace rdmasweep::mesh_detail
