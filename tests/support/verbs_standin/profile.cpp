#include "profile.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace standin {

namespace {
struct Key {
  const char* name;
  bool numeric;
};
// ibv_device_attr / ibv_port_attr names where there is one, so a profile reads like
// `ibv_devinfo -v` output.
constexpr Key kKeys[] = {
    {"name", false},          {"transport", false},     {"link_layer", false},       {"rc", false},
    {"ud", false},            {"vendor_id", true},      {"vendor_part_id", true},    {"hw_ver", true},
    {"fw_ver", false},        {"max_mr_size", true},    {"max_qp", true},            {"max_qp_wr", true},
    {"max_sge", true},        {"max_sge_rd", true},     {"max_cq", true},            {"max_cqe", true},
    {"max_mr", true},         {"max_pd", true},         {"max_qp_rd_atom", true},    {"max_qp_init_rd_atom", true},
    {"max_res_rd_atom", true}, {"atomic_cap", false},   {"max_srq", true},           {"max_srq_wr", true},
    {"max_srq_sge", true},    {"max_ah", true},         {"max_mcast_grp", true},     {"max_inline", true},
    {"active_mtu", true},     {"max_mtu", true},        {"gid_tbl_len", true},       {"max_msg_sz", true},
    {"counters", false},
};

std::string trim(const std::string& s) {
  const char* ws = " \t\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool parse_number(const std::string& v, uint64_t* out) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v.c_str(), &end, 0);  // decimal or 0x hex, as ibv_devinfo prints
  if (errno != 0 || *end != '\0' || v[0] == '-') return false;
  *out = n;
  return true;
}
}  // namespace

bool known_key(const std::string& key, bool* numeric) {
  for (const Key& k : kKeys)
    if (key == k.name) {
      if (numeric) *numeric = k.numeric;
      return true;
    }
  return false;
}

std::string Profile::resolve(const std::string& name_or_path, const std::string& dir) {
  if (name_or_path.find('/') != std::string::npos) return name_or_path;
  return dir + "/" + name_or_path + ".profile";
}

Profile Profile::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read (" + std::strerror(errno) + ")");
  Profile p;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string where = path + ":" + std::to_string(n) + ": ";
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) throw std::runtime_error(where + "not 'key = value': " + line);
    std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    bool numeric = false;
    if (!known_key(key, &numeric)) throw std::runtime_error(where + "unknown key '" + key + "'");
    uint64_t ignored;
    if (numeric && !parse_number(value, &ignored))
      throw std::runtime_error(where + key + " takes a number (decimal or 0x hex), not '" + value + "'");
    if (p.values_.count(key)) throw std::runtime_error(where + key + " given twice");
    p.values_[key] = value;
  }
  auto one_of = [&](const char* key, std::initializer_list<const char*> allowed) {
    auto v = p.text(key);
    if (!v) return;
    for (const char* a : allowed)
      if (*v == a) return;
    std::string all;
    for (const char* a : allowed) all += std::string(all.empty() ? "" : ", ") + a;
    throw std::runtime_error(path + ": " + key + " is '" + *v + "'; it takes one of " + all);
  };
  one_of("transport", {"roce", "infiniband", "iwarp", "unspecified"});
  one_of("link_layer", {"ethernet", "infiniband", "unspecified"});
  one_of("atomic_cap", {"none", "hca", "glob"});
  for (const char* b : {"rc", "ud", "counters"}) one_of(b, {"yes", "no"});
  if (auto m = p.number("active_mtu"); m && (*m < 256 || *m > 4096 || (*m & (*m - 1))))
    throw std::runtime_error(path + ": active_mtu " + std::to_string(*m) + " is not 256, 512, 1024, 2048 or 4096");
  p.name_ = p.text("name").value_or(path);
  return p;
}

std::optional<uint64_t> Profile::number(const std::string& key) const {
  auto it = values_.find(key);
  uint64_t n = 0;
  if (it == values_.end() || !parse_number(it->second, &n)) return std::nullopt;
  return n;
}

std::optional<std::string> Profile::text(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

bool Profile::yes(const std::string& key, bool otherwise) const {
  auto v = text(key);
  return v ? *v == "yes" : otherwise;
}

}  // namespace standin
