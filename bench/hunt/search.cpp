#include "bench/hunt/search.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

namespace rdmasweep::hunt {

namespace {
constexpr size_t kRandomFirst = 8;      // random samples before annealing starts
constexpr double kRestart = 0.1;        // chance of a random jump while annealing
constexpr double kTemperature = 0.3;    // scale of the log-score steps accepted when hot

std::string knob_value(const Knob& k, uint64_t v) {
  nlohmann::json j = knob_json(k, v);
  return j.is_string() ? j.get<std::string>() : j.dump();
}
}  // namespace

Hunter::Hunter(const Space& space, Sampler& sampler, Measure measure, Clock::duration budget,
               std::function<bool()> stop, std::function<void(const std::string&)> say,
               std::function<Clock::time_point()> now)
    : space_(space),
      sampler_(sampler),
      measure_(std::move(measure)),
      now_(std::move(now)),
      start_(now_()),
      deadline_(start_ + budget),
      stop_(std::move(stop)),
      say_(std::move(say)) {}

bool Hunter::out_of_time() const { return now_() >= deadline_ || (stop_ && stop_()); }

double Hunter::measure_and_score(const Candidate& c, std::vector<Observed>& all) {
  Measurement m = measure_(c, "explore");
  ++result_.measurements;
  ++result_.explored;
  if (!m.ok) ++result_.failed;
  all.push_back({c, m});
  if (m.ok) {
    Measurement solo = m;
    solo.beside_rate = NAN;
    history_.push_back({Candidate{c.point, std::nullopt}, solo});
  }
  const std::vector<Finding> f = judge(c, m, history_, space_.thresholds);
  const double s = top_score(f);
  if (s > best_score_) {
    best_score_ = s;
    for (const Finding& x : f)
      if (x.score == s) best_ = x.oracle + " " + std::to_string(s).substr(0, 5) + " on " + c.key();
  }
  if (result_.explored % 10 == 0)  // progress beside the table of runs
    say("hunt: explored " + std::to_string(result_.explored) + " point(s) in " +
        std::to_string(static_cast<int>(std::chrono::duration<double>(now_() - start_).count())) + " s of " +
        std::to_string(static_cast<int>(std::chrono::duration<double>(deadline_ - start_).count())) +
        " s; highest score so far: " + (best_.empty() ? "none" : best_) + " (1 flags)");
  return s;
}

void Hunter::explore(Clock::time_point until) {
  Candidate cur = sampler_.random();
  double cur_score = measure_and_score(cur, explored_);
  std::set<std::string> seen{cur.key()};
  const double span = std::chrono::duration<double>(until - start_).count();
  while (now_() < until && !(stop_ && stop_())) {
    Candidate next;
    for (int tries = 0; tries < 8; ++tries) {  // a candidate not measured yet, when there is one nearby
      next = explored_.size() < kRandomFirst || sampler_.uniform() < kRestart ? sampler_.random() : sampler_.neighbour(cur);
      if (!seen.count(next.key())) break;
    }
    seen.insert(next.key());
    double s = measure_and_score(next, explored_);
    // Cooling linearly over the exploring time: uphill always, downhill less and less.
    const double left = std::max(0.02, 1 - std::chrono::duration<double>(now_() - start_).count() / span);
    if (s >= cur_score || sampler_.uniform() < std::exp((std::log1p(s) - std::log1p(cur_score)) / (kTemperature * left))) {
      cur = next;
      cur_score = s;
    }
  }
}

std::vector<Flagged> Hunter::flagged() const {
  // Judged again against everything seen: a reference found late flags earlier points.
  std::vector<Flagged> out;
  std::set<std::string> keys;
  for (const Observed& o : explored_)
    for (const Finding& f : judge(o.cand, o.m, history_, space_.thresholds)) {
      // A solo oracle judged the run alone: the aggressor had no part in it.
      const Candidate c = f.oracle == "isolation" ? o.cand : Candidate{o.cand.point, std::nullopt};
      if (f.score >= 1 && keys.insert(f.oracle + " " + c.key()).second) {
        Flagged x;
        x.cand = c;
        x.found = f;
        out.push_back(std::move(x));
      }
    }
  std::stable_sort(out.begin(), out.end(), [](const Flagged& a, const Flagged& b) { return a.found.score > b.found.score; });
  return out;
}

Probe Hunter::reproduce(const Candidate& c, const std::string& oracle, const std::optional<TestConfig>& ref,
                        const std::string& phase) {
  Probe p;
  while (p.runs < space_.repetitions) {
    if (out_of_time()) {
      p.out_of_time = true;
      break;
    }
    // Solo oracles are judged on a solo run; isolation on the run beside the aggressor.
    Candidate run = oracle == "isolation" ? c : Candidate{c.point, std::nullopt};
    p.last = measure_(run, phase);
    ++result_.measurements;
    Measurement rm;
    if (ref) {
      rm = measure_(Candidate{*ref, std::nullopt}, phase + "-reference");
      ++result_.measurements;
    }
    result_.failed += !p.last.ok + (ref && !rm.ok);
    ++p.runs;
    std::optional<Finding> f = rejudge(oracle, run, p.last, ref ? &*ref : nullptr, ref ? &rm : nullptr, space_.thresholds);
    if (f) p.findings.push_back(*f);
    if (f && f->score >= 1) ++p.held;
    if (p.held >= space_.must_hold || p.held + (space_.repetitions - p.runs) < space_.must_hold) break;
  }
  p.reproduced = p.held >= space_.must_hold;
  return p;
}

// A relative oracle's reference as the point's knob `k` moves from `from` to `to`:
// a knob the comparison does not span moves on both; one it spans (QPs, threads,
// size, depths) moves with the point where the two were equal, and where the point
// would pass the reference's value (fewer QPs than a reference with fewer), so the
// reference never keeps more than a shrunk point has.
static void move_reference(const Knob& k, TestConfig& ref, uint64_t from, uint64_t to) {
  const uint64_t r = k.get(ref);
  if (!comparison_knob(k) || r == from || (r < from && r > to)) k.set(ref, to);
}

void Hunter::shrink(Anomaly& a) {
  const std::string& oracle = a.found.oracle;
  for (const Knob* k : shrink_order(space_)) {
    const std::vector<uint64_t> axis = k->axis(space_.axes);
    const std::vector<uint64_t> path = shrink_path(*k, axis, k->get(a.minimal.point));
    if (path.size() < 2) continue;
    // Tries one value; on success the minimal trigger takes it.
    auto attempt = [&](uint64_t v) {
      Candidate c = a.minimal;
      std::optional<TestConfig> ref = a.reference;
      k->set(c.point, v);
      if (ref && oracle != "isolation") move_reference(*k, *ref, k->get(a.minimal.point), v);
      if (!sampler_.valid(c.point) || (ref && oracle != "isolation" && (!sampler_.valid(*ref) || !is_reference(oracle, c.point, *ref))))
        return false;
      Probe p = reproduce(c, oracle, ref, "shrink");
      a.steps.push_back(std::string(k->key) + " " + knob_value(*k, k->get(a.minimal.point)) + " -> " + knob_value(*k, v) +
                        ": held " + std::to_string(p.held) + " of " + std::to_string(p.runs) +
                        (p.out_of_time ? " (budget ran out)" : ""));
      if (p.out_of_time) a.shrink_complete = false;
      if (!p.reproduced) return false;
      a.minimal = c;
      a.reference = ref;
      a.evidence = p;
      return true;
    };
    // The target first; else the value nearest it that still shows the anomaly
    // (bisection: an anomaly that appears past a threshold keeps appearing beyond it).
    if (!attempt(path[0])) {
      size_t lo = 0, hi = path.size() - 1;
      while (hi - lo > 1 && a.shrink_complete) {
        size_t mid = (lo + hi) / 2;
        (attempt(path[mid]) ? hi : lo) = mid;
      }
    }
    if (!a.shrink_complete) return;
  }
}

bool Hunter::covered(Flagged& f) {
  for (Anomaly& a : result_.anomalies) {
    // Another counter over its limit on the same trigger is the same trouble seen twice
    // (loss shows as retransmits and out-of-sequence packets): judged on the minimal
    // trigger's last run, no new one needed.
    const bool counter = f.found.oracle.rfind("counters:", 0) == 0 && a.found.oracle != f.found.oracle;
    if (counter && covers(space_, a, f.cand, a.found.oracle)) {
      std::optional<Finding> g = rejudge(f.found.oracle, a.minimal, a.evidence.last, nullptr, nullptr, space_.thresholds);
      if (g && g->score >= 1) {
        if (std::find(a.also_shows.begin(), a.also_shows.end(), f.found.oracle) == a.also_shows.end())
          a.also_shows.push_back(f.found.oracle);
        a.also_seen.push_back(f.cand.key());
        f.status = "covered by anomaly " + std::to_string(&a - result_.anomalies.data() + 1);
        result_.others.push_back(std::move(f));
        return true;
      }
    }
    if (covers(space_, a, f.cand, f.found.oracle)) {
      a.also_seen.push_back(f.cand.key());
      f.status = "covered by anomaly " + std::to_string(&a - result_.anomalies.data() + 1);
      result_.others.push_back(std::move(f));
      return true;
    }
  }
  return false;
}

void Hunter::examine(Flagged f) {  // by value: it may end up in others
  if (covered(f)) return;
  const bool solo = f.found.oracle != "isolation";
  Candidate first = solo ? Candidate{f.cand.point, std::nullopt} : f.cand;
  std::optional<TestConfig> ref = solo ? f.found.reference : std::nullopt;
  say("hunt: confirming " + f.found.oracle + " on " + first.key());
  Probe p = reproduce(first, f.found.oracle, ref, "confirm");
  if (!p.reproduced) {
    f.probe = p;
    f.status = p.out_of_time ? "not examined (budget)" : "noise";
    result_.others.push_back(std::move(f));
    return;
  }
  Anomaly a{f.found, first, first, ref, p, {}, true, {}, {}};
  say("hunt: confirmed (held " + std::to_string(p.held) + " of " + std::to_string(p.runs) + "); shrinking");
  shrink(a);
  say("hunt: anomaly " + std::to_string(result_.anomalies.size() + 1) + ": " + a.found.oracle + " on " + a.minimal.key());
  result_.anomalies.push_back(std::move(a));
}

HuntResult Hunter::run() {
  const auto budget = deadline_ - start_;
  const auto explore_until = start_ + std::chrono::duration_cast<Clock::duration>(budget * space_.explore_share);
  say("hunt: exploring until " + std::to_string(static_cast<int>(space_.explore_share * 100)) + "% of the budget");
  try {
    explore(explore_until);
  } catch (const std::exception& e) {
    result_.stopped = e.what();  // what was measured until then is still judged and reported
  }
  result_.explore_seconds = std::chrono::duration<double>(now_() - start_).count();
  std::vector<Flagged> flags = flagged();
  say("hunt: explored " + std::to_string(result_.explored) + " point(s); " + std::to_string(flags.size()) +
      " flagged; confirming each with " + std::to_string(space_.repetitions) + " repetition(s)");
  for (Flagged& f : flags) {
    if (!result_.stopped.empty() || out_of_time()) {
      if (covered(f)) continue;
      f.status = "not examined (" + std::string(result_.stopped.empty() ? "budget" : "stopped") + ")";
      result_.others.push_back(std::move(f));
      continue;
    }
    try {
      examine(f);
    } catch (const std::exception& e) {
      result_.stopped = e.what();
    }
  }
  result_.interrupted = stop_ && stop_();
  result_.seconds = std::chrono::duration<double>(now_() - start_).count();
  return std::move(result_);
}

std::vector<const Knob*> shrink_order(const Space& s) {
  static const char* const first[] = {"threads", "qps", "size", "tx_depth", "rx_depth", "post_list", "signal_every",
                                      "inline_size", "outs", "poll_batch", "cq_depth", "srq", "events", "cq_scope"};
  std::vector<const Knob*> ks = s.searched();
  auto rank = [](const Knob* k) {
    for (size_t i = 0; i < std::size(first); ++i)
      if (std::string(first[i]) == k->key) return i;
    return std::size(first);  // op, mode: last, so the anomaly keeps its kind while the rest shrinks
  };
  std::stable_sort(ks.begin(), ks.end(), [&](const Knob* a, const Knob* b) { return rank(a) < rank(b); });
  return ks;
}

bool covers(const Space& s, const Anomaly& a, const Candidate& c, const std::string& oracle) {
  if (oracle != a.found.oracle) return false;
  if (oracle == "isolation" && (!c.aggressor || point_name(*c.aggressor) != point_name(*a.minimal.aggressor)))
    return false;
  for (const Knob* k : s.searched()) {
    const uint64_t mv = k->get(a.minimal.point), cv = k->get(c.point);
    const std::vector<uint64_t> axis = k->axis(s.axes);
    const uint64_t target = shrink_target(*k, axis);
    if (mv == cv || mv == target) continue;
    const bool ordered = !named_kind(k->kind) && k->kind != KnobKind::Flag;
    if (ordered && ((target <= mv && mv <= cv) || (target >= mv && mv >= cv))) continue;
    return false;
  }
  return true;
}

}  // namespace rdmasweep::hunt
