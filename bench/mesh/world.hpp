// The MPI side of `rdmasweep mesh`: MPI only starts the ranks, swaps connection data
// and synchronizes them, and these helpers are all of it (no measured byte goes
// through MPI). The collectives are over MPI_COMM_WORLD; a phase's DONE and results
// messages are point to point, so that a rank that stops answering cannot hang the
// others. Only world.cpp and mesh_cmd.cpp include mpi.h; this header does not, so the
// rest of the mesh code speaks strings and ints.
#pragma once

#include <chrono>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rdmasweep::mesh_detail {

struct World {
  int rank = 0, size = 1;
};

// Ranks that stopped answering (stopped, killed, their host or link gone).
class RanksGone : public std::runtime_error {
 public:
  RanksGone(std::vector<int> r, const std::string& what) : std::runtime_error(what), ranks(std::move(r)) {}
  std::vector<int> ranks;
};

// Notices ranks that stop answering. While a rank waits (for its flows, in a
// collective or a receive below), its main thread sends every other rank a heartbeat
// every 200 ms and reads theirs; a rank not heard from for `silence` is gone. Every
// wait in this file polls it once started; the collectives then throw RanksGone
// instead of waiting forever for a rank that will never join.
// `hosts`: each rank's host, to name a rank found gone with it ("rank 2 (host-c)").
void start_liveness(const World& w, std::chrono::milliseconds silence, const std::vector<std::string>& hosts);
// Waits for every rank (still noticing one that is gone), then stops the heartbeats
// and reads those left, so MPI_Finalize finds no message unmatched.
void stop_liveness();
// Sends due heartbeats and reads received ones; returns every rank found gone so far.
const std::set<int>& poll_liveness();
// "rank 2 (host-c)" for each, joined with ", ".
std::string describe_ranks(const std::vector<int>& ranks, const std::vector<std::string>& hosts);

// Point-to-point messages of a phase: sent without blocking (the payload is kept
// until MPI is done with it), received from a set of ranks while polling liveness.
void send_to(int to, int tag, std::string payload);
// Calls on_message(rank, payload) for one `tag` message from each rank in `from`, as
// they arrive, and `idle()` between polls; returns the ranks of `from` found gone
// before their message came.
std::set<int> receive_from(const std::set<int>& from, int tag,
                           const std::function<void(int, const std::string&)>& on_message,
                           const std::function<void()>& idle = nullptr);
// Calls on_message(rank, payload) for every `tag` message that has arrived, from
// any rank, without waiting for more.
void receive_arrived(int tag, const std::function<void(int, const std::string&)>& on_message);
// Waits until done() is true, polling liveness (and calling idle()) meanwhile.
void wait_until(const std::function<bool()>& done, const std::function<void()>& idle = nullptr);

// kTagFlow: the point protocol between a flow's two ends (bench/mesh/flow_link.hpp).
constexpr int kTagFlow = 11, kTagResults = 12, kTagMcastSent = 13, kTagProbe = 14;

// Every rank's string, in rank order, on every rank.
std::vector<std::string> allgather(const World& w, const std::string& mine);

// out[r] goes to rank r; returns what each rank sent to us.
std::vector<std::string> alltoall(const World& w, const std::vector<std::string>& out);

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
