"""tools/combos' pure parts: the axes (from `rdmasweep help --knobs`), a seeded
covering array over them (every pair of values of every two axes in some run), the
refusal table's reasons as patterns, and the oracle that judges one run from its
exit code, stderr and results files. Stdlib only; no device, no process."""

import itertools
import math
import random
import re

# Small values per knob: each run is one short counted point. A knob of the table
# that is not here joins with values derived from its default (new_knob_values).
VALUES = {
    "op": ["send", "write", "read", "cas", "faa"],
    "mode": ["bw", "lat"],
    "qps": ["1", "3"],
    "size": ["8", "64", "1000"],
    "tx_depth": ["16", "64"],
    "rx_depth": ["16", "64"],
    "cq_depth": ["0", "4096"],
    "post_list": ["1", "4"],
    "signal_every": ["1", "8"],
    "inline_size": ["auto", "0"],
    "outs": ["0", "1", "4"],
    "poll_batch": ["1", "16"],
    "srq": ["0", "1"],
    "events": ["0", "1"],
    "threads": ["1", "2"],
    "cq_scope": ["thread", "process"],
    "tclass": ["0", "32"],
    "sl": ["0", "1"],
    "flow_label": ["0", "1"],
    "mtu": ["0", "512"],
    "bidir": ["0", "1"],
    "mr_per_qp": ["0", "1"],
    "transport": ["rc", "ud"],
    "validate": ["0", "1"],
    "qp_timeout": ["14", "18"],
    "retry_count": ["7", "2"],
    # Low enough for Soft-RoCE in a VM to keep (a late post is counted, not a failure).
    "rate": ["none", "5kpps"],
    "arrivals": ["constant", "poisson"],
}
# Knobs the array leaves at their default, and why.
LEFT_OUT = {"hugepages": "needs huge pages reserved on the host (a host refusal, not a combination)"}
# Axes that are client options rather than knobs: flag and values.
OPTIONS = {"cm": ("--cm", ["0", "1"]), "clock": ("--clock", ["system", "tsc"])}


def new_knob_values(row):
    """Values for a knob the table has and VALUES does not: a flag both ways, a number
    its default and one more; anything else its default alone (no pairs)."""
    d = row["default"]
    if isinstance(d, bool):
        return ["0", "1"]
    if isinstance(d, int):
        return [str(d), str(d * 2 if d else 1)]
    return [str(d)]


def axes_from(knobs):
    """[(key, flag, values)] in the table's order, then the client options; and notes
    for knobs that joined by themselves or were left out."""
    axes, notes = [], []
    for k in knobs:
        if k["key"] in LEFT_OUT:
            notes.append(f"{k['key']}: left at its default ({LEFT_OUT[k['key']]})")
            continue
        vals = VALUES.get(k["key"])
        if vals is None:
            vals = new_knob_values(k)
            notes.append(f"{k['key']}: not in VALUES, runs with {vals} (from its default)")
        if len(vals) > 1:
            axes.append((k["key"], k["flag"], vals))
    for key, (flag, vals) in OPTIONS.items():
        axes.append((key, flag, vals))
    return axes, notes


def all_pairs(axes):
    return {(i, a, j, b) for i, j in itertools.combinations(range(len(axes)), 2)
            for a in range(len(axes[i][2])) for b in range(len(axes[j][2]))}


def pairs_of(row):
    """The pairs one row (a list of value indexes) covers."""
    return {(i, row[i], j, row[j]) for i, j in itertools.combinations(range(len(row)), 2)}


