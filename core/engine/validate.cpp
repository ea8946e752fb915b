#include "core/engine/validate.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "core/verbs/errors.hpp"

namespace rdmasweep {

namespace {

constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

uint64_t seed_of(uint32_t qp, uint32_t seq) {
  uint64_t z = (uint64_t{qp} << 32 | seq) + 0x9e3779b97f4a7c15ull;  // splitmix64: nearby (qp, seq) differ everywhere
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Word i of a message: one multiply-add and a shift per 8 bytes, cheap enough to
// write and check every byte of every message.
inline uint64_t word_of(uint64_t seed, uint64_t i) {
  uint64_t w = seed + i * 0x9e3779b97f4a7c15ull;
  return w ^ (w >> 29);
}

inline uint8_t byte_of(uint64_t seed, uint64_t offset) {
  return static_cast<uint8_t>(word_of(seed, offset / 8) >> (8 * (offset % 8)));
}

}  // namespace

uint8_t pattern_byte(uint32_t qp, uint32_t seq, uint64_t offset) { return byte_of(seed_of(qp, seq), offset); }

void fill_pattern(char* buf, uint64_t len, uint32_t qp, uint32_t seq) {
  const uint64_t seed = seed_of(qp, seq);
  uint64_t off = 0;
  if constexpr (kLittleEndian) {
    for (; off + 8 <= len; off += 8) {
      const uint64_t w = word_of(seed, off / 8);
      std::memcpy(buf + off, &w, 8);
    }
  }
  for (; off < len; ++off) buf[off] = static_cast<char>(byte_of(seed, off));
}

uint64_t find_mismatch(const char* buf, uint64_t len, uint32_t qp, uint32_t seq) {
  const uint64_t seed = seed_of(qp, seq);
  uint64_t off = 0;
  if constexpr (kLittleEndian) {
    for (; off + 8 <= len; off += 8) {
      uint64_t got;
      std::memcpy(&got, buf + off, 8);
      if (got != word_of(seed, off / 8)) break;  // the byte loop below finds which
    }
  }
  for (; off < len; ++off)
    if (static_cast<uint8_t>(buf[off]) != byte_of(seed, off)) return off;
  return len;
}

void check_pattern(const char* buf, uint64_t len, uint32_t qp, uint32_t seq, uint64_t message, const char* what) {
  const uint64_t off = find_mismatch(buf, len, qp, seq);
  if (off == len) return;
  char bytes[64];
  std::snprintf(bytes, sizeof bytes, "expected 0x%02x, got 0x%02x", pattern_byte(qp, seq, off),
                static_cast<uint8_t>(buf[off]));
  throw verbs::Error("--validate: " + std::string(what) + " QP " + std::to_string(qp) + " message " +
                     std::to_string(message) + " byte " + std::to_string(off) + " of " + std::to_string(len) + ": " +
                     bytes + " (the data was changed between the sender's buffer and this one: check the device and "
                     "link; both sides must run the same rdmasweep version)");
}

}  // namespace rdmasweep
