"""Throughput over time for tools/plot: each point's interval rates from the
`timeline` that rdmasweep records (--interval; by default in every duration point)
in FILE.hist.json, one panel per point, a line per file (and per repetition).
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from .charts import FILE_STYLES, COLOURS, Chart, save_figure  # noqa: E402


def interval_rates(tl):
    """(t_end, rate) per interval of one timeline: messages per second between
    consecutive samples, a final interval shorter than half an interval left out
    (the same rule as rdmasweep's interval_min/interval_max)."""
    t = tl.get("t_s") or []
    m = tl.get("messages") or []
    step = tl.get("interval_s") or 0
    out, t0, m0 = [], 0.0, 0
    for i, (ti, mi) in enumerate(zip(t, m)):
        dt = ti - t0
        last = i + 1 == len(t)
        if dt > 0 and not (last and dt < step / 2):
            out.append((t0, ti, (mi - m0) / dt))
        t0, m0 = ti, mi
    return out


def points_with_timeline(series):
    """Names of the points that have a timeline in some file, in file order."""
    names = []
    for s in series:
        for name, h in s.rf.hist.items():
            if h.get("timeline") and name not in names:
                names.append(name)
    return names


def timeline(series, out_dir, names):
    """Messages per second over each interval of the measured window, stepped, for
    the points `names` (a panel each)."""
    if not names:
        return []
    cols = min(3, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.0 * cols + 1.2, 3.4 * rows + 0.6), squeeze=False)
    top = max((r for s in series for n in names for t in s.rf.hist.get(n, {}).get("timeline") or []
               for _a, _b, r in interval_rates(t)), default=0)
    scale, unit = next((f, u) for f, u in ((1e6, "Mmsg/s"), (1e3, "kmsg/s"), (1, "msg/s")) if top >= f or f == 1)
    for i, name in enumerate(names):
        ax = axes[i // cols][i % cols]
        for fi, s in enumerate(series):
            for rep, tl in enumerate(s.rf.hist.get(name, {}).get("timeline") or []):
                rates = interval_rates(tl)
                if not rates:
                    continue
                xs = [a for a, _b, _r in rates] + [rates[-1][1]]
                ys = [r / scale for _a, _b, r in rates]
                label = s.label + (f" rep {rep}" if rep else "")
                ax.step(xs, ys + ys[-1:], where="post", linestyle=FILE_STYLES[fi % len(FILE_STYLES)][0],
                        color=COLOURS[(fi + rep) % len(COLOURS)], label=label)
        ax.set_title(name, fontsize="small")
        ax.set_xlabel("seconds into the measured window")
        ax.set_ylabel(f"{unit} per interval")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if len(series) > 1 or any(len(s.rf.hist.get(name, {}).get("timeline") or []) > 1 for s in series):
            ax.legend(fontsize="x-small", frameon=False)
    for j in range(len(names), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    title = "Throughput over time"
    fig.suptitle(title)
    note = ("messages (latency points: round trips) per second over each --interval of the measured window; "
            "a dip is a stall the point's mean hides (interval_min in the results)")
    return [Chart("timeline", title, save_figure(fig, out_dir, "timeline"), note)]