def _fill(axes, uncovered, fixed, rng):
    """A row with `fixed` ({axis: value}) set and every other axis the value that
    covers the most uncovered pairs with the axes set before it (ties at random)."""
    row = [None] * len(axes)
    for i, v in fixed.items():
        row[i] = v
    rest = [i for i in range(len(axes)) if i not in fixed]
    rng.shuffle(rest)
    for k in rest:
        best, best_gain = [], -1
        for v in range(len(axes[k][2])):
            gain = sum(1 for i, w in enumerate(row) if w is not None and
                       ((min(i, k), w if i < k else v, max(i, k), v if i < k else w) in uncovered))
            if gain > best_gain:
                best, best_gain = [v], gain
            elif gain == best_gain:
                best.append(v)
        row[k] = rng.choice(best)
    return row


def _repair(axes, row, fixed, runs, rng):
    """The row changed axis by axis (never `fixed`) until `runs` accepts it, when
    one change per axis can do it; else the row unchanged."""
    trial = list(row)
    order = [i for i in range(len(axes)) if i not in fixed]
    rng.shuffle(order)
    for k in order:
        if runs(trial):
            return trial
        for v in range(len(axes[k][2])):
            t = list(trial)
            t[k] = v
            if runs(t):
                return t
    return trial if runs(trial) else row


def covering_array(axes, seed, runs=lambda row: True, candidates=12):
    """Rows (lists of value indexes) in which every pair of values of every two axes
    appears at least once: seeded greedy (AETG). `runs(row)` says whether the binary
    is expected to run a row rather than refuse it; rows it accepts are preferred, so
    a pair only refusals can hold (UD with WRITE) is covered by a refused row."""
    rng = random.Random(seed)
    uncovered = all_pairs(axes)
    rows = []
    while uncovered:
        pool = sorted(uncovered)
        best = None
        for _ in range(candidates):
            i, a, j, b = rng.choice(pool)
            fixed = {i: a, j: b}
            row = _repair(axes, _fill(axes, uncovered, fixed, rng), fixed, runs, rng)
            key = (runs(row), len(pairs_of(row) & uncovered))
            if best is None or key > best[0]:
                best = (key, row)
        rows.append(best[1])
        uncovered -= pairs_of(best[1])
    return rows


def all_triples(axes):
    return {(i, a, j, b, k, c) for i, j, k in itertools.combinations(range(len(axes)), 3)
            for a in range(len(axes[i][2])) for b in range(len(axes[j][2])) for c in range(len(axes[k][2]))}


def triples_of(row):
    return {(i, row[i], j, row[j], k, row[k]) for i, j, k in itertools.combinations(range(len(row)), 3)}


def triple_row(axes, uncovered, rng, runs=lambda row: True, tries=20):
    """A random row holding an uncovered triple, the rest random (repaired to run):
    the first of `tries` random triples whose row runs (a triple only refusals hold,
    such as SRQ with WRITE, is taken only when no other comes up)."""
    pool = sorted(uncovered)
    for _ in range(tries):
        i, a, j, b, k, c = rng.choice(pool)
        fixed = {i: a, j: b, k: c}
        row = _repair(axes, [fixed.get(n, rng.randrange(len(axes[n][2]))) for n in range(len(axes))], fixed, runs, rng)
        if runs(row):
            break
    return row


def named(axes, row):
    """{key: value text} of a row."""
    return {axes[i][0]: axes[i][2][v] for i, v in enumerate(row)}


# -- refusals ---------------------------------------------------------------------

def reason_pattern(reason):
    """A refusal table reason ("size: {size} is over ...") as a regex: {key} matches
    one value."""
    parts = re.split(r"\{[a-z_0-9]+\}", reason)
    return re.compile("[^ ]+?".join(re.escape(p) for p in parts))


def match_refusal(line, refusals):
    """The id of the table row whose reason the stderr line carries, or None."""
    for r in refusals:
        if reason_pattern(r["reason"]).search(line):
            return r["id"]
    return None


