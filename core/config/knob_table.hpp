// The knob table: every per-point setting a sweep can vary, in one place. The fields
// of Workload and LoopKnobs, SweepSpec's axes, the TestConfig JSON, validate's range
// checks, point_name, same_shape, the sweep file keys and the CLI options are all
// generated from it. Adding a knob = one row here + its use in the loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace rdmasweep {

// Columns, in this order:
//   key     C++ field, sweep file and TestConfig JSON key
//   in      the TestConfig member holding it: work (Workload) or knobs (LoopKnobs)
//   kind    Op, Mode, Scope, Transport, Arrivals (names), Count (uint32_t), Bytes (uint64_t, k/m/g
//           units), Inline (uint32_t bytes or "auto" = kInlineAuto), Flag (bool; 0/1 in sweeps),
//           Rate (uint64_t, core/config/rate.hpp: "10gbps", "1.5mpps", "50%", "none" = kRateNone)
//   def     default
//   tag     point-name tag ("/tx:256"; a Flag adds just "/srq") when not the default;
//           nullptr: part of the fixed head op/mode/qps:N/size:N/cq:N
//   nest    position in the sweep's nesting (0 outermost; the highest varies fastest)
//   option  Boost.Program_options name: long flag, then the short one after a comma
//   lo, hi  the range validate() accepts (cross-field rules stay in validate)
//   shapes  part of same_shape: a different value needs other verbs objects
//   help    the option's --help text
// Rows are in --help order, which is also the order of the tags in a point's name
// (names are compared against committed baselines: never reorder tagged rows).
// Comments in rows must be /* */: a // comment would swallow the line continuation.
#define RDMASWEEP_KNOBS(X)                                                                                          \
  X(op, work, Op, Op::Send, nullptr, 0, "op", 0, 4, true,                                                          \
    "send, write, read, or the 8-byte atomics cas (compare-and-swap) and faa (fetch-and-add) (default send)")      \
  X(mode, work, Mode, Mode::Bw, nullptr, 1, "mode", 0, 1, true,                                                     \
    "bw (bandwidth and message rate) or lat (ping-pong latency) (default bw)")                                     \
  X(qps, work, Count, 1, nullptr, 2, "qps,q", 1, 1u << 20, true, "RC QPs, all on one shared CQ (default 1)")       \
  /* payload bytes per message; one set of QPs serves every size of a shape */                                     \
  X(size, work, Bytes, 65536, nullptr, 26, "size,s", 1, 1ull << 30, false,                                          \
    "message size in bytes, k/m suffixes allowed (default 65536; latency without -s: 2, as perftest)")                                                 \
  /* depths: sanity bounds only, the device's max_qp_wr / max_srq_wr are the real limits */                        \
  X(tx_depth, knobs, Count, 128, "tx", 4, "tx-depth,t", 1, 1u << 24, true, "send-queue depth per QP (default 128)") \
  X(rx_depth, knobs, Count, 512, "rx", 5, "rx-depth,r", 1, 1u << 24, true,                                          \
    "receives kept posted per QP, SEND only (default 512)")                                                        \
  /* 0: exactly what all QPs can have outstanding; the name shows the depth used (cq:N) */                         \
  X(cq_depth, knobs, Count, 0, nullptr, 3, "cq-depth", 0, kKnobNoMax, true,                                         \
    "depth of the QPs' shared CQ; 0 = what they can have outstanding (default 0)")                                 \
  /* at most tx_depth: checked by validate */                                                                      \
  X(post_list, knobs, Count, 1, "post", 6, "post-list,l", 0, kKnobNoMax, false,                                     \
    "WRs chained per ibv_post_send (default 1)")                                                                   \
  X(signal_every, knobs, Count, 32, "signal", 7, "signal-every,Q", 1, kKnobNoMax, true,                             \
    "signal one WR in this many (default 32)")                                                                     \
  X(inline_size, knobs, Inline, kInlineAuto, "inline", 8, "inline-size,I", 0, 65536, true,                          \
    "send messages up to this size inline; auto (default): what the device allows, up to perftest's 236 B for "    \
    "SEND and 220 B for WRITE; 0 turns inline off")                                                                \
  /* max_rd_atomic is 8 bits wide in the verbs QP attributes */                                                    \
  X(outs, knobs, Count, 0, "outs", 12, "outs,o", 0, 255, true,                                                        \
    "RDMA READs in flight per QP (perftest's -o/--outs); 0 (default): the devices' limit (max_qp_rd_atom of the "  \
    "responder, max_qp_init_rd_atom of the requester)")                                                            \
  X(poll_batch, knobs, Count, 16, "poll", 9, "poll-batch", 1, 4096, false, "WCs per ibv_poll_cq (default 16)")     \
  /* SEND only: the receiver's QPs share one receive queue of rx_depth */                                          \
  X(srq, knobs, Flag, false, "srq", 10, "srq", 0, 1, true,                                                          \
    "SEND: the receiving QPs share one receive queue of --rx-depth receives (--srq 0,1 sweeps both)")              \
  X(events, knobs, Flag, false, "events", 11, "events,e", 0, 1, true,                                                 \
    "wait for completions on a completion channel instead of busy polling (--events 0,1 sweeps both)")          \
  /* each thread owns --qps QPs; the server mirrors the count (core/point/lanes.hpp) */                                  \
  X(threads, knobs, Count, 1, "threads", 13, "threads", 1, 256, true,                                             \
    "threads, each posting and polling its own --qps QPs, pinned (--cpus); the server runs as many (default 1)")   \
  X(cq_scope, knobs, Scope, CqScope::Thread, "cq_scope", 14, "cq-scope", 0, 1, true,                                \
    "with --threads: thread (default): each thread its own CQ; process: all threads' QPs on one shared CQ")       \
  /* path attributes of every QP, both sides (the server follows the client's) */                                  \
  X(tclass, knobs, Count, 0, "tclass", 15, "tclass,T", 0, 255, true,                                                  \
    "traffic class of the QPs' packets: the IP ToS / DSCP byte on RoCE v2 (perftest's --tclass; default 0)")       \
  X(sl, knobs, Count, 0, "sl", 16, "sl,S", 0, 15, true,                                                               \
    "service level (InfiniBand; RoCE packets carry none: a RoCE device may map it to a priority or ignore it) "  \
    "(perftest's -S/--sl; default 0)")               \
  X(flow_label, knobs, Count, 0, "flow", 17, "flow-label", 0, 0xfffff, true,                                        \
    "IPv6 flow label of the GRH (perftest's --flow_label; default 0)")                                             \
  /* 0: the smaller of both ports' active MTUs; else checked against both before any QP */                         \
  X(mtu, knobs, Count, 0, "mtu", 18, "mtu,m", 0, 4096, true,                                                        \
    "path MTU in bytes: 256, 512, 1024, 2048 or 4096, at most both ports' active MTU (perftest's -m/--mtu); "      \
    "0 (default): the smaller active MTU")                                                                         \
  X(hugepages, knobs, Flag, false, "huge", 19, "hugepages", 0, 1, true,                                             \
    "buffers on 2 MiB huge pages, both sides (reserve them first: sysctl vm.nr_hugepages=N) (--hugepages 0,1 "    \
    "sweeps both)")                                                                                                \
  /* bw only; both sides run the initiator's loop on every QP at once */                                           \
  X(bidir, knobs, Flag, false, "bidir", 21, "bidir,b", 0, 1, true,                                                    \
    "bandwidth both ways at once: the server posts as the client does, on every QP; each direction and the total " \
    "are reported (perftest's -b/--bidirectional) (--bidir 0,1 sweeps both)")                                      \
  /* each QP its own buffer regions, registered apart: the NIC looks up as many keys as QPs */                     \
  X(mr_per_qp, knobs, Flag, false, "mr_per_qp", 22, "mr-per-qp", 0, 1, true,                                        \
    "each QP its own memory regions (local and remote keys), both sides (perftest's --mr_per_qp) (--mr-per-qp 0,1 " \
    "sweeps both)")                                                                                                 \
  /* UD: SEND only, one packet per message (size at most the path MTU), losses counted */                          \
  X(transport, knobs, Transport, Transport::Rc, "transport", 20, "transport", 0, 1, true,                            \
    "rc (reliable connection, default) or ud (unreliable datagram: SEND only, messages up to the path MTU, "        \
    "sent, received and lost counted) (perftest's -c RC/UD)")                                                      \
  /* SEND: a buffer per message in flight (QPs x depth x size); WRITE in lat mode; READ against the target's */    \
  X(validate, knobs, Flag, false, "validate", 23, "validate", 0, 1, true,                                            \
    "check the data (perftest 4.5 has none; later perftest: --data_validation): the sender writes a pattern per QP, message and byte, the "      \
    "receiver checks every byte; a mismatch fails the point naming QP, message and offset. Costs a fill and a "    \
    "check of every byte (SEND, WRITE lat; READ checks what it read); off by default (--validate 0,1 sweeps both)") \
  /* RC requester's transport retries (RTS attributes): how long a silent link is ridden out before an error */    \
  X(qp_timeout, knobs, Count, 14, "qp_timeout", 24, "qp-timeout,u", 1, 31, true,                                      \
    "local ACK timeout exponent: a transport retry after 4.096 us x 2^N without an ACK (perftest's -u; default "  \
    "14, 67 ms)")                                                                                                   \
  X(retry_count, knobs, Count, 7, "retry", 25, "retry-count", 0, 7, true,                                           \
    "transport retries before a send fails with retry exceeded (perftest's --retry_count; default 7)")              \
  /* offered load (bw): each message posted when due, never early; latency counted from when it was due */          \
  /* shapes: a paced point signals every message, so its CQ must hold more */                                      \
  X(rate, knobs, Rate, kRateNone, "rate", 28, "rate", 0, kKnobNoMax, true,                                          \
    "offered load of a bandwidth point, over all its QPs and threads: 10gbps, 800mbps, 1.5mpps, 200kpps (bits or "  \
    "messages per second) or 50% (of the rate the same point reaches flat out, measured first); each message is "  \
    "posted when due, never early, every one signaled, and its latency counted from when it was due (default "     \
    "none: flat out)")                                                                                             \
  X(arrivals, knobs, Arrivals, ArrivalProcess::Constant, "arrivals", 27, "arrivals", 0, 1, false,                   \
    "when --rate's messages are due: constant (every 1/rate) or poisson (exponential gaps of mean 1/rate, the "     \
    "same seeded schedule on every run) (default constant)")                                                       \
  /* a target with nothing to post (WRITE/READ/atomic bw, READ/atomic lat) busy-polls its wait for DONE */         \
  X(target_spin, knobs, Flag, false, "spin", 29, "target-spin", 0, 1, false,                                        \
    "the passive target (WRITE, READ, atomic bandwidth; READ, atomic latency) busy-polls while it waits for the "  \
    "client's DONE, as perftest's server does with -R, so its CPU never idles: a software device (siw, rxe) "      \
    "answers from that CPU. Off (default): it sleeps, and its CPU time is what the target costs (--target-spin "   \
    "0,1 sweeps both)")

