"""Shared chart plumbing for tools/plot: matplotlib (Agg) setup, file styles and
colours, the Chart record, the Key and Series classes that turn a loaded result
file into plotted points, labels and log axes, _save/_grid, and line_chart, the
small-multiples line chart (with a ratio-to-the-first-file twin) that the metric
charts in rdmasweep_metric_charts are built on; and the fairness, per-QP bar
and latency distribution charts. Every chart function takes the list of Series
(one per file, the first being the reference for ratios) and returns the list of
Chart records it wrote.
"""

import math
import os
import re
import textwrap
from collections import Counter, namedtuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator  # noqa: E402
from rdmasweep_results import jain, knob_diff  # noqa: E402

FILE_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v")]
COLOURS = plt.get_cmap("tab10").colors
plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "axes.grid": True, "grid.alpha": 0.3,
                     "svg.fonttype": "none", "figure.dpi": 100})


class Chart:
    def __init__(self, name, title, files, note=""):
        self.name, self.title, self.files, self.note = name, title, files, note

    @property
    def png(self):
        return next(f for f in self.files if f.endswith(".png"))


class Key(namedtuple("Key", "op mode qps size srq")):
    """A plotted point's identity in a file: op, mode, QP count, size and SRQ on/off."""


class Series:
    """One file's points as plotted. For each Key, one main point at the reference
    loop knobs (the most common knob suffixes) and the largest CQ depth; points of
    the same Key that differ in their knob suffixes are variants, drawn as series
    of their own and labelled by the knobs that differ (e.g. "poll:1"); a Key with
    no point at the reference knobs (e.g. queues shrunk by --cq-policy cap) uses
    its nearest point, labelled the same way (adjusted). Points of one Key and
    knobs at several CQ depths form the CQ depth axis."""

    def __init__(self, rf, label):
        self.rf, self.label = rf, label
        pts = [p for p in rf.ok_points() if p.params]
        groups = {}
        for p in pts:
            pr = p.params
            groups.setdefault(Key(pr["op"], pr["mode"], pr["qps"], pr["size"], pr["srq"]), []).append(p)

        def knobs_of(p):
            return tuple(sorted(p.params["knobs"].items()))
        # The CQ depth in a name is resolved (depth 0 becomes a per-QP-count value),
        # so a CQ axis is a point with several depths; rank them, largest first.
        sig = {}
        for ps in groups.values():
            for kn in {knobs_of(p) for p in ps}:
                same = [p for p in ps if knobs_of(p) == kn]
                depths = sorted({p.params["cq"] for p in same}, reverse=True)
                for p in same:
                    sig[p.name] = (depths.index(p.params["cq"]), kn)
        counts = Counter(sig.values())
        self.ref = max(counts, key=lambda s: (counts[s], not s[1], -s[0])) if counts else (0, ())
        ref_knobs = dict(self.ref[1])
        self.main, self.adjusted, self.variants = {}, {}, {}
        for key, ps in groups.items():
            at_rank = [p for p in ps if sig[p.name][0] == self.ref[0]] or ps
            exact = [p for p in at_rank if sig[p.name] == self.ref]
            if exact:
                main = exact[0]
            else:
                main = min(at_rank, key=lambda p: (len(knob_diff(p.params["knobs"], ref_knobs).split()),
                                                   sig[p.name][0]))
                self.adjusted[key] = knob_diff(main.params["knobs"], ref_knobs)
            self.main[key] = main
            for p in at_rank:
                if knobs_of(p) != knobs_of(main):
                    self.variants.setdefault(key, []).append((knob_diff(p.params["knobs"], ref_knobs), p))
        self.cq_axis = {k: sorted((p for p in ps if knobs_of(p) == knobs_of(self.main[k])),
                                  key=lambda p: p.params["cq"]) for k, ps in groups.items()}
        self.cq_axis = {k: ps for k, ps in self.cq_axis.items() if len(ps) > 1}
        self.hidden = len(pts) - len(self.main) - sum(len(v) for v in self.variants.values())

    def plotted(self):
        """(key, point, variant, adjusted) for every point the charts draw: variant is
        "" for the main points, else the knobs that set it apart; adjusted labels a
        main point that ran at other knobs than the rest."""
        for key, p in self.main.items():
            yield key, p, "", self.adjusted.get(key, "")
        for key, vs in self.variants.items():
            for variant, p in vs:
                yield key, p, variant, ""


def series_label(head, srq=False, variant=""):
    """"64 B", "64 B SRQ", "4 QPs SRQ · poll:1": SRQ and knob variants never share a line."""
    return head + (" SRQ" if srq else "") + (f" · {variant}" if variant else "")


def qps_label(qps):
    return f"{qps} QP" + ("s" if qps > 1 else "")


def _op_col(op):
    """An op's column key: (its rank in send, write, read order, its name in capitals)."""
    return ({"send": 0, "write": 1, "read": 2}.get(op, 3), op.upper())


