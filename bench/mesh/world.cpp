// MPI collectives for `rdmasweep mesh`: see world.hpp.
#include "bench/mesh/world.hpp"

#include <mpi.h>

#include <chrono>
#include <list>
#include <string>
#include <thread>
#include <vector>

namespace rdmasweep::mesh_detail {

namespace {

// Each rank's offset in a buffer holding every rank's lens[r] bytes back to back;
// returns the buffer's length.
int offsets_of(const std::vector<int>& lens, std::vector<int>& offs) {
  int total = 0;
  for (size_t r = 0; r < lens.size(); ++r) {
    offs[r] = total;
    total += lens[r];
  }
  return total;
}

std::vector<std::string> split(const std::string& buf, const std::vector<int>& lens, const std::vector<int>& offs) {
  std::vector<std::string> out(lens.size());
  for (size_t r = 0; r < lens.size(); ++r) out[r] = buf.substr(offs[r], lens[r]);
  return out;
}

using Clock = std::chrono::steady_clock;
constexpr int kTagBeat = 10;
constexpr std::chrono::milliseconds kBeatEvery{200};

struct LiveState {
  bool on = false;
  World w;
  std::chrono::milliseconds silence{};
  std::vector<Clock::time_point> last_seen;
  Clock::time_point last_sent{};
  std::set<int> gone;
  std::vector<std::string> hosts;  // each rank's, to name a rank found gone
};
LiveState& live() {
  static LiveState s;
  return s;
}
char g_beat = 1;

// Sends whose buffers MPI may still read.
struct Outgoing {
  MPI_Request req = MPI_REQUEST_NULL;
  std::string data;
};
std::list<Outgoing>& outgoing() {
  static std::list<Outgoing> o;
  return o;
}
void reap_sends() {
  for (auto it = outgoing().begin(); it != outgoing().end();) {
    int done = 0;
    MPI_Test(&it->req, &done, MPI_STATUS_IGNORE);
    it = done ? outgoing().erase(it) : std::next(it);
  }
}

// Takes every heartbeat that has arrived, telling `seen` whose.
template <class Seen>
void read_beats(Seen seen) {
  receive_arrived(kTagBeat, [&seen](int from, const std::string&) { seen(from); });
}

void nap() { std::this_thread::sleep_for(std::chrono::microseconds(100)); }

// Completes a non-blocking collective, or throws RanksGone when a rank it needs
// stopped answering (it then never completes).
void wait(MPI_Request* req) {
  int done = 0;
  while (true) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const std::set<int>& gone = poll_liveness();
    if (!gone.empty()) {
      std::vector<int> ranks(gone.begin(), gone.end());
      throw RanksGone(ranks, describe_ranks(ranks, live().hosts) + " stopped answering (no heartbeat for " +
                                 std::to_string(live().silence.count() / 1000) + " s)");
    }
    nap();
  }
}

}  // namespace

void start_liveness(const World& w, std::chrono::milliseconds silence, const std::vector<std::string>& hosts) {
  LiveState& s = live();
  s.on = true;
  s.w = w;
  s.hosts = hosts;
  s.silence = silence;
  s.last_seen.assign(static_cast<size_t>(w.size), Clock::now());
}

void stop_liveness() {
  LiveState& s = live();
  if (!s.on) return;
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  wait(&req);
  s.on = false;
  for (Outgoing& o : outgoing()) MPI_Wait(&o.req, MPI_STATUS_IGNORE);  // all were received before the barrier
  outgoing().clear();
  read_beats([](int) {});
  receive_arrived(kTagFlow, [](int, const std::string&) {});  // a late ERROR to an end that had finished
}

const std::set<int>& poll_liveness() {
  LiveState& s = live();
  if (!s.on) return s.gone;
  const Clock::time_point now = Clock::now();
  if (now - s.last_sent >= kBeatEvery) {
    for (int r = 0; r < s.w.size; ++r) {
      if (r == s.w.rank || s.gone.count(r)) continue;
      MPI_Request q;
      MPI_Isend(&g_beat, 1, MPI_CHAR, r, kTagBeat, MPI_COMM_WORLD, &q);
      MPI_Request_free(&q);
    }
    s.last_sent = now;
  }
  read_beats([&](int from) { s.last_seen[static_cast<size_t>(from)] = now; });
  for (int r = 0; r < s.w.size; ++r)
    if (r != s.w.rank && now - s.last_seen[static_cast<size_t>(r)] > s.silence) s.gone.insert(r);
  reap_sends();
  return s.gone;
}

std::string describe_ranks(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  std::string out;
  for (int r : ranks) {
    if (!out.empty()) out += ", ";
    out += "rank " + std::to_string(r);
    if (r >= 0 && static_cast<size_t>(r) < hosts.size()) out += " (" + hosts[static_cast<size_t>(r)] + ")";
  }
  return out;
}

