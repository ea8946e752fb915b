"""Results over time: series of runs and the change points in them (tools/history).

A history is a set of results files. Files are kept apart by what they measured
(HISTORY_KEYS of their context: host, device, peer, sweep), ordered by the date
their context records, and each (point, metric) becomes a series: one entry a run,
its repetitions the run's samples.

Change points: E-Divisive with means (Matteson and James, 2014; as MongoDB's CI and
Hunter use it). The energy statistic over a segment's samples says how well it
splits, a permutation test gives its p-value, the runs' medians say where, and
the segments are split again while a split is significant. Splits fall between
runs only.
Needs numpy."""

import json
import math
import os
import statistics

import numpy as np

from rdmasweep_py import results as rr

# What keeps files apart: two files whose contexts differ in any of these are two
# histories, never one series.
HISTORY_KEYS = ("host_name", "device", "peer_host", "server_device", "sweep_file")
DEFAULT_ALPHA = 0.01
DEFAULT_PERMUTATIONS = 999
MIN_SAMPLES = 3  # on each side of a split


def history_key(context):
    """The context's values of HISTORY_KEYS, as a tuple of strings."""
    server = context.get("server") if isinstance(context.get("server"), dict) else {}
    values = dict(context)
    values["server_device"] = server.get("device", "")
    return tuple(str(values.get(k, "")) for k in HISTORY_KEYS)


def order_key(f):
    """Runs in the order they ran: the context's date, then the file's name."""
    return (str(f.context.get("date", "")), os.path.basename(f.path))


