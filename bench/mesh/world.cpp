// MPI collectives for `rdmasweep mesh`: see world.hpp.
#include "bench/mesh/world.hpp"

#include <mpi.h>

#include <chrono>
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

}  // namespace

std::vector<std::string> allgather(const World& w, const std::string& mine) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(w.size), offs(w.size);
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::string buf(static_cast<size_t>(offsets_of(lens, offs)), '\0');
  MPI_Allgatherv(mine.data(), len, MPI_CHAR, buf.data(), lens.data(), offs.data(), MPI_CHAR, MPI_COMM_WORLD);
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
  MPI_Alltoall(slen.data(), 1, MPI_INT, rlen.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::string rbuf(static_cast<size_t>(offsets_of(rlen, roff)), '\0');
  MPI_Alltoallv(sbuf.data(), slen.data(), soff.data(), MPI_CHAR, rbuf.data(), rlen.data(), roff.data(), MPI_CHAR,
                MPI_COMM_WORLD);
  return split(rbuf, rlen, roff);
}

std::vector<std::string> gather_to_root(const World& w, const std::string& mine) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(w.size), offs(w.size);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = offsets_of(lens, offs);
  std::string buf(w.rank == 0 ? static_cast<size_t>(total) : 0, '\0');
  MPI_Gatherv(mine.data(), len, MPI_CHAR, buf.data(), lens.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (w.rank != 0) return {};
  return split(buf, lens, offs);
}

std::string broadcast(const World& w, std::string s) {
  unsigned long long len = s.size();
  MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (w.rank != 0) s.assign(len, '\0');
  MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
  return s;
}

int broadcast(int v) {
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return v;
}

bool any_rank(bool mine) {
  int m = mine ? 1 : 0, any = 0;
  MPI_Allreduce(&m, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
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
  int done = 0;
  while (true) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
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
