"""Spread charts for tools/plot: how a point's figures are spread across its QPs
and across its samples. Fairness (Jain's index and max/min of per-QP message
counts vs QP count), per-QP message bars of chosen points (--qp-bars) with
per-QP latency, and the latency histogram and CDF of chosen points from
FILE.hist.json; with the pickers that choose those points and say which were
left out. Each chart function returns the Chart records it wrote.
"""

import math
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from .charts import (COLOURS, FILE_STYLES, Chart, file_handles, log2_axis, op_col, plain_log,  # noqa: E402
                     sanitize, save_figure, series_label, size_label, subplot_grid, wrap_note)
from .results import jain  # noqa: E402


def fairness(series, out_dir):
    """Jain's fairness index of per-QP message counts, and the max/min ratio, vs QP
    count: a line per (op, size, SRQ, knob variant) with at least two QP counts."""
    lines = _fairness_lines(series)
    if not lines:
        return []
    keys = sorted({(lk, label) for _fi, lk, label, _ in lines})
    colour = {k: COLOURS[i % len(COLOURS)] for i, k in enumerate(keys)}
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.0), squeeze=False)
    ax_j, ax_r = axes[0]
    qps_all, starved, ratios = _plot_fairness_lines(ax_j, ax_r, lines, colour)
    _fairness_axes(ax_j, ax_r, qps_all, ratios)
    handles = [Line2D([], [], color=colour[k], label=k[1]) for k in keys] + file_handles(series)
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
    fig.suptitle(title + ("\n" + wrap_note("; ".join(note), fig) if note else ""), fontsize=12)
    fig.tight_layout()
    return [Chart("fairness", title, save_figure(fig, out_dir, "fairness"), "; ".join(note))]


def _fairness_lines(series):
    """(file index, line key, label, {qps: (jain, max/min)}) of each bw line with
    per-QP counts at two or more QP counts."""
    lines = []
    for fi, s in enumerate(series):
        by = {}
        for k, p, variant, _adj in s.plotted():
            if k.mode != "bw":
                continue
            j, r = s.rf.fairness(p)
            if j is None:
                continue
            lk = (op_col(k.op), k.size, k.srq, variant)
            by.setdefault(lk, {})[k.qps] = (j, r)
        for lk, pts in sorted(by.items()):
            if len(pts) > 1:
                op, size, srq, variant = lk
                lines.append((fi, lk, series_label(f"{op[1]} {size_label(size)} B", srq, variant), pts))
    return lines


def _plot_fairness_lines(ax_j, ax_r, lines, colour):
    """Each line's Jain index on ax_j and its max/min on ax_r, where no QP starved (a
    ratio of infinity). Returns the QP counts drawn, the starved points, the ratios."""
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
    return qps_all, starved, ratios


def _fairness_axes(ax_j, ax_r, qps_all, ratios):
    """QP counts on a log2 x axis, Jain's index from 0 to 1, max/min from 1 up."""
    for ax in (ax_j, ax_r):
        log2_axis(ax, qps_all, lambda v: str(int(round(v))))
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
        label = f" — {s.label}" if len(series) > 1 else ""
        fig = _qp_bars_figure(f"{name}{label}", counts, how, s.rf.per_qp_latency(name))
        base = f"qp-bars-{sanitize(name)}"
        fname, i = base, 2
        while fname in used:
            fname, i = f"{base}-{i}", i + 1
        used.add(fname)
        title = f"Messages per QP: {name}{label}"
        charts.append(Chart(fname, title, save_figure(fig, out_dir, fname)))
    return charts


def _qp_bars_figure(head, counts, how, lat):
    """A point's messages per QP with, beside them, its per-QP latency or (beyond 64
    QPs) the counts' histogram; head and the counts' spread as the title."""
    n = len(counts)
    lo, hi = min(counts), max(counts)
    j = jain(counts)
    ratio = f"{hi / lo:.3g}" if lo > 0 else "∞"
    panels = 2 if (n > 64 or lat) else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.2 * panels + 0.6, 3.9), squeeze=False)
    _messages_per_qp(axes[0][0], counts, how)
    if panels == 2 and lat:
        _latency_per_qp(axes[0][1], lat)
    elif panels == 2:  # more than 64 QPs: how their counts spread
        ax2 = axes[0][1]
        nb = min(40, max(5, len(set(counts))))
        ax2.hist(counts, bins=nb, color=COLOURS[0], alpha=0.8)
        ax2.set_xlabel("messages completed by a QP")
        ax2.set_ylabel("QPs")
        ax2.set_title("distribution over QPs", fontsize=10)
    fig.suptitle(f"{head}\n{n} QPs · min {lo:.6g} · max {hi:.6g} · max/min {ratio} · "
                 f"Jain {j:.4f} (1 = fair)" if j is not None else f"{head}\n{n} QPs · no messages",
                 fontsize=11)
    fig.tight_layout()
    return fig


def _messages_per_qp(ax, counts, how):
    """A bar per QP up to 64 QPs; beyond, the counts sorted, busiest first."""
    n, hi, mean = len(counts), max(counts), sum(counts) / len(counts)
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


def _latency_per_qp(ax, lat):
    """Mean latency per QP with its min..max up to 64 QPs; beyond, the means sorted."""
    mean_l = lat["mean"]
    ok = [q for q in range(len(mean_l)) if mean_l[q] is not None]
    if len(mean_l) <= 64:
        ax.errorbar(ok, [mean_l[q] for q in ok],
                    yerr=[[mean_l[q] - (lat["min"][q] or mean_l[q]) for q in ok],
                          [(lat["max"][q] or mean_l[q]) - mean_l[q] for q in ok]],
                    fmt="o", markersize=3, color=COLOURS[1], ecolor="0.6", capsize=2)
        ax.set_xlabel("QP (index in creation order)")
        ax.set_title("latency per QP: mean, min..max", fontsize=10)
    else:
        ax.plot(range(1, len(ok) + 1), sorted((mean_l[q] for q in ok), reverse=True), color=COLOURS[1])
        ax.set_xlabel("QPs, slowest first (rank)")
        ax.set_title("mean latency per QP", fontsize=10)
    ax.set_ylabel("latency (µs)")


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
    figs = {"latency_hist": subplot_grid(nrows, ncols, 4.6, 3.3), "latency_cdf": subplot_grid(nrows, ncols, 4.6, 3.3)}
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
            plain_log(ax.xaxis, [lo, hi])
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
        charts.append(Chart(key, title, save_figure(fig, out_dir, key)))
    return charts
