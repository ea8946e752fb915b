"""Loading and normalising rdmasweep / Google Benchmark result files.

Shared by tools/plot and tools/compare (stdlib only). A results file is Google
Benchmark JSON ({"context": {...}, "benchmarks": [...]}); rdmasweep adds its
own context keys, per-point counters and a FILE.hist.json beside it. A point's
parameters come from its entries' `config` (its whole configuration), or from
its name in files written before entries carried one.
"""

import json
import math
import os
import re
import statistics


class InputError(Exception):
    """A file that cannot be used: unreadable, not JSON, or not a results file."""


# Metric name -> (better direction, unit, human label). "higher" or "lower".
RDMASWEEP_METRICS = {
    "bytes_per_second": ("higher", "B/s", "bandwidth"),
    "items_per_second": ("higher", "msg/s", "message rate"),
    "lat_min_us": ("lower", "us", "latency min"),
    "lat_p50_us": ("lower", "us", "latency p50"),
    "lat_p90_us": ("lower", "us", "latency p90"),
    "lat_p99_us": ("lower", "us", "latency p99"),
    "lat_p999_us": ("lower", "us", "latency p99.9"),
    "lat_p9999_us": ("lower", "us", "latency p99.99"),
    "lat_max_us": ("lower", "us", "latency max"),
    "lat_mean_us": ("lower", "us", "latency mean"),
    "cpu_seconds": ("lower", "s", "CPU time"),
}
# The ports' counters over a point (both sides summed; rdmasweep's normalized names):
# compared only when asked for (--metrics, or --threshold retransmits=0), since on a
# clean fabric they are 0 and any retransmission would be an infinite change.
COUNTER_METRICS = {
    "retransmits": ("lower", "", "retransmits"),
    "rnr_naks": ("lower", "", "RNR NAKs"),
    "out_of_sequence": ("lower", "", "out-of-sequence packets"),
    "errors": ("lower", "", "transport errors"),
    "packets_sent": ("lower", "", "packets sent"),
    "cnp_sent": ("lower", "", "CNPs sent"),
    "ecn_marked": ("lower", "", "ECN-marked packets"),
}
# Plain Google Benchmark files: times (normalised to ns) plus the counters above
# that such binaries commonly set.
GBENCH_METRICS = {
    "real_time": ("lower", "ns", "real time"),
    "cpu_time": ("lower", "ns", "CPU time"),
    "bytes_per_second": ("higher", "B/s", "bytes/s"),
    "items_per_second": ("higher", "items/s", "items/s"),
}
_TIME_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
AGGREGATE_SUFFIXES = ("_mean", "_median", "_stddev", "_cv")

# The knob table (core/config/knob_table.hpp) as the loader reads it: each key of an entry's
# `config` -> (its tag in a point name, None for the name's fixed head
# op/mode/qps:N/size:N/cq:N; its default). knobs.json beside this file is the binary's own
# `rdmasweep help --knobs`, so the tools need no build to read results; tests/tools/test_knobs.py
# fails when it differs from the built binary's (and says how to write it again).
def _knob_table():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "knobs.json"), encoding="utf-8") as f:
        return {k["key"]: (k["tag"], k["default"]) for k in json.load(f)}


KNOBS = _knob_table()
# The rest of a `config`: how long a point runs, not which point it is.
RUN_KEYS = ("iters", "duration", "warmup")
# The loop knobs by name tag, in name order, and their defaults (a knob appears in a
# name only when it differs from its default); SRQ is an axis of its own.
KNOB_NAMES = tuple(tag for tag, _ in KNOBS.values() if tag and tag != "srq")
KNOB_DEFAULTS = {tag: default for tag, default in KNOBS.values() if tag and tag != "srq"}

# rdmasweep point names: op/mode/qps:N/size:N/cq:N[/knob:N...][/flag...], flags
# being on/off modes such as /srq (a shared receive queue); a knob's value may be a
# share (/rate:50%).
_NAME_RE = re.compile(r"^(send|write|read|cas|faa)/(bw|lat)/qps:(\d+)/size:(\d+)/cq:(\d+)((?:/[a-z_]+:[a-z0-9.%]+)*)((?:/[a-z_]+)*)$")
_CQ_RE = re.compile(r"/cq:(\d+)(?:/|$)")


