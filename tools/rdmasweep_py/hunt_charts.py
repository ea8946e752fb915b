"""The explored space of `rdmasweep hunt` for tools/plot: every run the hunt measured
as a marker at (message size, bandwidth) or (message size, p99 latency), coloured
by op, with the anomalies' minimal triggers and first-seen points (from the
anomalies.json that hunt writes beside its points.json) ringed and labelled "#N".

The loader folds runs of one name into repetitions of a point, but a hunt's runs
of one name are separate measurements (explore, confirm, shrink), so this chart
reads the file's raw entries instead.
"""

import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
from .charts import COLOURS, Chart, log2_axis, plain_log, save_figure  # noqa: E402

OPS = ("send", "write", "read", "cas", "faa")
PHASE_MARKERS = {"explore": "o", "confirm": "s", "shrink": "^"}  # the rest: "D"
PANELS = (("bw", "bytes_per_second", 8 / 1e9, "bandwidth (Gb/s)", "Bandwidth"),
          ("lat", "lat_p99_us", 1.0, "latency p99 (µs)", "Latency p99"))
RING = "#d62728"


def is_hunt(rf):
    return rf.context.get("command") == "hunt"


def read_entries(path):
    """The file's benchmark entries as written (one per measured run)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f).get("benchmarks", [])


def drawn_runs(entries):
    """The runs the chart draws: successful ones measuring a point on its own
    (role "point"; a run beside an aggressor, or the aggressor, is not a point
    of the space)."""
    return [e for e in entries if isinstance(e, dict) and not e.get("error_occurred")
            and e.get("run_type") != "aggregate" and (e.get("hunt") or {}).get("role") == "point"]


def anomalies_path(points_path):
    """hunt writes anomalies.json into the same folder as points.json."""
    return os.path.join(os.path.dirname(os.path.abspath(points_path)), "anomalies.json")


def load_anomalies(points_path):
    """The anomalies of the hunt beside points_path: (list, note); the note says
    why there are none to highlight (no file, unreadable)."""
    path = anomalies_path(points_path)
    if not os.path.exists(path):
        return [], f"hunt: no {path}: no anomaly highlighted"
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return [], f"hunt: cannot read {path} ({e}): no anomaly highlighted"
    found = doc.get("anomalies") if isinstance(doc, dict) else None
    return [a for a in found or [] if isinstance(a, dict)], ""


def highlights(anomalies):
    """Point name -> labels ("#1", "#1 first seen") of the anomalies whose minimal
    trigger or first-seen point it is."""
    out = {}
    for a in anomalies:
        for key, suffix in (("minimal", ""), ("first_seen", " first seen")):
            name = (a.get(key) or {}).get("point")
            if isinstance(name, str):
                out.setdefault(name, []).append(f"#{a.get('id', '?')}{suffix}")
    return out


def _xy(e, metric, scale):
    """(size, value) of a run, None when it lacks either."""
    size, v = (e.get("config") or {}).get("size"), e.get(metric)
    ok = all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in (size, v))
    return (size, v * scale) if ok else None


def _panel(ax, runs, mode, metric, scale, marks):
    """One mode's runs on ax; rings and labels (once per name) the highlighted ones."""
    mine = [(e, _xy(e, metric, scale)) for e in runs if (e.get("config") or {}).get("mode") == mode]
    mine = [(e, xy) for e, xy in mine if xy]
    labelled, per_x = set(), {}
    for e, (x, y) in mine:
        op = e["config"].get("op")
        colour = COLOURS[OPS.index(op)] if op in OPS else "0.4"
        ax.scatter([x], [y], color=colour, marker=PHASE_MARKERS.get(e["hunt"].get("phase"), "D"),
                   s=22, alpha=0.75, linewidths=0, zorder=2)
        if e["name"] in marks:
            ax.scatter([x], [y], s=130, facecolors="none", edgecolors=RING, linewidths=1.6, zorder=3)
            if e["name"] not in labelled:  # a name's repeated runs: one label
                labelled.add(e["name"])
                k = per_x[x] = per_x.get(x, -1) + 1  # several labels at one size: stacked downwards, not overprinted
                ax.annotate(", ".join(marks[e["name"]]), (x, y), textcoords="offset points", xytext=(7, 5 - 11 * k),
                            fontsize=8, color=RING, fontweight="bold", zorder=4)
    if not mine:
        return False
    ys = [y for _e, (_x, y) in mine]
    log2_axis(ax, [x for _e, (x, _y) in mine])
    if max(ys) / min(ys) > 30:  # the space spans decades: a linear axis would hide the low ones
        ax.set_yscale("log")
        plain_log(ax.yaxis, ys)
        if max(ys) / min(ys) < 300:  # two decades or so: 2 and 5 labelled too, or a panel has one label
            ax.yaxis.set_minor_formatter(FuncFormatter(
                lambda v, _pos: f"{v:g}" if round(v / 10 ** math.floor(math.log10(v))) in (2, 5) else ""))
    ax.margins(x=0.08, y=0.12)
    return True


