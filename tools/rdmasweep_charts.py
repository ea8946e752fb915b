"""Charts for tools/plot: matplotlib (Agg) figures from loaded result files.

Every chart function takes the list of Series (one per file, the first being
the reference for ratios) and returns the list of Chart records it wrote.
"""

import math
import os
import re
from collections import Counter

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator  # noqa: E402

FILE_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v")]
COLOURS = plt.get_cmap("tab10").colors
PERCENTILES = [("lat_p50_us", "p50"), ("lat_p99_us", "p99"), ("lat_p999_us", "p99.9")]
plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "axes.grid": True, "grid.alpha": 0.3,
                     "svg.fonttype": "none", "figure.dpi": 100})


class Chart:
    def __init__(self, name, title, files, note=""):
        self.name, self.title, self.files, self.note = name, title, files, note

    @property
    def png(self):
        return next(f for f in self.files if f.endswith(".png"))


class Series:
    """One file's points as plotted: one point per (op, mode, qps, size) at the
    reference loop knobs, plus the points of any CQ depth axis."""

    def __init__(self, rf, label):
        self.rf, self.label = rf, label
        pts = [p for p in rf.ok_points() if p.params]
        groups = {}
        for p in pts:
            pr = p.params
            groups.setdefault((pr["op"], pr["mode"], pr["qps"], pr["size"]), []).append(p)
        # The CQ depth in a name is resolved (depth 0 becomes a per-QP-count value),
        # so a CQ axis is a base point with several depths; rank them, largest first.
        sig = {}
        for base, ps in groups.items():
            depths = sorted({p.params["cq"] for p in ps}, reverse=True)
            for p in ps:
                sig[p.name] = (depths.index(p.params["cq"]), tuple(sorted(p.params["knobs"].items())))
        counts = Counter(sig.values())
        self.ref = max(counts, key=lambda s: (counts[s], not s[1], -s[0])) if counts else (0, ())
        self.main = {b: p for b, ps in groups.items() for p in ps if sig[p.name] == self.ref}
        self.cq_axis = {b: sorted((p for p in ps if sig[p.name][1] == self.ref[1]), key=lambda p: p.params["cq"])
                        for b, ps in groups.items()}
        self.cq_axis = {b: ps for b, ps in self.cq_axis.items() if len(ps) > 1}
        self.hidden = len(pts) - len(self.main)


def size_label(v):
    v = int(round(v))
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if v >= scale and v % scale == 0:
            return f"{v // scale}{unit}"
    return str(v)


def _log2_axis(ax, values, fmt=size_label):
    ax.set_xscale("log", base=2)
    vals = sorted(set(values))
    if len(vals) > 12:  # keep tick labels legible
        step = math.ceil(len(vals) / 12)
        vals = vals[::step]
    ax.xaxis.set_major_locator(FixedLocator(vals))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt(v)))


def _plain_log(axis, values):
    """Plain numbers (40, 100, 2000) on a log axis; minor labels when it spans
    too little for the decade labels alone to be readable."""
    vals = [v for v in values if v and v > 0]
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    if vals and max(vals) / min(vals) < 30:
        axis.set_minor_formatter(FuncFormatter(
            lambda v, _pos: f"{v:g}" if round(v / 10 ** math.floor(math.log10(v))) in (2, 3, 5) else ""))
    else:
        axis.set_minor_formatter(NullFormatter())


def _log_y(ax, ys, use_log):
    ys = [y for y in ys if y and y > 0]
    if ys and use_log:
        ax.set_yscale("log")
        _plain_log(ax.yaxis, ys)


def _file_handles(series):
    if len(series) < 2:
        return []
    return [Line2D([], [], color="0.25", linestyle=FILE_STYLES[i % len(FILE_STYLES)][0],
                   marker=FILE_STYLES[i % len(FILE_STYLES)][1], label=s.label) for i, s in enumerate(series)]


def _save(fig, out_dir, name):
    files = []
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, f"{name}.{ext}")
        fig.savefig(path, dpi=110 if ext == "png" else None, bbox_inches="tight")
        files.append(path)
    plt.close(fig)
    return files


def _grid(nrows, ncols, w=5.0, h=3.6):
    return plt.subplots(nrows, ncols, figsize=(w * ncols + 1.2, h * nrows + 0.6), squeeze=False)


