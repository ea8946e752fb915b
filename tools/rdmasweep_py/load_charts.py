"""The load–latency chart for tools/plot: paced bandwidth points (--rate) that differ
only in their rate form a series; its p50/p99/p99.9 latency (from when each message
was due) is drawn against the load achieved, a panel per op and series, with the
series' knee (the results file's `knees`) marked and, when the file has one, the p50
of a closed-loop latency point (--mode lat) of the same op, size and QP count as a
dashed reference line. With several files, each file has its own line style.
"""

import math
import re
from collections import namedtuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from .charts import (COLOURS, FILE_STYLES, Chart, file_handles, op_col, plain_log, qps_label,  # noqa: E402
                     save_figure, size_label, wrap_note)
from .results import knob_diff  # noqa: E402

PERCENTILES = [("lat_p50_us", "p50"), ("lat_p99_us", "p99"), ("lat_p999_us", "p99.9")]
SCALE, UNIT = 1e-6, "Mmsg/s"
KNEE_FACTOR = 2  # as the client's: p99 over this times the lowest load's
KNEE_COLOUR, CLOSED_COLOUR = "crimson", "0.35"
_RATE_RE = re.compile(r"/rate:[^/]*")

# One offered load of a series: its point, messages per second offered and achieved,
# and latency percentiles in µs ({"p50": ..., "p99": ..., "p99.9": ...}; None where missing).
Load = namedtuple("Load", "name offered achieved lat")
# A file's series: key (the name without its rate), params (its lowest load's point's),
# label ("64 B · 1 QP"), loads (by offered load), knee ((achieved load, p99, offered
# load) or None) and closed (the closed-loop point for its reference line, or None).
LoadSeries = namedtuple("LoadSeries", "key params label loads knee closed")


def series_key(name):
    """A paced point's series: its name without the rate component, as the knees name it."""
    return _RATE_RE.sub("", name, count=1)


def paced_series(rf):
    """{series key: [Load, ...] by offered load} of a file's successful paced bandwidth
    points, only the series of two or more loads, in file order."""
    out = {}
    for p in rf.ok_points():
        pr = p.params
        if not pr or pr["mode"] != "bw" or pr["knobs"].get("rate", "none") == "none":
            continue
        offered, achieved = p.value("offered_items_per_second"), p.value("items_per_second")
        lat = {label: p.value(metric) for metric, label in PERCENTILES}
        if offered and achieved and lat["p99"] is not None:
            out.setdefault(series_key(p.name), []).append(Load(p.name, offered, achieved, lat))
    return {k: sorted(v, key=lambda ld: ld.offered) for k, v in out.items() if len(v) > 1}


def series_label(params):
    """"64 B · 1 QP", "4K B · 4 QPs SRQ · arrivals:poisson": a series' size, QP count
    and the knobs (its rate aside) that are not at their defaults."""
    rest = knob_diff({k: v for k, v in params["knobs"].items() if k != "rate"}, {})
    return (f"{size_label(params['size'])} B · {qps_label(params['qps'])}" + (" SRQ" if params["srq"] else "")
            + (f" · {rest}" if rest else ""))


def closed_loop(rf, params):
    """The closed-loop latency point (--mode lat) of rf with a paced series' op, size,
    QP count and SRQ; of several, the one whose other knobs are nearest the series'
    (its rate and arrivals aside). None when the file has none."""
    want = {k: v for k, v in params["knobs"].items() if k not in ("rate", "arrivals")}
    found = [p for p in rf.ok_points() if p.params and p.params["mode"] == "lat" and p.value("lat_p50_us")
             and all(p.params[k] == params[k] for k in ("op", "size", "qps", "srq"))]
    return min(found, key=lambda p: len(knob_diff(p.params["knobs"], want).split()), default=None)


def computed_knee(loads):
    """The offered load of the knee by the client's rule (the lowest load whose p99 is
    over KNEE_FACTOR times the lowest load's), None when there is none: for files
    written before they carried `knees`."""
    base = loads[0].lat["p99"]
    return next((ld.offered for ld in loads if ld.lat["p99"] > KNEE_FACTOR * base), None)


def knee_of(rf, key, loads):
    """Where series key's knee is drawn: (achieved load, p99, offered load) of the load
    the results file names as its knee (found again by the client's rule when the file
    has no `knees`); None when the series has no knee."""
    k = {} if rf.knees is None else next((k for k in rf.knees if k.get("series") == key), {})
    offered = computed_knee(loads) if rf.knees is None else k.get("knee_offered_items_per_second")
    if isinstance(offered, bool) or not isinstance(offered, (int, float)) or offered <= 0:
        return None
    at = min(loads, key=lambda ld: abs(ld.offered - offered))
    if abs(at.offered - offered) > 1e-6 * offered:  # no load of this file at the knee's: its own figures
        p99 = k.get("knee_lat_p99_us")
        return (offered, p99 if isinstance(p99, (int, float)) else None, offered)
    return (at.achieved, at.lat["p99"], offered)


def load_series(rf):
    """A file's load–latency series (LoadSeries), in file order."""
    out = []
    for key, loads in paced_series(rf).items():
        params = rf.points[loads[0].name].params
        out.append(LoadSeries(key, params, series_label(params), loads, knee_of(rf, key, loads),
                              closed_loop(rf, params)))
    return out


def _panels(per_file):
    """{(op column, row, title): [(file index, LoadSeries)]} sorted by op, QP count and
    size: a panel per op and series, the same series of several files together."""
    panels = {}
    for fi, lss in enumerate(per_file):
        for ls in lss:
            pr = ls.params
            row = (pr["qps"], pr["size"], ls.key.split("/", 1)[1])  # the series without its op
            panels.setdefault((op_col(pr["op"]), row, f"{pr['op'].upper()} · {ls.label}"), []).append((fi, ls))
    return dict(sorted(panels.items(), key=lambda kv: kv[0][:2]))


