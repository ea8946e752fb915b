#include "core/host/nldev_stats.hpp"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rdmasweep::nldev {

namespace {

// The attributes in [p, end), as (type without flags, payload, length).
template <typename F>
void for_each_attr(const uint8_t* p, const uint8_t* end, F&& f) {
  while (end - p >= static_cast<long>(sizeof(nlattr))) {
    nlattr a;
    std::memcpy(&a, p, sizeof a);
    if (a.nla_len < sizeof a || a.nla_len > end - p) return;
    f(a.nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN, static_cast<size_t>(a.nla_len - NLA_HDRLEN));
    p += NLA_ALIGN(a.nla_len);
  }
}

void put_u32(std::vector<uint8_t>& m, uint16_t type, uint32_t v) {
  nlattr a{static_cast<uint16_t>(NLA_HDRLEN + sizeof v), type};
  const size_t at = m.size();
  m.resize(at + NLA_ALIGN(a.nla_len));
  std::memcpy(m.data() + at, &a, sizeof a);
  std::memcpy(m.data() + at + NLA_HDRLEN, &v, sizeof v);
}

class Socket {
 public:
  Socket() : fd_(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::optional<std::map<std::string, uint64_t>> read_hw_counters(uint32_t dev_index, uint32_t port) {
  Socket s;
  if (s.fd() < 0) return std::nullopt;
  std::vector<uint8_t> req(NLMSG_HDRLEN);
  put_u32(req, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  put_u32(req, RDMA_NLDEV_ATTR_PORT_INDEX, port);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(req.size());
  h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET);
  h.nlmsg_flags = NLM_F_REQUEST;
  h.nlmsg_seq = 1;
  std::memcpy(req.data(), &h, sizeof h);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(s.fd(), req.data(), req.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return std::nullopt;

  // One reply: a few kB for the drivers with the most counters.
  std::vector<uint8_t> buf(1 << 16);
  ssize_t n;
  do n = ::recv(s.fd(), buf.data(), buf.size(), 0);
  while (n < 0 && errno == EINTR);
  if (n < static_cast<ssize_t>(NLMSG_HDRLEN)) return std::nullopt;
  nlmsghdr r;
  std::memcpy(&r, buf.data(), sizeof r);
  if (r.nlmsg_type == NLMSG_ERROR || r.nlmsg_len > static_cast<uint32_t>(n) || r.nlmsg_len < NLMSG_HDRLEN)
    return std::nullopt;

  std::map<std::string, uint64_t> out;
  bool table = false;
  const uint8_t* p = buf.data() + NLMSG_HDRLEN;
  for_each_attr(p, buf.data() + r.nlmsg_len, [&](uint16_t type, const uint8_t* v, size_t len) {
    if (type != RDMA_NLDEV_ATTR_STAT_HWCOUNTERS) return;
    table = true;
    for_each_attr(v, v + len, [&](uint16_t etype, const uint8_t* e, size_t elen) {
      if (etype != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY) return;
      std::string name;
      std::optional<uint64_t> value;
      for_each_attr(e, e + elen, [&](uint16_t ftype, const uint8_t* f, size_t flen) {
        const char* text = reinterpret_cast<const char*>(f);
        if (ftype == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME) name.assign(text, strnlen(text, flen));
        if (ftype == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE && flen == sizeof(uint64_t)) {
          uint64_t x;
          std::memcpy(&x, f, sizeof x);
          value = x;
        }
      });
      if (!name.empty() && value) out[name] = *value;
    });
  });
  if (!table) return std::nullopt;
  return out;
}

}  // namespace rdmasweep::nldev