def line_chart(series, out_dir, name, title, rows_cols, xlabel, ylabel, xfmt=size_label, ratio=True, note="",
               log_y=False):
    """rows_cols: {(row, col): {series_key: {x: (y, lo, hi)}}} per file (a list).
    Draws the values, and with two or more files a NAME_ratio chart of each file
    divided by the first at the points they share."""
    panels = sorted({pc for d in rows_cols for pc in d}, key=lambda rc: (rc[0][0], rc[1][0]))
    if not panels:
        return []
    rows = sorted({r for r, _ in panels})
    cols = sorted({c for _, c in panels})
    keys = sorted({k for d in rows_cols for pc in d for k in d[pc]})
    colour = {k: COLOURS[i % len(COLOURS)] for i, k in enumerate(keys)}
    # One y scale for the whole figure, so panels read alike.
    all_ys = [v[0] for d in rows_cols for pc in d.values() for pts in pc.values() for v in pts.values()]
    all_ys = [y for y in all_ys if y and y > 0]
    use_log = bool(all_ys) and (log_y or max(all_ys) / min(all_ys) > 30)
    charts = []
    variants = [("", None)] + ([("_ratio", 0)] if ratio and len(series) > 1 else [])
    for suffix, ref in variants:
        fig, axes = _grid(len(rows), len(cols))
        drawn = set()
        for (r, c), ax in ((rc, axes[rows.index(rc[0])][cols.index(rc[1])]) for rc in panels):
            xs_all, ys_all = [], []
            for fi, data in enumerate(rows_cols):
                if ref is not None and fi == ref:
                    continue
                ls, mk = FILE_STYLES[fi % len(FILE_STYLES)]
                for k, pts in sorted(data.get((r, c), {}).items()):
                    xs = sorted(pts)
                    if ref is None:
                        ys = [pts[x][0] for x in xs]
                    else:
                        base = rows_cols[ref].get((r, c), {}).get(k, {})
                        xs = [x for x in xs if base.get(x) and base[x][0]]
                        ys = [pts[x][0] / base[x][0] for x in xs]
                    if not xs:
                        continue
                    ax.plot(xs, ys, linestyle=ls, marker=mk, color=colour[k], markersize=4)
                    drawn.add(k)
                    if ref is None and all(pts[x][1] is not None for x in xs):
                        ax.fill_between(xs, [pts[x][1] for x in xs], [pts[x][2] for x in xs],
                                        color=colour[k], alpha=0.15, linewidth=0)
                    xs_all += xs
                    ys_all += ys
            if not xs_all:
                continue
            _log2_axis(ax, xs_all, xfmt)
            if ref is None:
                _log_y(ax, ys_all, use_log)  # minor labels by this panel's own range
                ax.set_ylabel(ylabel + (" (log)" if use_log and "log" not in ylabel else ""))
            else:
                ax.axhline(1.0, color="0.3", linewidth=0.8)
                ax.set_ylabel(f"ratio to {series[ref].label}")
            ax.set_xlabel(xlabel)
            ax.set_title(" · ".join(x for x in (c[1], r[1]) if x))
        if not drawn:  # e.g. a ratio chart of files with no point in common
            plt.close(fig)
            continue
        for ax in axes.flat:
            if not ax.has_data():
                ax.set_visible(False)
        files = _file_handles(series)
        handles = [Line2D([], [], color=colour[k], label=k[1]) for k in keys if k in drawn] + (
            files if ref is None else files[:ref] + files[ref + 1:])
        top_right = next(ax for ax in reversed(axes[0]) if ax.get_visible()) if any(
            ax.get_visible() for ax in axes[0]) else axes[0][-1]
        top_right.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
                         frameon=False)
        t = title + (f" (ratio to {series[ref].label})" if ref is not None else "")
        fig.suptitle(t + (f"\n{note}" if note else ""), fontsize=12)
        fig.tight_layout()
        charts.append(Chart(name + suffix, t, _save(fig, out_dir, name + suffix), note))
    return charts


def _yv(p, metric, scale):
    v = p.value(metric)
    if v is None:
        return None
    sp = p.spread(metric)
    lo, hi = (sp[0] * scale, sp[1] * scale) if sp else (None, None)
    return (v * scale, lo, hi)


