#include "core/config/knobs.hpp"
#include "core/point/measured_run.hpp"

namespace rdmasweep {

void take_latency(PointResult& out, LatStats&& st) {
  out.seconds = st.seconds;
  out.per_qp = st.per_qp;
  out.latency = true;
  out.hist = std::move(st.hist);
  out.qp_lat_min_ns = std::move(st.qp_min_ns);
  out.qp_lat_max_ns = std::move(st.qp_max_ns);
  out.qp_lat_mean_ns.clear();
  for (size_t q = 0; q < st.per_qp.size(); ++q)
    out.qp_lat_mean_ns.push_back(st.per_qp[q] ? static_cast<double>(st.qp_sum_ns[q]) / static_cast<double>(st.per_qp[q]) : 0);
}

void take_pacing(PointResult& out, PacedStats& st) {
  out.paced = true;
  out.offered_per_second = st.offered_per_second;
  out.late_posts = st.late;
  out.late_posts_queue_full = st.late_full;
  out.late_max_ns = st.late_max_ns;
  out.late_sum_ns = st.late_sum_ns;
  out.hist = std::move(st.from_due);
  out.posted_hist = std::move(st.from_post);
}

double effective_interval(double asked, const Workload& w) {
  return asked >= 0 ? asked : w.duration > 0 ? kDefaultInterval : 0;
}

PointResult measure_point(TestResources& res, const RunControl& ctl, double interval, std::vector<uint64_t>& sent,
                          const std::function<void()>& after_warmup) {
  const TestConfig& cfg = res.cfg;
  const Workload& w = cfg.work;
  PointResult out;
  out.cfg = cfg;
  out.name = point_name(cfg);
  out.inline_size = res.inline_size;
  out.outs = res.rd_atomic;
  out.send_credit = res.send_credit;
  sent.assign(w.qps, 0);
  if (w.mode == Mode::Bw) {
    res.arrivals.reset(both_ways_send(cfg) ? w.qps : 0);
    if (w.warmup > 0) {
      LoopStats warm = run_bw_initiator(res, w.warmup, 0, ctl);
      for (uint32_t q = 0; q < w.qps; ++q) sent[q] += warm.per_qp[q];
    }
    if (after_warmup) after_warmup();
    // Both ways: the measured loop also waits for every message the peer sends (as many).
    if (both_ways_send(cfg)) res.arrivals.wait_for(w.warmup + w.iters);
    LoopStats st;
    if (cfg.knobs.rate != kRateNone) {  // its window opens as its schedule's clock starts
      PacedStats paced = run_paced_initiator(res, w.iters, w.duration, ctl, interval);
      take_pacing(out, paced);
      st = std::move(paced);
    } else {
      if (ctl.on_window) ctl.on_window();
      st = run_bw_initiator(res, w.iters, w.duration, ctl, interval);
    }
    out.cpu_seconds = st.cpu_seconds;
    out.seconds = st.seconds;
    out.began = st.began;
    out.ended = st.ended;
    out.per_qp = st.per_qp;
    out.timeline = std::move(st.timeline);
    for (uint32_t q = 0; q < w.qps; ++q) sent[q] += st.per_qp[q];
  } else {
    LatStats st = run_lat_initiator(res, w.warmup, w.iters, w.duration, ctl, interval);
    out.cpu_seconds = st.cpu_seconds;
    out.began = st.began;
    out.ended = st.ended;
    out.timeline = std::move(st.timeline);
    for (uint32_t q = 0; q < w.qps; ++q) sent[q] = st.per_qp[q] + w.warmup;
    take_latency(out, std::move(st));
  }
  out.messages = 0;
  for (uint64_t v : out.per_qp) out.messages += v;
  out.bytes = out.messages * w.size;
  return out;
}

}  // namespace rdmasweep
