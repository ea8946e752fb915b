// null0's atomics, the one thing it moves: a memory region registered for remote
// atomics has its pages backed by a file in /dev/shm, mapped again at the same address,
// and its rkey names that file. A fetch-and-add or compare-and-swap from any process on
// this host then changes the owner's words as a NIC's would (rdmasweep checks the
// server's words after every atomic point), and the old value lands in the WR's local
// buffer. All of this is setup or a QP's first atomic to a region; the datapath keeps
// the last region it reached (AtomicTarget) and looks nothing up while it stays there.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <mutex>
#include <string>
#include <vector>

#include "null_objects.hpp"

namespace standin::null {

namespace {

constexpr uint64_t kMagic = 0x306c6c756e5f7372;  // "rs_null0"
constexpr char kDir[] = "/dev/shm/";
constexpr char kPrefix[] = "rdmasweep-null0-";

// The file's first page; the region's pages follow it.
struct Header {
  uint64_t magic;
  int64_t pid;   // the owner: its file is stale once it is gone
  uint64_t lo;   // the region's pages in the owner, [lo, hi)
  uint64_t hi;
};

struct Published {
  uint64_t lo, hi;
  std::vector<uint32_t> keys;  // a file each, hard links of one another
};

std::mutex mu;
std::vector<Published> published;   // this process's regions
std::vector<AtomicTarget> mapped;   // other processes' regions, as mapped here
uint32_t serial = 0;

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
std::string path_of(uint32_t key) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%s%08x", kDir, kPrefix, key);
  return name;
}
void warn(const std::string& what) { std::fprintf(stderr, "verbs stand-in: null0: %s\n", what.c_str()); }

bool read_header(int fd, Header& h) {
  return pread(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h) && h.magic == kMagic && h.hi > h.lo;
}

// Files whose owner has gone (killed before its atexit): removed as any region is
// published, so a run leaves no pages behind for long.
void remove_stale() {
  DIR* d = opendir(kDir);
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, kPrefix, sizeof kPrefix - 1) != 0) continue;
    const std::string p = std::string(kDir) + e->d_name;
    const int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    Header h{};
    if (read_header(fd, h) && kill(static_cast<pid_t>(h.pid), 0) != 0 && errno == ESRCH) unlink(p.c_str());
    close(fd);
  }
  closedir(d);
}

void unlink_all() {
  std::lock_guard<std::mutex> g(mu);
  for (const Published& r : published)
    for (uint32_t k : r.keys) unlink(path_of(k).c_str());
  published.clear();
}