// inline_size's default: inline what the device allows, up to perftest's sizes.
constexpr uint32_t kInlineAuto = 0xffffffffu;
// hi for a knob bounded only by its type.
constexpr uint64_t kKnobNoMax = std::numeric_limits<uint64_t>::max();

enum class KnobKind : uint8_t { Op, Mode, Scope, Transport, Arrivals, Count, Bytes, Inline, Flag, Rate };

// The C++ type of each kind's field (Op, Mode, CqScope, Transport by config.hpp, ArrivalProcess by rate.hpp).
#define RDMASWEEP_KNOB_TYPE_Op Op
#define RDMASWEEP_KNOB_TYPE_Mode Mode
#define RDMASWEEP_KNOB_TYPE_Scope CqScope
#define RDMASWEEP_KNOB_TYPE_Transport Transport
#define RDMASWEEP_KNOB_TYPE_Count uint32_t
#define RDMASWEEP_KNOB_TYPE_Bytes uint64_t
#define RDMASWEEP_KNOB_TYPE_Inline uint32_t
#define RDMASWEEP_KNOB_TYPE_Flag bool
#define RDMASWEEP_KNOB_TYPE_Arrivals ArrivalProcess
#define RDMASWEEP_KNOB_TYPE_Rate uint64_t

// The rows of one struct (`in`: work for Workload, knobs for LoopKnobs) as its members.
#define RDMASWEEP_KNOB_IF_work_work(x) x
#define RDMASWEEP_KNOB_IF_work_knobs(x)
#define RDMASWEEP_KNOB_IF_knobs_work(x)
#define RDMASWEEP_KNOB_IF_knobs_knobs(x) x
#define RDMASWEEP_KNOB_FIELD(want, key, in, kind, def, ...) \
  RDMASWEEP_KNOB_IF_##want##_##in(RDMASWEEP_KNOB_TYPE_##kind key = def;)
#define RDMASWEEP_KNOB_WORK_FIELD(...) RDMASWEEP_KNOB_FIELD(work, __VA_ARGS__)
#define RDMASWEEP_KNOB_LOOP_FIELD(...) RDMASWEEP_KNOB_FIELD(knobs, __VA_ARGS__)

#define RDMASWEEP_KNOB_COUNT(...) +1
constexpr size_t kKnobCount = 0 RDMASWEEP_KNOBS(RDMASWEEP_KNOB_COUNT);

}  // namespace rdmasweep