def _legend(fig, runs, ringed):
    ops = sorted({e["config"].get("op") for e in runs} & set(OPS), key=OPS.index)
    phases = [p for p in PHASE_MARKERS if any(e["hunt"].get("phase") == p for e in runs)]
    handles = [Line2D([], [], color=COLOURS[OPS.index(o)], marker="o", linestyle="", label=o.upper()) for o in ops]
    handles += [Line2D([], [], color="0.4", marker=PHASE_MARKERS[p], linestyle="", label=p) for p in phases]
    if any(e["hunt"].get("phase") not in PHASE_MARKERS for e in runs):  # confirm-reference, shrink-reference
        handles.append(Line2D([], [], color="0.4", marker="D", linestyle="", label="reference"))
    if ringed:
        handles.append(Line2D([], [], color=RING, marker="o", markerfacecolor="none", linestyle="", markersize=10,
                              label="anomaly trigger / first seen"))
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.9), fontsize="small", frameon=False)


def _draw(rf, runs, marks, out_dir, name):
    """A panel per mode that has runs; None when neither has any."""
    panels = [p for p in PANELS if any(_xy(e, p[1], p[2]) for e in runs if e["config"].get("mode") == p[0])]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels) + 1.5, 4.6), squeeze=False)
    for ax, (mode, metric, scale, ylabel, title) in zip(axes[0], panels):
        _panel(ax, runs, mode, metric, scale, marks)
        ax.set(xlabel="message size (bytes, log2)", ylabel=ylabel, title=title)
    _legend(fig, runs, any(e["name"] in marks for e in runs))
    title = f"Hunt: the explored space ({len(runs)} runs, {rf.fabric()})"
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return Chart(name, title, save_figure(fig, out_dir, name),
                 "each run of a point on its own, by message size; ringed: an anomaly's minimal trigger "
                 "or the point it was first seen on (anomalies.json)")


def hunt(series, out_dir):
    """A chart per hunt file among the series ("hunt", or "hunt-N" for file N when
    several are hunts): (charts, notes)."""
    hunts = [(i, s) for i, s in enumerate(series) if is_hunt(s.rf)]
    charts, notes = [], []
    for i, s in hunts:
        runs = [e for e in drawn_runs(read_entries(s.rf.path)) if isinstance(e.get("config"), dict)]
        anomalies, note = load_anomalies(s.rf.path)
        chart = _draw(s.rf, runs, highlights(anomalies), out_dir, "hunt" if len(hunts) == 1 else f"hunt-{i + 1}")
        if chart is None:
            notes.append(f"chart skipped: hunt: {s.rf.path}: no successful run to draw")
            continue
        charts.append(chart)
        notes += [note] if note else []
    return charts, notes