// A key no file has: high bit set (setup's own keys count up from 0x1000), the rest
// from the pid and a count, stepped on where taken.
int create_file(uint32_t& key) {
  for (int tries = 0; tries < 64; ++tries) {
    key = 0x80000000u | ((static_cast<uint32_t>(getpid()) * 2654435761u + serial++) & 0x7fffffffu);
    const int fd = open(path_of(key).c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

uint32_t publish_new(uint64_t lo, uint64_t hi) {
  static const bool cleanup = [] {
    remove_stale();
    return std::atexit(unlink_all) == 0;
  }();
  (void)cleanup;
  uint32_t key = 0;
  const int fd = create_file(key);
  if (fd < 0) {
    warn(std::string("cannot create a file in ") + kDir + " for a region's atomics (" + std::strerror(errno) +
         "): atomics to it change nothing");
    return 0;
  }
  const size_t len = hi - lo;
  const Header h{kMagic, getpid(), lo, hi};
  // The region's words as they are now go in first; then its pages become the file's.
  const bool ok = ftruncate(fd, static_cast<off_t>(page() + len)) == 0 &&
                  pwrite(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h) &&
                  pwrite(fd, reinterpret_cast<void*>(lo), len, static_cast<off_t>(page())) ==
                      static_cast<ssize_t>(len) &&
                  mmap(reinterpret_cast<void*>(lo), len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                       static_cast<off_t>(page())) != MAP_FAILED;
  const int err = errno;
  close(fd);
  if (!ok) {
    unlink(path_of(key).c_str());
    warn(std::string("cannot back a region's pages with a shared file (") + std::strerror(err) +
         "): atomics to it change nothing");
    return 0;
  }
  published.push_back(Published{lo, hi, {key}});
  return key;
}

}  // namespace

uint32_t publish_atomic_region(void* addr, size_t length, uint64_t iova) {
  if (length == 0 || iova != reinterpret_cast<uintptr_t>(addr)) {
    warn("a region registered for remote atomics at an iova of its own: atomics to it change nothing");
    return 0;
  }
  const uint64_t lo = reinterpret_cast<uintptr_t>(addr) & ~(page() - 1);
  const uint64_t hi = (reinterpret_cast<uintptr_t>(addr) + length + page() - 1) & ~(page() - 1);
  std::lock_guard<std::mutex> g(mu);
  for (Published& r : published) {
    if (hi <= r.lo || lo >= r.hi) continue;
    if (lo < r.lo || hi > r.hi) {
      warn("a region for remote atomics overlaps part of another: atomics to it change nothing");
      return 0;
    }
    // Inside one already published: a new name (a hard link) for the same pages.
    uint32_t key = 0;
    const int fd = create_file(key);
    if (fd < 0) return 0;
    close(fd);
    unlink(path_of(key).c_str());
    if (link(path_of(r.keys.front()).c_str(), path_of(key).c_str()) != 0) return 0;
    r.keys.push_back(key);
    return key;
  }
  return publish_new(lo, hi);
}

void unpublish_atomic_region(uint32_t key) {
  std::lock_guard<std::mutex> g(mu);
  for (size_t i = 0; i < published.size(); ++i) {
    auto& keys = published[i].keys;
    for (size_t j = 0; j < keys.size(); ++j) {
      if (keys[j] != key) continue;
      unlink(path_of(key).c_str());  // the pages stay mapped, as the owner's memory
      keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(j));
      if (keys.empty()) published.erase(published.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

bool find_atomic_target(uint32_t rkey, uint64_t addr, AtomicTarget& t) {
  std::lock_guard<std::mutex> g(mu);
  auto inside = [&](const AtomicTarget& m) { return m.rkey == rkey && addr >= m.lo && addr + 8 <= m.hi; };
  for (const AtomicTarget& m : mapped) {
    if (!inside(m)) continue;
    t = m;
    return true;
  }
  const int fd = open(path_of(rkey).c_str(), O_RDWR | O_CLOEXEC);
  Header h{};
  const bool found = fd >= 0 && read_header(fd, h);
  AtomicTarget m{rkey, h.lo, h.hi, nullptr};
  if (found && h.pid == getpid()) {
    m.base = reinterpret_cast<char*>(h.lo);  // this process's own region
  } else if (found) {
    void* p = mmap(nullptr, h.hi - h.lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(page()));
    if (p != MAP_FAILED) m.base = static_cast<char*>(p);
  }
  if (fd >= 0) close(fd);
  if (m.base != nullptr && h.pid != getpid() && (!inside(m) || (addr & 7) != 0)) {
    munmap(m.base, h.hi - h.lo);  // mapped for nothing: not kept, so a later miss maps it again
    m.base = nullptr;
  }
  if (m.base == nullptr || !inside(m) || (addr & 7) != 0) {
    static bool warned = false;
    if (!warned)
      warn("an atomic names rkey " + std::to_string(rkey) + " at an address no process on this host registered " +
           "for remote atomics (or not 8-byte aligned): it changes nothing (said once)");
    warned = true;
    t = AtomicTarget{rkey, 0, ~uint64_t{0}, nullptr};  // the QP's atomics with this rkey: nothing to change
    return false;
  }
  mapped.push_back(m);
  t = m;
  return true;
}

}  // namespace standin::null
