// Micro-benchmarks of the harness's own per-message costs, with the device taken
// out: what rdmasweep adds on top of ibv_post_send/ibv_poll_cq. On a 200 Mmsg/s NIC
// the whole budget per message is 5 ns, so these must stay at a few ns.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/engine/loop_bw.hpp"
#include "core/engine/loop_lat.hpp"
#include "core/engine/wr_id.hpp"
#include "core/measure/histogram.hpp"
#include "tests/support/fake_device.hpp"

namespace rdmasweep {
namespace {

// Encode a wr_id, decode it back and route the completion to its QP's counter.
void BM_WrIdRoute(benchmark::State& st) {
  const uint32_t nqp = static_cast<uint32_t>(st.range(0));
  std::vector<uint64_t> per_qp(nqp, 0);
  uint32_t q = 0, seq = 0;
  for (auto _ : st) {
    uint64_t id = WrId::encode(q, seq++);
    benchmark::DoNotOptimize(id);
    ++per_qp[WrId::qp(id)];
    q = q + 1 == nqp ? 0 : q + 1;
  }
  benchmark::DoNotOptimize(per_qp.data());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_WrIdRoute)->Arg(1)->Arg(1024);

void BM_HistogramRecord(benchmark::State& st) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> d(9.0, 1.0);  // around 10 us, long tail
  std::vector<uint64_t> samples(4096);
  for (auto& s : samples) s = static_cast<uint64_t>(d(rng));
  Histogram h;
  size_t i = 0;
  for (auto _ : st) {
    h.record(samples[i]);
    i = (i + 1) & 4095;
  }
  benchmark::DoNotOptimize(h.count());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_HistogramRecord);

// The real loops against the fake device of tests/support, which completes at once:
// they run at the speed of their own bookkeeping. The fake's own work (walking the
// chain, its counters, a ring push and pop per completion) is included, so the
// figures bound the harness's cost from above.
using testing::FakeDevice;

// The fake device's own share of BM_BwLoopBookkeeping: the same posts (one WR, every
// 32nd signaled) and polls of 16, without the loop. Subtract it to get the loop's cost.
void BM_FakeDeviceAlone(benchmark::State& st) {
  const uint32_t nqp = static_cast<uint32_t>(st.range(0));
  detail::SendWrs wrs(nqp, 1, IBV_WR_RDMA_WRITE, 0);
  FakeDevice::Options o;
  o.nqp = nqp;
  o.sq_depth = 128;
  std::vector<ibv_wc> wc(16);
  const uint64_t per_qp = 1'000'000 / nqp;
  uint64_t messages = 0;
  for (auto _ : st) {
    FakeDevice fake(o);
    for (uint64_t i = 0; i < per_qp; ++i) {
      for (uint32_t q = 0; q < nqp; ++q) {
        ibv_send_wr* w = wrs.chain(q);
        w->wr_id = WrId::encode(q, static_cast<uint32_t>(i));
        w->send_flags = (i & 31) == 31 ? IBV_SEND_SIGNALED : 0;
        fake.post(q, w);
      }
      if ((i & 31) == 31)
        while (fake.poll(16, wc.data()) > 0) {
        }
    }
    messages += per_qp * nqp;
  }
  st.SetItemsProcessed(static_cast<int64_t>(messages));
  st.counters["ns_per_msg"] =
      benchmark::Counter(static_cast<double>(messages), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FakeDeviceAlone)->Arg(1)->Arg(16)->Unit(benchmark::kMillisecond);
// Its share of BM_BwLoopThreads: each thread its own fake device of 16 QPs.
BENCHMARK(BM_FakeDeviceAlone)->Arg(16)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// The real bandwidth loop on a fake device of its own, once per iteration; returns
// the messages and sets items processed.
uint64_t run_bw_loop(benchmark::State& st, const detail::BwPlan& p) {
  detail::SendWrs wrs(p.nqp, p.post_list, IBV_WR_RDMA_WRITE, 0);
  FakeDevice::Options o;
  o.nqp = p.nqp;
  o.sq_depth = p.depth;
  RunControl ctl;
  uint64_t messages = 0;
  for (auto _ : st) {
    FakeDevice fake(o);
    std::vector<SendQueue> sq(p.nqp);
    for (SendQueue& s : sq) s.until_signal = p.every;
    detail::IdleWatch watch(ctl);
    LoopStats s = detail::bw_initiator_loop(fake, wrs, sq, p, watch);
    messages += s.messages();
  }
  st.SetItemsProcessed(static_cast<int64_t>(messages));
  return messages;
}

void BM_BwLoopBookkeeping(benchmark::State& st) {
  TestConfig c;
  c.work.op = Op::Write;
  c.work.qps = static_cast<uint32_t>(st.range(0));
  c.knobs.post_list = static_cast<uint32_t>(st.range(1));
  c.knobs.tx_depth = 128;
  c.knobs.signal_every = st.range(3) ? static_cast<uint32_t>(st.range(3)) : 32;
  c.knobs.poll_batch = 16;
  detail::BwPlan p = detail::bw_plan(c, 1'000'000 / c.work.qps, 0);
  p.interval = st.range(2) ? 0.001 : 0;  // --interval: a clock read per poll that returned completions
  const uint64_t messages = run_bw_loop(st, p);
  st.counters["ns_per_msg"] =
      benchmark::Counter(static_cast<double>(messages), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_BwLoopBookkeeping)
    ->ArgNames({"qps", "post_list", "interval", "signal"})
    ->Args({1, 1, 0, 0})
    ->Args({16, 1, 0, 0})
    ->Args({16, 4, 0, 0})
    ->Args({1, 16, 0, 0})
    ->Args({1, 16, 0, 16})
    ->Args({16, 16, 0, 16})
    ->Args({1024, 1, 0, 0})
    ->Args({16, 1, 1, 0});

// --threads: every thread runs the bandwidth loop on its own QPs and fake device, as
// each thread of a point does on its own QPs and CQ (--cq-scope thread). Real time,
// so items_per_second is all threads' messages per wall second: its ratio between 2
// and 1 threads is the harness's own scaling; 1e9 x threads / items_per_second is
// the cost per message on each thread.
void BM_BwLoopThreads(benchmark::State& st) {
  TestConfig c;
  c.work.op = Op::Write;
  c.work.qps = 16;
  detail::BwPlan p = detail::bw_plan(c, 1'000'000 / c.work.qps, 0);
  run_bw_loop(st, p);
}
BENCHMARK(BM_BwLoopThreads)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Latency initiator, per round trip: SEND (the pong a receive completion) or WRITE
// (the pong seen in memory), with its clock reads and histogram record.
void BM_LatLoopBookkeeping(benchmark::State& st) {
  TestConfig c;
  c.work.op = st.range(0) == 0 ? Op::Send : Op::Write;
  c.work.mode = Mode::Lat;
  c.work.qps = static_cast<uint32_t>(st.range(1));
  detail::LatPlan p = detail::lat_plan(c, 0, 200'000 / c.work.qps, 0);
  detail::SendWrs wrs(p.nqp, 1, detail::opcode_of(c.work.op), 0);
  std::vector<char> tx(p.nqp, 0), rx(p.nqp, 0);
  FakeDevice::Options o;
  o.nqp = p.nqp;
  o.sq_depth = p.depth;
  o.rx_depth = c.knobs.rx_depth;
  o.peer = c.work.op == Op::Send ? FakeDevice::Peer::SendBack : FakeDevice::Peer::WriteBack;
  for (uint32_t q = 0; q < p.nqp; ++q) {
    p.tx_tag.push_back(&tx[q]);
    p.rx_tag.push_back(&rx[q]);
    o.tx_tag.push_back(&tx[q]);
    o.rx_tag.push_back(&rx[q]);
  }
  RunControl ctl;
  uint64_t trips = 0;
  for (auto _ : st) {
    FakeDevice fake(o);
    std::vector<SendQueue> sq(p.nqp);
    for (SendQueue& s : sq) s.until_signal = p.every;
    std::fill(rx.begin(), rx.end(), 0);
    detail::IdleWatch watch(ctl);
    LatStats s = detail::lat_initiator_loop(fake, wrs, sq, p, watch);
    trips += s.messages();
  }
  st.SetItemsProcessed(static_cast<int64_t>(trips));
  st.counters["ns_per_trip"] =
      benchmark::Counter(static_cast<double>(trips), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LatLoopBookkeeping)->ArgNames({"write", "qps"})->Args({0, 1})->Args({0, 16})->Args({1, 1})->Args({1, 16})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rdmasweep

BENCHMARK_MAIN();
