// --validate: the bytes each message carries and their check. Byte `offset` of
// message `seq` on QP `qp` is a function of the three alone, so the receiver needs
// nothing from the sender but the order RC already guarantees.
#pragma once

#include <cstdint>

namespace rdmasweep {

uint8_t pattern_byte(uint32_t qp, uint32_t seq, uint64_t offset);
// Writes message (qp, seq)'s first `len` bytes into `buf`.
void fill_pattern(char* buf, uint64_t len, uint32_t qp, uint32_t seq);
// The first offset in [0, len) whose byte is not message (qp, seq)'s; len when none.
uint64_t find_mismatch(const char* buf, uint64_t len, uint32_t qp, uint32_t seq);
// Throws verbs::Error naming the QP, message number, offset, expected and found byte
// on the first mismatch. `message` is what the error calls the message (READ's
// pattern is the target's one buffer, seq 0, while its reads are numbered).
void check_pattern(const char* buf, uint64_t len, uint32_t qp, uint32_t seq, uint64_t message, const char* what);

}  // namespace rdmasweep
