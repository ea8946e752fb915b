// Micro-benchmarks of the harness's own per-message costs, with the device taken
// out: what rdmasweep adds on top of ibv_post_send/ibv_poll_cq. On a 200 Mmsg/s NIC
// the whole budget per message is 5 ns, so these must stay at a few ns.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/histogram.hpp"
#include "core/loop_bw.hpp"
#include "core/wr_id.hpp"

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

// Filling a post list: wr_id and signaling flag for each WR of the chain.
void BM_BuildPostList(benchmark::State& st) {
  const uint32_t pl = static_cast<uint32_t>(st.range(0));
  detail::SendWrs wrs(1, pl, IBV_WR_RDMA_WRITE, 0);
  SendQueue s;
  s.until_signal = 32;
  for (auto _ : st) {
    ibv_send_wr* w = wrs.chain(0);
    for (uint32_t i = 0; i < pl; ++i) {
      uint64_t seq = s.posted + i;
      w[i].wr_id = WrId::encode(0, static_cast<uint32_t>(seq));
      w[i].send_flags = (w[i].send_flags & ~IBV_SEND_SIGNALED) | (s.next_signaled(32, false) ? IBV_SEND_SIGNALED : 0);
    }
    s.posted += pl;
    benchmark::DoNotOptimize(w);
  }
  st.SetItemsProcessed(st.iterations() * pl);
}
BENCHMARK(BM_BuildPostList)->Arg(1)->Arg(4)->Arg(16);

// A device that completes every signaled WR at once: the loop runs at the speed of
// its own bookkeeping. The fake's own work (walking the chain, a ring push/pop) is
// included, so the figure is an upper bound on the harness's cost.
struct InstantOps {
  std::vector<uint64_t> ring;
  size_t head = 0, tail = 0;
  explicit InstantOps(size_t cap) : ring(cap) {}
  int post(uint32_t, ibv_send_wr* w) {
    for (; w; w = w->next)
      if (w->send_flags & IBV_SEND_SIGNALED) ring[tail++ % ring.size()] = w->wr_id;
    return 0;
  }
  int poll(int n, ibv_wc* wc) {
    int got = 0;
    while (got < n && head != tail) {
      wc[got] = ibv_wc{};
      wc[got].wr_id = ring[head++ % ring.size()];
      wc[got].status = IBV_WC_SUCCESS;
      ++got;
    }
    return got;
  }
};

void BM_BwLoopBookkeeping(benchmark::State& st) {
  detail::BwPlan p;
  p.nqp = static_cast<uint32_t>(st.range(0));
  p.post_list = static_cast<uint32_t>(st.range(1));
  p.depth = 128;
  p.every = 32;
  p.batch = 16;
  p.per_qp = 1'000'000 / p.nqp;
  detail::SendWrs wrs(p.nqp, p.post_list, IBV_WR_RDMA_WRITE, 0);
  RunControl ctl;
  uint64_t messages = 0;
  for (auto _ : st) {
    InstantOps ops(static_cast<size_t>(p.nqp) * p.depth + 64);
    std::vector<SendQueue> sq(p.nqp);
    for (SendQueue& s : sq) s.until_signal = p.every;
    detail::IdleWatch watch(ctl);
    LoopStats s = detail::bw_initiator_loop(ops, wrs, sq, p, watch);
    messages += s.messages();
  }
  st.SetItemsProcessed(static_cast<int64_t>(messages));
  st.counters["ns_per_msg"] =
      benchmark::Counter(static_cast<double>(messages), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_BwLoopBookkeeping)->Args({1, 1})->Args({16, 1})->Args({16, 4})->Args({1024, 1})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rdmasweep

BENCHMARK_MAIN();
