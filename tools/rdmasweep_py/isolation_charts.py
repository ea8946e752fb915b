"""The isolation chart for tools/plot: each point of a `client --beside` run, alone and
beside its background workload (its NAME/beside row, measured right after it), as bars
side by side: a latency point's p50 and p99, a bandwidth point's message rate; over
each bar beside the background, its ratio to alone."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from .charts import COLOURS, Chart, qps_label, save_figure, size_label, wrap_note  # noqa: E402

# Per mode: the figures compared, their label and scale.
METRICS = {"lat": [("lat_p50_us", "p50", 1.0), ("lat_p99_us", "p99", 1.0)],
           "bw": [("items_per_second", "message rate", 1e-6)]}
UNITS = {"lat": "latency (µs, log)", "bw": "message rate (Mmsg/s)"}
FIRST_COLOUR = {"lat": 0, "bw": 2}  # each figure its own colour across the panels
ALONE_ALPHA = 0.4


def pairs_by_mode(series):
    """{mode: [(file index, alone point, beside point)]} over every file's --beside rows."""
    out = {}
    for fi, s in enumerate(series):
        for alone, beside in s.rf.isolation_pairs():
            if alone.params and alone.params["mode"] in METRICS:
                out.setdefault(alone.params["mode"], []).append((fi, alone, beside))
    return out


def pair_label(alone, file_label):
    p = alone.params
    label = f"{p['op'].upper()} {size_label(p['size'])} B · {qps_label(p['qps'])}"
    return label + (f"\n{file_label}" if file_label else "")


def _draw_mode(ax, mode, pairs, series):
    """One panel: for each pair and figure, the bar alone (light) and beside (dark), the ratio over it."""
    metrics = METRICS[mode]
    width = 0.8 / (2 * len(metrics))
    for i, (_fi, alone, beside) in enumerate(pairs):
        for j, (metric, _label, scale) in enumerate(metrics):
            va, vb = alone.value(metric), beside.value(metric)
            if va is None or vb is None:
                continue
            x = i - 0.4 + 2 * j * width + width / 2
            colour = COLOURS[FIRST_COLOUR[mode] + j]
            ax.bar(x, va * scale, width, color=colour, alpha=ALONE_ALPHA)
            ax.bar(x + width, vb * scale, width, color=colour)
            if va > 0:
                ax.annotate(f"{vb / va:.2f}x", (x + width, vb * scale), textcoords="offset points", xytext=(0, 2),
                            ha="center", fontsize="x-small")
    ax.set_xticks(range(len(pairs)))
    ax.set_xticklabels([pair_label(a, series[fi].label if len(series) > 1 else "") for fi, a, _b in pairs],
                       fontsize="small")
    if mode == "lat":
        ax.set_yscale("log")
    ax.set_ylabel(UNITS[mode])
    ax.set_title("latency points" if mode == "lat" else "bandwidth points", fontsize="small")


def isolation(series, out_dir):
    """Alone vs beside the background, a panel per mode; none when no file has --beside rows."""
    by_mode = pairs_by_mode(series)
    if not by_mode:
        return []
    modes = [m for m in ("lat", "bw") if m in by_mode]
    fig, axes = plt.subplots(1, len(modes), figsize=(max(5.0, 1.6 * max(len(v) for v in by_mode.values())) * len(modes)
                                                     + 1.5, 4.6), squeeze=False)
    for ax, mode in zip(axes[0], modes):
        _draw_mode(ax, mode, by_mode[mode], series)
    handles = []
    for mode in modes:
        for j, (_m, label, _s) in enumerate(METRICS[mode]):
            colour = COLOURS[FIRST_COLOUR[mode] + j]
            handles += [Patch(color=colour, alpha=ALONE_ALPHA, label=f"{label} alone"),
                        Patch(color=colour, label=f"{label} beside")]
    axes[0][-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)
    backgrounds = sorted({b.background for pairs in by_mode.values() for _fi, _a, b in pairs})
    title = "Alone vs beside a background workload (--beside)"
    note = ("light: the point alone (its runs just before); dark: the same point beside the background "
            + ", ".join(backgrounds) + "; over each dark bar: beside / alone")
    fig.suptitle(title + f"\n{wrap_note(note, fig)}", fontsize=12)
    fig.tight_layout()
    return [Chart("isolation", title, save_figure(fig, out_dir, "isolation"), note)]