def _draw_series(ax, fi, ls, label):
    """One file's series in a panel: a line per percentile, the knee, the closed-loop
    p50. Returns the xs (Mmsg/s) and ys (µs) drawn."""
    style, marker = FILE_STYLES[fi % len(FILE_STYLES)]
    xs_all, ys_all = [], []
    for i, (_metric, pname) in enumerate(PERCENTILES):
        pts = [(ld.achieved * SCALE, ld.lat[pname]) for ld in ls.loads if ld.lat[pname] and ld.lat[pname] > 0]
        if pts:
            ax.plot(*zip(*pts), linestyle=style, marker=marker, color=COLOURS[i], markersize=4)
            xs_all += [x for x, _ in pts]
            ys_all += [y for _, y in pts]
    if ls.knee:
        x, y, offered = ls.knee
        ax.axvline(x * SCALE, color=KNEE_COLOUR, linestyle=":", linewidth=1.0)
        if y:
            ax.plot([x * SCALE], [y], marker="*", markersize=11, color=KNEE_COLOUR, linestyle="none", zorder=5)
        text = f"knee ({offered * SCALE:.3g} {UNIT} offered" + (f", {label})" if label else ")")
        ax.annotate(text, xy=(x * SCALE, 0.02 + 0.07 * fi), xycoords=("data", "axes fraction"), xytext=(3, 0),
                    textcoords="offset points", va="bottom", fontsize=7, color=KNEE_COLOUR)
        xs_all.append(x * SCALE)
    else:
        ax.annotate("no knee" + (f" ({label})" if label else ""), xy=(0.98, 0.97 - 0.07 * fi),
                    xycoords="axes fraction", ha="right", va="top", fontsize=7, color=KNEE_COLOUR)
    if ls.closed:
        p50 = ls.closed.value("lat_p50_us")
        ax.axhline(p50, color=CLOSED_COLOUR, linestyle="--", linewidth=1.0)
        ax.annotate("closed-loop p50" + (f" ({label})" if label else ""), xy=(0.02, p50),
                    xycoords=("axes fraction", "data"), xytext=(0, 2 + 9 * fi), textcoords="offset points",
                    va="bottom", fontsize=7, color=CLOSED_COLOUR)
        ys_all.append(p50)
    return xs_all, ys_all


def _axes(ax, xs, ys, title):
    """A panel's log latency axis (room above and below for the marks' text), its load
    axis (from 0, or log when it spans over 30x) and title."""
    ax.set_yscale("log")
    plain_log(ax.yaxis, ys)
    if ys:
        ax.set_ylim(min(ys) / 1.6, max(ys) * 2.2)
    if xs and min(xs) > 0 and max(xs) / min(xs) > 30:
        ax.set_xscale("log")
        plain_log(ax.xaxis, xs)
    else:
        ax.set_xlim(0, max(xs) * 1.08 if xs else 1)
    ax.set_xlabel(f"achieved load ({UNIT})")
    ax.set_ylabel("latency from due (µs, log)")
    ax.set_title(title, fontsize="small")


def _note(per_file):
    """The chart's note: what the axes and marks are, and what the closed-loop points measured."""
    kinds = {}
    for lss in per_file:
        for ls in lss:
            if ls.closed and ls.closed.runs and ls.closed.runs[0].get("label"):
                kinds[ls.params["op"]] = ls.closed.runs[0]["label"]
    return "; ".join([
        "latency from when each message was due (queueing included) vs the load achieved (items_per_second)",
        f"knee: the lowest offered load whose p99 is over {KNEE_FACTOR}x the lowest load's (the results' knees)",
        "dashed: p50 of the closed-loop latency point (--mode lat) of the same op, size and QPs"]
        + [f"closed-loop {op.upper()}: {k}" for op, k in sorted(kinds.items())])


def _legend_handles(per_file, series):
    """The percentiles' colours, the knee and closed-loop marks when a panel has one, the files' styles."""
    drawn = [ls for lss in per_file for ls in lss]
    handles = [Line2D([], [], color=COLOURS[i], label=pname) for i, (_m, pname) in enumerate(PERCENTILES)]
    if any(ls.knee for ls in drawn):
        handles.append(Line2D([], [], color=KNEE_COLOUR, linestyle=":", marker="*", label="knee"))
    if any(ls.closed for ls in drawn):
        handles.append(Line2D([], [], color=CLOSED_COLOUR, linestyle="--", label="closed-loop p50"))
    return handles + file_handles(series)


def load_latency(series, out_dir):
    """Latency percentiles vs achieved load of every --rate series of two or more loads,
    a panel per op and series; none when no file has such a series."""
    per_file = [load_series(s.rf) for s in series]
    panels = _panels(per_file)
    if not panels:
        return []
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.0 * cols + 1.2, 3.8 * rows + 1.0), squeeze=False)
    for i, ((_op, _row, title), entries) in enumerate(panels.items()):
        ax = axes[i // cols][i % cols]
        xs, ys = [], []
        for fi, ls in entries:
            x, y = _draw_series(ax, fi, ls, series[fi].label if len(series) > 1 else "")
            xs += x
            ys += y
        _axes(ax, xs, ys, title)
    for j in range(len(panels), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    axes[0][cols - 1].legend(handles=_legend_handles(per_file, series), loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
                             frameon=False)
    title, note = "Latency vs achieved load (--rate series)", _note(per_file)
    fig.suptitle(title + f"\n{wrap_note(note, fig)}", fontsize=12)
    fig.tight_layout()
    return [Chart("load_latency", title, save_figure(fig, out_dir, "load_latency"), note)]