def parse_name(name):
    """Splits an rdmasweep point name into its parameters, or None if it is not one:
    {"op", "mode", "qps", "size", "cq", "knobs": {tag: value, only those not at
    their default; True for a flag}, "srq"}. For files whose entries carry no
    `config` (written before it)."""
    m = _NAME_RE.match(name)
    if not m:
        return None
    knobs = {}
    for part in m.group(6).split("/")[1:]:
        k, v = part.split(":")
        knobs[k] = int(v) if v.isdigit() else v  # a name, as cq_scope:process
    flags = m.group(7).split("/")[1:]
    # SRQ is an axis of its own; any other flag is a knob that is on (True) or off.
    for f in flags:
        if f != "srq":
            knobs[f] = True
    return {"op": m.group(1), "mode": m.group(2), "qps": int(m.group(3)),
            "size": int(m.group(4)), "cq": int(m.group(5)), "knobs": knobs, "srq": "srq" in flags}


def _count(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v < 0:
        raise ValueError(v)
    return int(v)


def params_from_config(cfg, name=""):
    """A point's parameters, as parse_name gives them, from its entry's `config`;
    None when the config lacks one of op, mode, qps, size or has a key this loader
    does not know (a newer rdmasweep's knob: the name then says more). The CQ
    depth is the one the point ran at: cq_depth 0 asks for a computed depth,
    which only the name's cq:N records (0 when the name has none)."""
    if not isinstance(cfg, dict) or any(k not in KNOBS and k not in RUN_KEYS for k in cfg):
        return None
    try:
        op, mode, qps, size = cfg["op"], cfg["mode"], _count(cfg["qps"]), _count(cfg["size"])
        cq = _count(cfg.get("cq_depth", 0))
    except (KeyError, ValueError):
        return None
    if not isinstance(op, str) or not isinstance(mode, str):
        return None
    if not cq:
        m = _CQ_RE.search(name)
        cq = int(m.group(1)) if m else 0
    knobs = {}
    for key, (tag, default) in KNOBS.items():
        if tag is None or tag == "srq" or key not in cfg:
            continue
        v = cfg[key]
        if isinstance(default, bool):
            if v is True:
                knobs[tag] = True
        elif v != default:
            if isinstance(default, str) and default != "auto":  # a name kind (cq_scope, transport)
                if not isinstance(v, str):
                    return None
                knobs[tag] = v
                continue
            try:
                knobs[tag] = _count(v)
            except ValueError:
                return None
    return {"op": op, "mode": mode, "qps": qps, "size": size, "cq": cq, "knobs": knobs, "srq": cfg.get("srq") is True}


def knob_diff(knobs, ref):
    """The knobs (name -> value) whose value differs from ref's, as "tx:32 rx:16"
    ("events" / "no events" for flags); a knob absent from a name has its default
    value (off for a flag)."""
    out = []
    for k in sorted(set(knobs) | set(ref), key=lambda k: (KNOB_NAMES.index(k) if k in KNOB_NAMES else 99, k)):
        a, b = knobs.get(k, KNOB_DEFAULTS.get(k, False)), ref.get(k, KNOB_DEFAULTS.get(k, False))
        if a != b:
            out.append(k if a is True else f"no {k}" if a is False else f"{k}:{a}")
    return " ".join(out)


def jain(counts):
    """Jain's fairness index of non-negative counts (1 = all equal), None when all are 0."""
    sq = sum(float(c) * c for c in counts)
    return (sum(counts) ** 2) / (len(counts) * sq) if counts and sq > 0 else None


def hist_path(path):
    """FILE.json -> FILE.hist.json (what rdmasweep writes beside a results file)."""
    return (path[:-5] if path.endswith(".json") else path) + ".hist.json"


def _read_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read {what}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not valid JSON: {e}") from None


def _number(v):
    """A finite float, or None (result files use null for missing values)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


class Point:
    """One benchmark point: its iteration runs (repetitions), aggregates and status."""

    def __init__(self, name):
        self.name = name
        self.config = None      # the first of its entries' `config` objects
        self.params = parse_name(name)  # until an entry brings its config
        self.runs = []          # iteration entries, in file order
        self.aggregates = {}    # aggregate_name -> entry
        self.errors = []        # error messages of failed runs
        self.entries = []       # every entry but the aggregates, failed ones too, in file order
        self.background = None  # client --beside: the background point of a NAME/beside row

    def add_config(self, cfg):
        """Takes the point's parameters from an entry's `config` (the first one
        that has them); the name's stay when none does."""
        if self.config is None and isinstance(cfg, dict):
            params = params_from_config(cfg, self.name)
            if params is not None:
                self.config, self.params = cfg, params

    @property
    def failed(self):
        """True when no run of this point succeeded."""
        return bool(self.errors) and not self.runs

    @property
    def partial(self):
        """True when some runs failed and others succeeded (survivors only are in runs)."""
        return bool(self.errors) and bool(self.runs)

    @property
    def repetitions(self):
        return len(self.runs)

    def samples(self, metric, time_scale=None):
        """The metric's value in every successful iteration run; falls back to the
        _median aggregate when the file holds aggregates only."""
        entries = self.runs or ([self.aggregates["median"]] if "median" in self.aggregates else [])
        out = []
        for e in entries:
            v = _number(e.get(metric))
            if v is not None and time_scale and metric in ("real_time", "cpu_time"):
                v *= _TIME_TO_NS.get(e.get("time_unit", "ns"), 1.0)
            if v is not None:
                out.append(v)
        return out

    def value(self, metric):
        """Representative value: the _median aggregate when there are repetitions,
        else the median of the iteration runs (the single run when there is one)."""
        agg = self.aggregates.get("median")
        if agg is not None and len(self.runs) > 1:
            v = _number(agg.get(metric))
            if v is not None:
                return v
        s = self.samples(metric)
        return statistics.median(s) if s else None

    def spread(self, metric):
        """(min, max) over repetitions, or None with fewer than two."""
        s = self.samples(metric)
        return (min(s), max(s)) if len(s) > 1 else None

    def ratio_samples(self, num, den):
        """num / den in every iteration run that has both (e.g. cpu_seconds / messages)."""
        out = []
        for e in self.runs or ([self.aggregates["median"]] if "median" in self.aggregates else []):
            a, b = _number(e.get(num)), _number(e.get(den))
            if a is not None and b:
                out.append(a / b)
        return out


class ResultFile:
    def __init__(self, path, context, points, hist, knees=None):
        self.path = path
        self.context = context
        self.points = points          # name -> Point, in file order
        self.hist = hist              # name -> hist.json entry ({} when absent)
        self.knees = knees            # the file's "knees" (--rate series), None when it has none

    @property
    def is_rdmasweep(self):
        return self.context.get("tool") == "rdmasweep" or (
            bool(self.points) and all(p.params for p in self.points.values()))

    @property
    def kind(self):
        return "an rdmasweep results file" if self.is_rdmasweep else "a plain Google Benchmark file"

    @property
    def metrics(self):
        return RDMASWEEP_METRICS if self.is_rdmasweep else GBENCH_METRICS

    def fabric(self):
        """A short label for the fabric, e.g. "rxe0 (RoCE)", "siw0 (iWARP)": the device and
        its transport (the link layer in files from before transports were recorded)."""
        dev = self.context.get("device")
        if not dev:
            return os.path.basename(self.path)
        kind = self.context.get("transport") or self.context.get("link_layer")
        return f"{dev} ({kind})" if kind else str(dev)

    def per_qp_messages(self, name):
        """Messages completed per QP of point NAME from the .hist.json: (counts, how),
        counts being the per-QP median over the repetitions (the one run when there
        is one), how describing that; (None, "") when the file has none."""
        h = self.hist.get(name)
        reps = h.get("per_qp_messages") if isinstance(h, dict) else None
        if not isinstance(reps, list):
            return None, ""
        reps = [r for r in reps if isinstance(r, list) and r and all(_number(v) is not None for v in r)]
        if not reps:
            return None, ""
        n = len(reps[0])
        reps = [r for r in reps if len(r) == n]
        if len(reps) == 1:
            return [float(v) for v in reps[0]], "one run"
        return [statistics.median(float(r[q]) for r in reps) for q in range(n)], \
            f"per-QP median of {len(reps)} repetitions"

    def per_thread_rates(self, name):
        """Each thread's messages per second over its own window, from the .hist.json's
        per_thread (the first repetition); None for a point without it (one thread)."""
        h = self.hist.get(name)
        reps = h.get("per_thread") if isinstance(h, dict) else None
        if not isinstance(reps, list) or not reps or not isinstance(reps[0], dict):
            return None
        m, sec = reps[0].get("messages"), reps[0].get("seconds")
        if not isinstance(m, list) or not isinstance(sec, list) or len(m) != len(sec):
            return None
        if any(_number(v) is None for v in m + sec):
            return None
        return [float(a) / float(b) if float(b) > 0 else 0.0 for a, b in zip(m, sec)]

    def per_qp_latency(self, name):
        """Per-QP latency of a lat point, in µs: {"min": [...], "max": [...], "mean": [...]}
        (per-QP median over the repetitions), or None."""
        h = self.hist.get(name)
        reps = h.get("per_qp_latency") if isinstance(h, dict) else None
        if not isinstance(reps, list):
            return None
        out = {}
        for key in ("min", "max", "mean"):
            rows = [r.get(f"{key}_ns") for r in reps if isinstance(r, dict)]
            rows = [r for r in rows if isinstance(r, list) and r]
            if not rows or any(len(r) != len(rows[0]) for r in rows):
                return None
            vals = []
            for q in range(len(rows[0])):
                col = [_number(r[q]) for r in rows]
                col = [v for v in col if v is not None]
                vals.append(statistics.median(col) / 1e3 if col else None)
            out[key] = vals
        return out

    def fairness(self, p):
        """(Jain index, max/min ratio) of point p: the median of its counters, else
        computed from the per-QP counts in the .hist.json; None where unknown
        (the ratio is infinite when some QP completed nothing)."""
        j, r = p.value("qp_jain_index"), p.value("qp_max_min_ratio")
        if j is None:
            counts, _ = self.per_qp_messages(p.name)
            if counts:
                j = jain(counts)
                if r is None and min(counts) > 0:
                    r = max(counts) / min(counts)
        return j, r

    def failed_points(self):
        return [p for p in self.points.values() if p.failed]

    def ok_points(self):
        """The points with a successful run; not the --beside rows (their configs are
        their points' own: isolation_pairs() has them)."""
        return [p for p in self.points.values() if not p.failed and p.background is None]

    def isolation_pairs(self):
        """client --beside: [(the point alone, its NAME/beside row)] where both ran."""
        out = []
        for p in self.points.values():
            alone = self.points.get(p.name[: -len("/beside")]) if p.name.endswith("/beside") else None
            if p.background is not None and not p.failed and alone is not None and not alone.failed:
                out.append((alone, p))
        return out


def _base_name(entry):
    """The point an entry belongs to: run_name, else name minus an aggregate suffix."""
    rn = entry.get("run_name")
    if isinstance(rn, str) and rn:
        return rn
    name = entry.get("name", "")
    if entry.get("run_type") == "aggregate":
        for suf in AGGREGATE_SUFFIXES:
            if name.endswith(suf):
                return name[: -len(suf)]
    return name


def load(path, with_hist=True):
    """Reads a results file (and FILE.hist.json when present). Raises InputError."""
    data = _read_json(path, "results")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(f"{path}: not a benchmark results file (no \"benchmarks\" list)")
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    sv = context.get("schema_version")
    if context.get("tool") == "rdmasweep" and sv not in (None, 1):
        raise InputError(f"{path}: rdmasweep schema_version {sv} is not supported (expected 1)")
    points = {}
    for e in data["benchmarks"]:
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise InputError(f"{path}: a benchmarks entry has no name")
        base = _base_name(e)
        p = points.setdefault(base, Point(base))
        p.add_config(e.get("config"))
        if isinstance(e.get("background"), str):
            p.background = e["background"]
        if e.get("error_occurred") or e.get("run_type") != "aggregate":
            p.entries.append(e)
        if e.get("error_occurred"):
            p.errors.append(str(e.get("error_message") or "failed"))
        elif e.get("run_type") == "aggregate":
            agg = e.get("aggregate_name") or e["name"][len(base) + 1:]
            p.aggregates[agg] = e
        else:
            p.runs.append(e)
    hist = {}
    if with_hist and os.path.exists(hist_path(path)):
        h = _read_json(hist_path(path), "histograms")
        if isinstance(h, dict) and isinstance(h.get("points"), dict):
            hist = h["points"]
    knees = data.get("knees")
    knees = [k for k in knees if isinstance(k, dict)] if isinstance(knees, list) else None
    return ResultFile(path, context, points, hist, knees)