def _cq_need(v):
    qps, threads = int(v["qps"]), int(v["threads"])
    fetch_lat = v["op"] in ("read", "cas", "faa") and v["mode"] == "lat"
    sig = 1 if fetch_lat or v["rate"] != "none" else int(v["signal_every"])  # a paced point signals every message
    per_qp = math.ceil(int(v["tx_depth"]) / sig)
    rx = int(v["rx_depth"])
    if v["srq"] == "1":
        need = (per_qp + (rx if v["mode"] == "lat" else 0)) * qps + rx
    else:
        imm = v["events"] == "1" and v["op"] == "write" and v["mode"] == "lat"
        need = (per_qp + (rx if v["op"] == "send" or imm else 0)) * qps
    return need * (threads if v["cq_scope"] == "process" else 1)


# What the binary's table refuses, for choosing rows that run; the binary decides
# (a refusal it makes that this does not foresee is listed, not failed).
PREDICT = {
    "post-list-depth": lambda v: int(v["post_list"]) > int(v["tx_depth"]),
    "signal-window": lambda v: int(v["signal_every"]) + int(v["post_list"]) > int(v["tx_depth"]) + 1,
    "srq-op": lambda v: v["srq"] == "1" and v["op"] != "send",
    "ud-op": lambda v: v["transport"] == "ud" and v["op"] != "send",
    "ud-size": lambda v: v["transport"] == "ud" and v["mtu"] != "0" and int(v["size"]) > int(v["mtu"]),
    "cq-depth": lambda v: v["cq_depth"] != "0" and int(v["cq_depth"]) < _cq_need(v),
    "bidir-lat": lambda v: v["bidir"] == "1" and v["mode"] == "lat",
    "bidir-ud": lambda v: v["bidir"] == "1" and v["transport"] == "ud",
    "validate-atomic": lambda v: v["validate"] == "1" and v["op"] in ("cas", "faa"),
    "validate-ud": lambda v: v["validate"] == "1" and v["transport"] == "ud",
    "validate-bidir": lambda v: v["validate"] == "1" and v["bidir"] == "1",
    "validate-write-bw": lambda v: v["validate"] == "1" and v["op"] == "write" and v["mode"] == "bw",
    "events-shared-cq": lambda v: v["events"] == "1" and int(v["threads"]) > 1 and v["cq_scope"] == "process",
    "cm-ud": lambda v: v["cm"] == "1" and v["transport"] == "ud",
    "rate-lat": lambda v: v["rate"] != "none" and v["mode"] != "bw",
    "rate-post-list": lambda v: v["rate"] != "none" and v["post_list"] != "1",
    "arrivals-rate": lambda v: v["arrivals"] != "constant" and v["rate"] == "none",
}


def predict(values, refusals):
    """The id of the first table row expected to refuse `values`, or None."""
    full = dict(DEFAULTS, **values)
    for r in refusals:
        f = PREDICT.get(r["id"])
        if f and f(full):
            return r["id"]
    return None


DEFAULTS = {"op": "send", "mode": "bw", "qps": "1", "size": "65536", "tx_depth": "128", "rx_depth": "512",
            "cq_depth": "0", "post_list": "1", "signal_every": "32", "srq": "0", "events": "0", "threads": "1",
            "cq_scope": "thread", "mtu": "0", "bidir": "0", "transport": "rc", "validate": "0", "cm": "0",
            "rate": "none", "arrivals": "constant"}


# -- the oracle ---------------------------------------------------------------------