def _op_col(op):
    return ({"send": 0, "write": 1, "read": 2}.get(op, 3), op.upper())


def _knob_note(series):
    """Say which points a chart leaves out (CQ depth axis, other loop knobs)."""
    notes = []
    for s in series:
        if s.hidden:
            what = ", ".join(f"{k} {v}" for k, v in s.ref[1])
            cq = "the largest CQ depth of each point" if s.cq_axis else ""
            shown = " and ".join(x for x in (cq, what) if x)
            notes.append(f"{s.label}: at {shown}" + (" (all depths: cq_depth chart)" if s.cq_axis else "")
                         + f"; {s.hidden} other point(s) not shown")
    return "; ".join(notes)


def bandwidth(series, out_dir):
    data = []
    for s in series:
        d = {}
        for (op, mode, qps, size), p in s.main.items():
            v = _yv(p, "bytes_per_second", 8 / 1e9)
            if mode == "bw" and v:
                d.setdefault(((0, ""), _op_col(op)), {}).setdefault(
                    (qps, f"{qps} QP" + ("s" if qps > 1 else "")), {})[size] = v
        data.append(d)
    return line_chart(series, out_dir, "bandwidth", "Bandwidth vs message size (payload Gb/s)", data,
                      "message size (bytes, log2)", "bandwidth (Gb/s)", note=_knob_note(series))


def message_rate(series, out_dir):
    sizes = sorted({k[3] for s in series for k in s.main if k[1] == "bw"})
    if len(sizes) > 6:  # a legible number of lines, spread over the range
        sizes = [sizes[round(i * (len(sizes) - 1) / 5)] for i in range(6)]
    data = []
    for s in series:
        d = {}
        for (op, mode, qps, size), p in s.main.items():
            v = _yv(p, "items_per_second", 1e-6)
            if mode == "bw" and size in sizes and v:
                d.setdefault(((0, ""), _op_col(op)), {}).setdefault((size, f"{size_label(size)} B"), {})[qps] = v
        data.append(d)
    return line_chart(series, out_dir, "message_rate", "Message rate vs QP count", data,
                      "QPs (log2)", "message rate (Mmsg/s)", xfmt=lambda v: str(int(round(v))),
                      note=_knob_note(series))


def latency(series, out_dir):
    data, kinds = [], {}
    for s in series:
        d = {}
        for (op, mode, qps, size), p in s.main.items():
            if mode != "lat":
                continue
            if p.runs and p.runs[0].get("label"):
                kinds[op] = p.runs[0]["label"]
            for i, (metric, pname) in enumerate(PERCENTILES):
                v = _yv(p, metric, 1.0)
                if v:
                    row = (qps, f"{qps} QP" + ("s" if qps > 1 else ""))
                    d.setdefault((row, _op_col(op)), {}).setdefault((i, pname), {})[size] = v
        data.append(d)
    note = "; ".join([f"{op.upper()}: {k}" for op, k in sorted(kinds.items())] + ([_knob_note(series)] if _knob_note(series) else []))
    return line_chart(series, out_dir, "latency", "Latency percentiles vs message size", data,
                      "message size (bytes, log2)", "latency (µs, log)", note=note, log_y=True)


def cq_depth(series, out_dir):
    """Small multiples: bandwidth vs size, a line per CQ depth, for each op and QP count."""
    data = []
    for s in series:
        d = {}
        for (op, mode, qps, size), ps in s.cq_axis.items():
            if mode != "bw":
                continue
            for p in ps:
                v = _yv(p, "bytes_per_second", 8 / 1e9)
                if v:
                    cq = p.params["cq"]
                    d.setdefault((_op_col(op), (qps, f"{qps} QP" + ("s" if qps > 1 else ""))), {}).setdefault(
                        (cq, f"CQ depth {cq}"), {})[size] = v
        data.append(d)
    if not any(data):
        return []
    return line_chart(series, out_dir, "cq_depth", "Effect of CQ depth on bandwidth", data,
                      "message size (bytes, log2)", "bandwidth (Gb/s)", ratio=False)


