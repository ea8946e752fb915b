// --validate's pattern: what the sender writes is what the receiver's check accepts,
// it differs between QPs and messages, and a changed byte is found and named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/config.hpp"
#include "core/config/refusals.hpp"
#include "core/setup/sizing.hpp"
#include "core/engine/validate.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep {

TEST(Validate, FilledMessagePassesItsOwnCheckAtEverySize) {
  for (uint64_t len : {1u, 7u, 8u, 9u, 64u, 1000u, 65536u}) {
    std::vector<char> buf(len);
    fill_pattern(buf.data(), len, 3, 41);
    EXPECT_EQ(find_mismatch(buf.data(), len, 3, 41), len) << len;
    EXPECT_NO_THROW(check_pattern(buf.data(), len, 3, 41, 41, "SEND received on"));
    for (uint64_t off = 0; off < len; off += 997) EXPECT_EQ(static_cast<uint8_t>(buf[off]), pattern_byte(3, 41, off));
  }
}

// Another QP's or message's bytes are not accepted: a message delivered to the wrong
// buffer, or out of order, fails too.
TEST(Validate, OtherQpOrMessageDiffers) {
  std::vector<char> buf(4096);
  fill_pattern(buf.data(), buf.size(), 0, 0);
  EXPECT_LT(find_mismatch(buf.data(), buf.size(), 1, 0), 8u);
  EXPECT_LT(find_mismatch(buf.data(), buf.size(), 0, 1), 8u);
  // A zeroed buffer (nothing arrived) fails within the first word.
  std::vector<char> zero(4096, 0);
  EXPECT_LT(find_mismatch(zero.data(), zero.size(), 0, 0), 8u);
}

TEST(Validate, CorruptedByteIsNamedWithQpMessageAndOffset) {
  std::vector<char> buf(65536);
  fill_pattern(buf.data(), buf.size(), 2, 1234);
  const uint8_t want = pattern_byte(2, 1234, 40001);
  buf[40001] = static_cast<char>(want ^ 0x10);
  EXPECT_EQ(find_mismatch(buf.data(), buf.size(), 2, 1234), 40001u);
  try {
    check_pattern(buf.data(), buf.size(), 2, 1234, 1234, "SEND received on");
    FAIL() << "corruption not detected";
  } catch (const verbs::Error& e) {
    char expect[80];
    std::snprintf(expect, sizeof expect, "expected 0x%02x, got 0x%02x", want, static_cast<uint8_t>(want ^ 0x10));
    const std::string what = e.what();
    EXPECT_NE(what.find("--validate: SEND received on QP 2 message 1234 byte 40001 of 65536: " + std::string(expect)),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  // The last byte of an odd length (the tail after the last whole word) is checked too.
  std::vector<char> odd(13);
  fill_pattern(odd.data(), odd.size(), 0, 7);
  odd[12] = static_cast<char>(odd[12] + 1);
  EXPECT_EQ(find_mismatch(odd.data(), odd.size(), 0, 7), 12u);
}

// What --validate refuses, in one line naming the key and the fix; what it changes
// in the buffer layout (a buffer per message in flight for SEND).
TEST(Validate, RefusedWhereNothingSeesEachMessage) {
  auto refused = [](Op op, Mode mode, Transport t, bool bidir) {
    TestConfig c;
    c.work.op = op;
    c.work.mode = mode;
    c.work.size = is_atomic(op) ? kAtomicBytes : 64;
    c.knobs.transport = t;
    c.knobs.bidir = bidir;
    c.knobs.validate = true;
    try {
      validate(c);
      return std::string();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(refused(Op::Send, Mode::Bw, Transport::Rc, false), "");
  EXPECT_EQ(refused(Op::Send, Mode::Lat, Transport::Rc, false), "");
  EXPECT_EQ(refused(Op::Write, Mode::Lat, Transport::Rc, false), "");
  EXPECT_EQ(refused(Op::Read, Mode::Bw, Transport::Rc, false), "");
  EXPECT_NE(refused(Op::Write, Mode::Bw, Transport::Rc, false).find("check WRITE with --mode lat"), std::string::npos);
  EXPECT_NE(refused(Op::Faa, Mode::Bw, Transport::Rc, false).find("validate:"), std::string::npos);
  EXPECT_NE(refused(Op::Send, Mode::Bw, Transport::Ud, false).find("--transport rc"), std::string::npos);
  EXPECT_NE(refused(Op::Send, Mode::Bw, Transport::Rc, true).find("--bidir"), std::string::npos);

  TestConfig c;
  c.knobs.validate = true;
  c.work.qps = 3;
  EXPECT_EQ(qp_regions(c), 3u);
  EXPECT_EQ(message_slots(c), std::max(c.knobs.tx_depth, c.knobs.rx_depth));
  c.work.op = Op::Read;
  EXPECT_EQ(message_slots(c), 1u);
  c.knobs.validate = false;
  c.work.op = Op::Send;
  EXPECT_EQ(message_slots(c), 1u);
  EXPECT_EQ(qp_regions(c), 1u);
}

}  // namespace rdmasweep