def _sanitize(name):
    """A point name as a file name: send/bw/qps:64/size:64/cq:512/srq -> send_bw_qps64_size64_cq512_srq."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name.replace(":", "")).strip("_")


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
    """rows_cols: {(row, col): {series_key: {x: (y, lo, hi[, text])}}} per file (a
    list); row, col and series_key are tuples sorted as given whose last item is
    their label; text, when set, is written beside the point. Draws the values, and with two or more files a NAME_ratio chart of each file
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
                    for x, y in zip(xs, ys):
                        if ref is None and len(pts[x]) > 3 and pts[x][3]:
                            ax.margins(y=0.12)
                            ax.annotate(pts[x][3], (x, y), textcoords="offset points", xytext=(4, 4),
                                        fontsize=7, color=colour[k])
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
            ax.set_title(" · ".join(x for x in (c[-1], r[-1]) if x))
        if not drawn:  # e.g. a ratio chart of files with no point in common
            plt.close(fig)
            continue
        for ax in axes.flat:
            if not ax.has_data():
                ax.set_visible(False)
        files = _file_handles(series)
        handles = [Line2D([], [], color=colour[k], label=k[-1]) for k in keys if k in drawn] + (
            files if ref is None else files[:ref] + files[ref + 1:])
        top_right = next(ax for ax in reversed(axes[0]) if ax.get_visible()) if any(
            ax.get_visible() for ax in axes[0]) else axes[0][-1]
        top_right.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
                         frameon=False)
        t = title + (f" (ratio to {series[ref].label})" if ref is not None else "")
        fig.suptitle(t + (f"\n{_wrap(note, fig)}" if note else ""), fontsize=12)
        fig.tight_layout()
        charts.append(Chart(name + suffix, t, _save(fig, out_dir, name + suffix), note))
    return charts


def _wrap(note, fig):
    """A note wrapped to the figure's width (about 11 characters per inch at 12 pt)."""
    width = max(60, int(fig.get_figwidth() * 11))
    return "\n".join(textwrap.fill(part, width) for part in note.split("\n"))


def fairness(series, out_dir):
    """Jain's fairness index of per-QP message counts, and the max/min ratio, vs QP
    count: a line per (op, size, SRQ, knob variant) with at least two QP counts."""
    lines = []  # (file index, key, label, {qps: (jain, ratio)})
    for fi, s in enumerate(series):
        by = {}
        for k, p, variant, _adj in s.plotted():
            if k.mode != "bw":
                continue
            j, r = s.rf.fairness(p)
            if j is None:
                continue
            lk = (_op_col(k.op), k.size, k.srq, variant)
            by.setdefault(lk, {})[k.qps] = (j, r)
        for lk, pts in sorted(by.items()):
            if len(pts) > 1:
                op, size, srq, variant = lk
                lines.append((fi, lk, series_label(f"{op[1]} {size_label(size)} B", srq, variant), pts))
    if not lines:
        return []
    keys = sorted({(lk, label) for _fi, lk, label, _ in lines})
    colour = {k: COLOURS[i % len(COLOURS)] for i, k in enumerate(keys)}
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.0), squeeze=False)
    ax_j, ax_r = axes[0]
    qps_all, starved, ratios = [], [], []
    for fi, lk, label, pts in lines:
        ls, mk = FILE_STYLES[fi % len(FILE_STYLES)]
        xs = sorted(pts)
        qps_all += xs
        ax_j.plot(xs, [pts[x][0] for x in xs], linestyle=ls, marker=mk, markersize=4, color=colour[(lk, label)])
        rx = [x for x in xs if pts[x][1] is not None]
        starved += [f"{label} at {x} QPs" for x in xs if pts[x][1] is None]
        ratios += [pts[x][1] for x in rx]
        if rx:
            ax_r.plot(rx, [pts[x][1] for x in rx], linestyle=ls, marker=mk, markersize=4,
                      color=colour[(lk, label)])
    for ax in (ax_j, ax_r):
        _log2_axis(ax, qps_all, lambda v: str(int(round(v))))
        ax.set_xlabel("QPs (log2)")
    ax_j.set_ylim(0, 1.05)
    ax_j.axhline(1.0, color="0.3", linewidth=0.8)
    ax_j.set_ylabel("Jain's fairness index (1 = fair)")
    ax_j.set_title("Jain's index of per-QP message counts")
    ax_r.set_ylabel("max / min messages per QP")
    ax_r.set_title("Busiest QP / least busy QP")
    top = max(ratios) if ratios else 1.0
    ax_r.set_ylim(0.95, max(1.1, top * 1.08))
    ax_r.axhline(1.0, color="0.3", linewidth=0.8)
    handles = [Line2D([], [], color=colour[k], label=k[1]) for k in keys] + _file_handles(series)
    ax_r.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)
    note = []
    if starved:
        note.append("a QP completed nothing (ratio infinite, not drawn): " + ", ".join(starved[:4])
                    + (" ..." if len(starved) > 4 else ""))
    sweeps = [s.rf.context.get("sweep") for s in series]
    if any(isinstance(sw, dict) and sw.get("duration") == 0 for sw in sweeps):
        note.append("fixed-count runs (--iters) send the same number of messages on every QP; "
                    "use --duration for fairness")
    title = "Fairness across QPs vs QP count"
    fig.suptitle(title + ("\n" + _wrap("; ".join(note), fig) if note else ""), fontsize=12)
    fig.tight_layout()
    return [Chart("fairness", title, _save(fig, out_dir, "fairness"), "; ".join(note))]