def collect(paths):
    """Results files under `paths` (files, or directories read one level deep,
    *.json but not *.hist.json): a list of loaded ResultFile. Raises rr.InputError."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            names = sorted(n for n in os.listdir(p) if n.endswith(".json") and not n.endswith(".hist.json"))
            files.extend(os.path.join(p, n) for n in names)
        elif os.path.exists(p):
            files.append(p)
        else:
            raise rr.InputError(f"{p}: no such file")
    if not files:
        raise rr.InputError(f"no results files in {', '.join(paths)}")
    return [rr.load(f, with_hist=False) for f in files]


def histories(files):
    """key -> the files of one history, in the order they ran."""
    out = {}
    for f in files:
        out.setdefault(history_key(f.context), []).append(f)
    return {k: sorted(v, key=order_key) for k, v in out.items()}


def series(files, metrics=None):
    """(point, metric) -> list of runs, each (file index, samples); a run where the
    point failed or is missing is left out (its index is skipped)."""
    out = {}
    for i, f in enumerate(files):
        known = f.metrics
        for name, p in f.points.items():
            if p.failed:
                continue
            for m in known:
                if metrics and m not in metrics:
                    continue
                s = [v for v in p.samples(m) if v is not None and math.isfinite(v)]
                if s:
                    out.setdefault((name, m), []).append((i, s))
    return out


def _energy(d, w):
    """The energy statistic of splitting a segment after each of its runs but the
    last: (m r / (m + r)) (2 E|x-y| - E|x-x'| - E|y-y'|) over the m samples before
    and the r after. d (..., R, R) holds the sums of |x-y| over the samples of two
    runs, w (..., R) the runs' sample counts. -inf where a side has fewer than
    MIN_SAMPLES."""
    c = d.cumsum(-2).cumsum(-1)
    k = np.arange(d.shape[-1] - 1)
    left = c[..., k, k]
    cross = c[..., k, -1] - left
    right = c[..., -1, -1][..., None] - left - 2 * cross
    return _statistic(left, cross, right, w)


def _shuffled_energy(d, w, order):
    """_energy with the runs taken in each of the orders (P, R) of run indices,
    without building the P shuffled matrices (gathering them was most of the
    permutation test's time). d is symmetric, so the sum over the first k+1 runs'
    pairs is the running sum of each run's distances to itself and twice to the
    runs before it."""
    rank = order.argsort(-1)
    before = (rank[:, None, :] < rank[:, :, None]).astype(float)  # [p, a, b]: b comes before a
    to_earlier = np.einsum("ab,pab->pa", d, before)
    first = np.take_along_axis(2 * to_earlier + np.diagonal(d), order, -1)
    left = first.cumsum(-1)[..., :-1]
    cross = d.sum(-1)[order].cumsum(-1)[..., :-1] - left
    right = d.sum() - left - 2 * cross
    return _statistic(left, cross, right, w[order])


def _statistic(left, cross, right, w):
    """_energy's statistic from the sums of distances within the part before each
    split (left), across it (cross) and after it (right)."""
    m = w.cumsum(-1)[..., :-1]
    r = w.sum(-1)[..., None] - m
    valid = (m >= MIN_SAMPLES) & (r >= MIN_SAMPLES)
    m, r = np.where(valid, m, 1.0), np.where(valid, r, 1.0)
    q = (m * r / (m + r)) * (2 * cross / (m * r) - left / (m * m) - right / (r * r))
    return np.where(valid, q, -np.inf)


def best_split(runs, permutations, rng):
    """The best split of a segment of runs (lists of samples) between two runs, and
    its p-value: (run index where the second part starts, statistic, p), or None
    when no split leaves MIN_SAMPLES on each side. rng: a numpy RandomState, whose
    draws order the shuffles.

    The statistic and its test take every sample, so a slowdown that hits some of
    a run's repetitions counts. The permutation test shuffles whole runs, not
    samples: a run slowed as a whole (a busy host) is one draw, so a single odd run
    is never significant on its own. The split is placed where the runs' medians
    separate best (each weighted by its repetitions), so one repetition's hiccup
    next to a change does not move it; where the medians do not differ at all, the
    samples place it."""
    x = np.array([v for r in runs for v in r], dtype=float)
    w = np.array([len(r) for r in runs], dtype=float)
    starts = np.concatenate([[0], np.cumsum(w[:-1])]).astype(int)
    # Splits fall between runs: the runs' sums of distances (R x R) are all it needs.
    d = np.add.reduceat(np.add.reduceat(np.abs(x[:, None] - x[None, :]), starts, axis=0), starts, axis=1)
    q = _energy(d, w)
    if not np.isfinite(q).any():
        return None
    observed = float(np.max(q))
    med = np.array([statistics.median(r) for r in runs], dtype=float)
    by_median = _energy(np.abs(med[:, None] - med[None, :]) * w[:, None] * w[None, :], w)
    at = int(np.argmax(by_median)) if np.max(by_median) > 0 else int(np.argmax(q))
    if not observed > 0:
        return (at + 1, observed, 1.0)
    n = len(runs)
    orders = rng.rand(permutations, n).argsort(-1)
    # A shuffle that puts the same runs on each side is a tie and counts as above,
    # though its sums were added in another order: hence the relative tolerance.
    # (Without it an odd last run came out significant by rounding.)
    tie = observed * (1 - 1e-9)
    above = 0
    chunk = max(1, 2_000_000 // (n * n))  # bounds the (chunk, n, n) order masks' memory
    for lo in range(0, len(orders), chunk):
        o = orders[lo:lo + chunk]
        shuffled = _shuffled_energy(d, w, o)
        above += int(np.count_nonzero(shuffled.max(-1) >= tie))
    return (at + 1, observed, (above + 1) / (permutations + 1))


def change_points(runs, alpha=DEFAULT_ALPHA, permutations=DEFAULT_PERMUTATIONS, seed=1):
    """Change points of a series of runs (each a list of samples): a sorted list of
    (run index where the new level starts, p-value). Hierarchical: the segment whose
    best split is strongest is split while that split's p-value is below alpha."""
    rng = np.random.RandomState(seed)  # its stream never changes across numpy versions
    cuts = {}
    segments = [(0, len(runs))]
    candidates = {}
    while True:
        for seg in segments:
            if seg not in candidates:
                lo, hi = seg
                s = best_split(runs[lo:hi], permutations, rng)
                candidates[seg] = None if s is None else (lo + s[0], s[1], s[2])
        live = [(c[1], seg) for seg, c in candidates.items() if c is not None and seg in segments]
        if not live:
            break
        _, seg = max(live)
        at, _, p = candidates[seg]
        if p >= alpha:
            break
        cuts[at] = p
        segments.remove(seg)
        segments += [(seg[0], at), (at, seg[1])]
    return sorted(cuts.items())


def describe(runs, cuts, direction):
    """Each change point with the level before and after it: the median of the runs'
    samples between the neighbouring change points; ratio after/before; regression
    when the metric got worse in its direction."""
    edges = [0] + [at for at, _ in cuts] + [len(runs)]
    out = []
    for j, (at, p) in enumerate(cuts):
        before = statistics.median(v for r in runs[edges[j]:at] for v in r)
        after = statistics.median(v for r in runs[at:edges[j + 2]] for v in r)
        ratio = after / before if before else math.inf
        worse = ratio < 1 if direction == "higher" else ratio > 1
        out.append({"run": at, "before": before, "after": after, "ratio": ratio, "p_value": p,
                    "kind": "regression" if worse else "improvement"})
    return out


def commit_of(context):
    """The run's commit: its `--label commit=...` when CI gave one (the code under
    test), else the rdmasweep build's git_revision."""
    labels = context.get("labels") if isinstance(context.get("labels"), dict) else {}
    return str(labels.get("commit") or context.get("git_revision", ""))


def direction_of(metric):
    for table in (rr.RDMASWEEP_METRICS, rr.COUNTER_METRICS, rr.GBENCH_METRICS):
        if metric in table:
            return table[metric][0]
    return "lower"


def analyse(files, metrics=None, alpha=DEFAULT_ALPHA, permutations=DEFAULT_PERMUTATIONS):
    """Every change point of one history (files in run order): a list of dicts with
    point, metric, run (index into files), file, commit, date, before, after,
    ratio, p_value and kind."""
    found = []
    for (name, metric), runs in sorted(series(files, metrics).items()):
        if len(runs) < 2:
            continue
        samples = [s for _, s in runs]
        cuts = change_points(samples, alpha, permutations)
        for c in describe(samples, cuts, direction_of(metric)):
            f = files[runs[c["run"]][0]]
            c.update({"point": name, "metric": metric, "run": runs[c["run"]][0], "file": f.path,
                      "commit": commit_of(f.context), "date": str(f.context.get("date", ""))})
            found.append(c)
    return found


def dumps(found):
    return json.dumps(found, indent=2, sort_keys=True)
