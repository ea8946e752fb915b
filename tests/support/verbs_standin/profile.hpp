// A NIC profile for the verbs stand-in (tests/support/verbs-profiles/README.md has
// the format): `key = value` lines, read once, checked whole so a typo is one line
// naming it rather than a limit silently left alone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace standin {

class Profile {
 public:
  // Reads `path`; throws std::runtime_error with "PATH:LINE: what" on any fault.
  static Profile load(const std::string& path);
  // A name ("cx5") is looked up in `dir` as NAME.profile; anything with a '/' is a path.
  static std::string resolve(const std::string& name_or_path, const std::string& dir);

  std::optional<uint64_t> number(const std::string& key) const;
  std::optional<std::string> text(const std::string& key) const;
  bool yes(const std::string& key, bool otherwise) const;
  const std::string& name() const { return name_; }

 private:
  std::map<std::string, std::string> values_;
  std::string name_;
};

// The keys a profile may hold and whether each is a number.
bool known_key(const std::string& key, bool* numeric);

}  // namespace standin