void send_to(int to, int tag, std::string payload) {
  outgoing().push_back(Outgoing{MPI_REQUEST_NULL, std::move(payload)});
  Outgoing& o = outgoing().back();
  MPI_Isend(o.data.data(), static_cast<int>(o.data.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD, &o.req);
}

std::set<int> receive_from(const std::set<int>& from, int tag,
                           const std::function<void(int, const std::string&)>& on_message,
                           const std::function<void()>& idle) {
  std::set<int> waiting = from, lost;
  while (!waiting.empty()) {
    bool got = false;
    for (auto it = waiting.begin(); it != waiting.end();) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(*it, tag, MPI_COMM_WORLD, &flag, &st);
      if (!flag) {
        ++it;
        continue;
      }
      int n = 0;
      MPI_Get_count(&st, MPI_CHAR, &n);
      std::string buf(static_cast<size_t>(n), '\0');
      MPI_Recv(buf.data(), n, MPI_CHAR, *it, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const int r = *it;
      it = waiting.erase(it);
      on_message(r, buf);
      got = true;
    }
    if (waiting.empty()) break;
    for (int r : poll_liveness())
      if (waiting.erase(r)) lost.insert(r);
    if (idle) idle();
    if (!got) nap();
  }
  return lost;
}

void receive_arrived(int tag, const std::function<void(int, const std::string&)>& on_message) {
  while (true) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return;
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::string buf(static_cast<size_t>(n), '\0');
    MPI_Recv(buf.data(), n, MPI_CHAR, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    on_message(st.MPI_SOURCE, buf);
  }
}

void wait_until(const std::function<bool()>& done, const std::function<void()>& idle) {
  while (!done()) {
    poll_liveness();
    if (idle) idle();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::vector<std::string> allgather(const World& w, const std::string& mine) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(w.size), offs(w.size);
  MPI_Request req;
  MPI_Iallgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD, &req);
  wait(&req);
  std::string buf(static_cast<size_t>(offsets_of(lens, offs)), '\0');
  MPI_Iallgatherv(mine.data(), len, MPI_CHAR, buf.data(), lens.data(), offs.data(), MPI_CHAR, MPI_COMM_WORLD, &req);
  wait(&req);
  return split(buf, lens, offs);
}

std::vector<std::string> alltoall(const World& w, const std::vector<std::string>& out) {
  std::vector<int> slen(w.size), rlen(w.size), soff(w.size), roff(w.size);
  std::string sbuf;
  for (int r = 0; r < w.size; ++r) {
    soff[r] = static_cast<int>(sbuf.size());
    slen[r] = static_cast<int>(out[r].size());
    sbuf += out[r];
  }
  MPI_Request req;
  MPI_Ialltoall(slen.data(), 1, MPI_INT, rlen.data(), 1, MPI_INT, MPI_COMM_WORLD, &req);
  wait(&req);
  std::string rbuf(static_cast<size_t>(offsets_of(rlen, roff)), '\0');
  MPI_Ialltoallv(sbuf.data(), slen.data(), soff.data(), MPI_CHAR, rbuf.data(), rlen.data(), roff.data(), MPI_CHAR,
                 MPI_COMM_WORLD, &req);
  wait(&req);
  return split(rbuf, rlen, roff);
}

std::string broadcast(const World& w, std::string s) {
  unsigned long long len = s.size();
  MPI_Request req;
  MPI_Ibcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD, &req);
  wait(&req);
  if (w.rank != 0) s.assign(len, '\0');
  MPI_Ibcast(s.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD, &req);
  wait(&req);
  return s;
}

int broadcast(int v) {
  MPI_Request req;
  MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
  wait(&req);
  return v;
}

bool any_rank(bool mine) {
  int m = mine ? 1 : 0, any = 0;
  MPI_Request req;
  MPI_Iallreduce(&m, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
  wait(&req);
  return any != 0;
}

std::string first_error(const World& w, const std::vector<std::string>& hosts, const std::string& mine) {
  std::vector<std::string> all = allgather(w, mine);
  for (int r = 0; r < w.size; ++r)
    if (!all[r].empty()) return "rank " + std::to_string(r) + " (" + hosts[r] + "): " + all[r];
  return "";
}

void quiet_barrier() {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  wait(&req);
}

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

std::string mpi_library_version() {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int liblen = 0;
  MPI_Get_library_version(lib, &liblen);
  std::string mpi(lib, static_cast<size_t>(liblen));
  if (auto nl = mpi.find_first_of("\r\n"); nl != std::string::npos) mpi.resize(nl);
  return mpi;
}

}  // namespace rdmasweep::mesh_detail