def pick_hist_points(series, regex, cap):
    """Latency points with a histogram, in results order; (chosen, left out).
    With a regex: every match, the first cap of them. Without: the points the
    other charts show, spread evenly over them when there are more than cap."""
    names = []
    for s in series:
        shown = {p.name for p in s.main.values()}
        for name, p in s.rf.points.items():  # results order: send, write, read
            h = s.rf.hist.get(name)
            if name in names or not isinstance(h, dict) or not h.get("histogram") or p.failed:
                continue
            if (regex is not None and re.search(regex, name)) or (regex is None and name in shown):
                names.append(name)
    if regex is None and len(names) > cap:
        pick = sorted({round(i * (len(names) - 1) / (cap - 1)) for i in range(cap)}) if cap > 1 else [0]
        return [names[i] for i in pick], [n for i, n in enumerate(names) if i not in pick]
    return names[:cap], names[cap:]


def _buckets_us(h):
    b = [(lo / 1e3, (hi + 1) / 1e3, n) for lo, hi, n in h.get("buckets", []) if n]
    return sorted(b)


def latency_distribution(series, out_dir, names):
    """Histogram (share of samples in log-spaced bins) and CDF per chosen point."""
    if not names:
        return []
    ncols = min(3, len(names))
    nrows = math.ceil(len(names) / ncols)
    figs = {"latency_hist": _grid(nrows, ncols, 4.6, 3.3), "latency_cdf": _grid(nrows, ncols, 4.6, 3.3)}
    for i, name in enumerate(names):
        hs = [(fi, s, _buckets_us(s.rf.hist[name]["histogram"])) for fi, s in enumerate(series)
              if name in s.rf.hist and s.rf.hist[name].get("histogram")]
        hs = [x for x in hs if x[2]]
        lo = min(b[0][0] for _, _, b in hs)
        hi = max(b[-1][1] for _, _, b in hs)
        nb = 50
        edges = [lo * (hi / lo) ** (k / nb) for k in range(nb + 1)] if hi > lo > 0 else [lo, hi + 1e-3]
        kind = hs[0][1].rf.hist[name].get("latency_kind", "")
        for key, (fig, axes) in figs.items():
            ax = axes[i // ncols][i % ncols]
            for fi, s, buckets in hs:
                ls, _mk = FILE_STYLES[fi % len(FILE_STYLES)]
                total = sum(n for _, _, n in buckets)
                c = COLOURS[fi % len(COLOURS)]
                if key == "latency_hist":
                    counts = [0] * (len(edges) - 1)
                    for blo, bhi, n in buckets:  # re-bin by bucket midpoint
                        mid = (blo + bhi) / 2
                        k = min(len(counts) - 1, max(0, sum(1 for e in edges[1:-1] if e <= mid)))
                        counts[k] += n
                    ax.stairs([100 * n / total for n in counts], edges, color=c, linestyle=ls,
                              label=s.label, linewidth=1.4)
                    ax.set_ylabel("share of samples (%)")
                else:
                    xs, ys, cum = [buckets[0][0]], [0.0], 0
                    for _blo, bhi, n in buckets:
                        cum += n
                        xs.append(bhi)
                        ys.append(cum / total)
                    ax.step(xs, ys, where="post", color=c, linestyle=ls, label=s.label, linewidth=1.4)
                    for q in (0.5, 0.99):
                        ax.axhline(q, color="0.6", linewidth=0.6, linestyle=":")
                    ax.set_ylabel("cumulative share")
                    ax.set_ylim(0, 1.02)
            ax.set_xscale("log")
            _plain_log(ax.xaxis, [lo, hi])
            ax.set_xlabel("latency (µs, log)" + (f" — {kind}" if kind and len(kind) < 30 else ""))
            ax.set_title(name, fontsize=9)
    charts = []
    for key, (fig, axes) in figs.items():
        if len(series) > 1:
            fig.legend(handles=[Line2D([], [], color=COLOURS[fi % len(COLOURS)],
                                       linestyle=FILE_STYLES[fi % len(FILE_STYLES)][0], label=s.label)
                                for fi, s in enumerate(series)],
                       loc="upper right", ncol=len(series), fontsize="small", frameon=False)
        for ax in list(axes.flat)[len(names):]:
            ax.set_visible(False)
        title = "Latency distribution" if key == "latency_hist" else "Latency CDF"
        fig.suptitle(title, fontsize=12)
        fig.tight_layout()
        charts.append(Chart(key, title, _save(fig, out_dir, key)))
    return charts
