// What a device can and cannot run, checked before anything is created: its limits
// against a point's sizes, and what its transport needs (iWARP's credit and fence).
#pragma once

#include <cstdint>

#include "core/config/config.hpp"
#include "core/verbs/device.hpp"

namespace rdmasweep {

// Throws verbs::Error naming the limit and its value when `c` asks for more than
// the device or port can give (ConfigError for what it cannot do at all). Nothing
// is created before this passes.
void check_device_limits(const TestConfig& c, const verbs::Device& dev);

// The largest UD message on this port: --mtu, else the port's active MTU.
uint64_t ud_size_limit(const TestConfig& c, const verbs::Device& dev);

// True when `c`'s SENDs on `dev` wait for the receiver's credit (core/engine/send_credits.hpp):
// bandwidth SEND on iWARP, which has no receiver-not-ready retry.
bool needs_send_credit(const TestConfig& c, const verbs::Device& dev);
// True when `c`'s WRITEs on `dev` are fenced by a READ behind them (fence_writes): iWARP,
// whose WRITE completes once TCP has its data. The writer's target opens its window
// for that READ too.
bool fences_writes(const TestConfig& c, const verbs::Device& dev);

}  // namespace rdmasweep