def pick_qp_bar_points(series, regex, cap):
    """(file index, point name) of the points matching regex that have per-QP
    counts, in results order; (chosen, left out) with at most cap chosen."""
    found = []
    for fi, s in enumerate(series):
        for name, p in s.rf.points.items():
            if p.failed or not re.search(regex, name):
                continue
            counts, _ = s.rf.per_qp_messages(name)
            if counts:
                found.append((fi, name))
    return found[:cap], found[cap:]


def qp_bars(series, out_dir, picks):
    """One chart per chosen point: messages completed by each QP (a bar per QP up
    to 64 QPs; beyond, the counts sorted and their histogram), the min/max and
    Jain index in the title; per-QP latency (min..max around the mean) for lat
    points that have it."""
    charts, used = [], set()
    for fi, name in picks:
        s = series[fi]
        counts, how = s.rf.per_qp_messages(name)
        lat = s.rf.per_qp_latency(name)
        n = len(counts)
        lo, hi, mean = min(counts), max(counts), sum(counts) / n
        j = jain(counts)
        ratio = f"{hi / lo:.3g}" if lo > 0 else "∞"
        panels = 2 if (n > 64 or lat) else 1
        fig, axes = plt.subplots(1, panels, figsize=(6.2 * panels + 0.6, 3.9), squeeze=False)
        ax = axes[0][0]
        if n <= 64:
            ax.bar(range(n), counts, width=0.8, color=COLOURS[0])
            ax.set_xlabel("QP (index in creation order)")
            ax.set_xlim(-0.8, n - 0.2)
            if n <= 16:
                ax.set_xticks(range(n))
        else:
            srt = sorted(counts, reverse=True)
            ax.plot(range(1, n + 1), srt, color=COLOURS[0], linewidth=1.4)
            ax.fill_between(range(1, n + 1), srt, color=COLOURS[0], alpha=0.2, linewidth=0)
            ax.set_xlabel("QPs, busiest first (rank)")
            ax.set_xlim(1, n)
        ax.axhline(mean, color="0.3", linewidth=0.9, linestyle="--", label=f"mean {mean:.4g}")
        ax.set_ylim(0, hi * 1.25 if hi > 0 else 1)
        ax.set_ylabel("messages completed")
        ax.set_title("messages per QP" + (f" ({how})" if how != "one run" else ""), fontsize=10)
        ax.legend(loc="upper right", fontsize="small")
        if panels == 2 and lat:
            ax2 = axes[0][1]
            mean_l = lat["mean"]
            ok = [q for q in range(len(mean_l)) if mean_l[q] is not None]
            if len(mean_l) <= 64:
                ax2.errorbar(ok, [mean_l[q] for q in ok],
                             yerr=[[mean_l[q] - (lat["min"][q] or mean_l[q]) for q in ok],
                                   [(lat["max"][q] or mean_l[q]) - mean_l[q] for q in ok]],
                             fmt="o", markersize=3, color=COLOURS[1], ecolor="0.6", capsize=2)
                ax2.set_xlabel("QP (index in creation order)")
                ax2.set_title("latency per QP: mean, min..max", fontsize=10)
            else:
                ax2.plot(range(1, len(ok) + 1), sorted((mean_l[q] for q in ok), reverse=True), color=COLOURS[1])
                ax2.set_xlabel("QPs, slowest first (rank)")
                ax2.set_title("mean latency per QP", fontsize=10)
            ax2.set_ylabel("latency (µs)")
        elif panels == 2:
            ax2 = axes[0][1]
            nb = min(40, max(5, len(set(counts))))
            ax2.hist(counts, bins=nb, color=COLOURS[0], alpha=0.8)
            ax2.set_xlabel("messages completed by a QP")
            ax2.set_ylabel("QPs")
            ax2.set_title("distribution over QPs", fontsize=10)
        label = f" — {s.label}" if len(series) > 1 else ""
        fig.suptitle(f"{name}{label}\n{n} QPs · min {lo:.6g} · max {hi:.6g} · max/min {ratio} · "
                     f"Jain {j:.4f} (1 = fair)" if j is not None else f"{name}{label}\n{n} QPs · no messages",
                     fontsize=11)
        fig.tight_layout()
        base = f"qp-bars-{_sanitize(name)}"
        fname, i = base, 2
        while fname in used:
            fname, i = f"{base}-{i}", i + 1
        used.add(fname)
        title = f"Messages per QP: {name}{label}"
        charts.append(Chart(fname, title, _save(fig, out_dir, fname)))
    return charts


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