def _close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def check_entry(entry, record, values, iters):
    """What is wrong with one point's results entry and its histogram record (empty
    when nothing): exact counts per QP and per thread, the config asked for, and
    bytes and rates that follow from the counts."""
    errs = []
    if entry.get("error_occurred"):
        return [f"point failed: {entry.get('error_message', '')}"]
    cfg = entry.get("config", {})
    for key in ("op", "mode", "qps", "tx_depth", "threads", "transport", "bidir", "validate", "srq"):
        if key in values and key in cfg and str(cfg[key]).lower() not in (values[key], {"0": "false", "1": "true"}.get(values[key])):
            errs.append(f"config {key} is {cfg[key]}, asked {values[key]}")
    qps, threads = int(cfg.get("qps", values.get("qps", 1))), int(cfg.get("threads", values.get("threads", 1)))
    size = int(cfg.get("size", values.get("size", 0)))
    total = qps * threads * iters
    got = entry.get("messages")
    want, what = total, f"{qps} QPs x {threads} threads x {iters} = {total}"
    s, r = entry.get("messages_sent"), entry.get("messages_received")
    if values.get("mode") == "bw" and s and r is not None and r < s:
        # UD bandwidth that lost datagrams: the window's share of what arrived (results.md)
        want = round(total * r / s)
        what = f"the window's share of the arrivals, {total} x {r} / {s} = {want}"
    if got != want:
        errs.append(f"messages {got}, not {what}")
    for k in ("qp_messages_min", "qp_messages_max"):
        if entry.get(k) != iters:
            errs.append(f"{k} {entry.get(k)}, not {iters}")
    if entry.get("bytes") != (got or 0) * size:
        errs.append(f"bytes {entry.get('bytes')}, not messages x size = {(got or 0) * size}")
    secs = entry.get("seconds") or 0
    if not secs > 0:
        errs.append(f"seconds {secs}")
    else:
        for rate, num in (("bytes_per_second", entry.get("bytes", 0)), ("items_per_second", got or 0)):
            if not _close(entry.get(rate, -1), num / secs):
                errs.append(f"{rate} {entry.get(rate)}, not {num} / {secs} = {num / secs}")
    if values.get("transport") == "ud" or "messages_sent" in entry:
        s, r, lost = (entry.get(k) for k in ("messages_sent", "messages_received", "messages_lost"))
        if None in (s, r, lost) or s != r + lost or r > s:
            errs.append(f"UD: sent {s} is not received {r} + lost {lost}")
    if values.get("bidir") == "1" and entry.get("reverse_messages") != total:
        errs.append(f"reverse_messages {entry.get('reverse_messages')}, not {total}")
    errs += _check_record(record, qps, threads, iters)
    return errs


def _check_record(record, qps, threads, iters):
    if record is None:
        return ["no histogram record for the point"]
    errs = []
    per_qp = (record.get("per_qp_messages") or [[]])[0]
    if len(per_qp) != qps * threads or any(m != iters for m in per_qp):
        errs.append(f"per-QP messages {per_qp}, not {qps * threads} x {iters}")
    if threads > 1:
        per_thread = ((record.get("per_thread") or [{}])[0]).get("messages")
        if per_thread != [qps * iters] * threads:
            errs.append(f"per-thread messages {per_thread}, not {threads} x {qps * iters}")
    return errs


def judge(code, stderr, results, hist, values, iters, refusals):
    """(verdict, detail): ("ran", ""), ("refused", id) or ("failed", why) for one run
    from its exit code, stderr, results JSON and histogram JSON (None when absent)."""
    lines = stderr.rstrip("\n").split("\n") if stderr.strip() else []
    if code == 2:
        if len(lines) != 1:
            return "failed", f"exit 2 with {len(lines)} lines on stderr, not one"
        rid = match_refusal(lines[0], refusals)
        return ("refused", rid) if rid else ("failed", f"exit 2 with a reason not in the refusal table: {lines[0]}")
    if code != 0:
        why = [b.get("error_message") for b in (results or {}).get("benchmarks", []) if b.get("error_occurred")]
        return "failed", f"exit {code}: {why[0] if why else lines[-1] if lines else 'no stderr'}"
    entries = [b for b in (results or {}).get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]
    if len(entries) != 1:
        return "failed", f"{len(entries)} result entries, not one"
    record = ((hist or {}).get("points") or {}).get(entries[0].get("name"))
    errs = check_entry(entries[0], record, values, iters)
    return ("failed", "; ".join(errs)) if errs else ("ran", "")
