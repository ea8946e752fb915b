"""Shared chart plumbing for tools/plot: matplotlib (Agg) setup, file styles and
colours, the Chart record, the Key and Series classes that turn a loaded result
file into plotted points, labels and log axes, save_figure/subplot_grid, and
line_chart, the small-multiples line chart (with a ratio-to-the-first-file twin)
that the charts in metric_charts are built on. Every chart function takes the
list of Series (one per file, the first being the reference for ratios) and
returns the list of Chart records it wrote.
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
from .results import knob_diff  # noqa: E402

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


def op_col(op):
    """An op's column key: (its rank in send, write, read, cas, faa order, its name in capitals)."""
    return ({"send": 0, "write": 1, "read": 2, "cas": 3, "faa": 4}.get(op, 5), op.upper())


def sanitize(name):
    """A point name as a file name: send/bw/qps:64/size:64/cq:512/srq -> send_bw_qps64_size64_cq512_srq."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name.replace(":", "")).strip("_")


def size_label(v):
    v = int(round(v))
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if v >= scale and v % scale == 0:
            return f"{v // scale}{unit}"
    return str(v)


def log2_axis(ax, values, fmt=size_label):
    ax.set_xscale("log", base=2)
    vals = sorted(set(values))
    if len(vals) > 12:  # keep tick labels legible
        step = math.ceil(len(vals) / 12)
        vals = vals[::step]
    ax.xaxis.set_major_locator(FixedLocator(vals))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt(v)))


def plain_log(axis, values):
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
        plain_log(ax.yaxis, ys)


def file_handles(series):
    if len(series) < 2:
        return []
    return [Line2D([], [], color="0.25", linestyle=FILE_STYLES[i % len(FILE_STYLES)][0],
                   marker=FILE_STYLES[i % len(FILE_STYLES)][1], label=s.label) for i, s in enumerate(series)]


PNG_DPI = 110


def save_figure(fig, out_dir, name):
    files = []
    # The tight box once, at the PNG's resolution, for both files: bbox_inches="tight"
    # draws the figure once more for each file to find it (a third of tools/plot's time).
    fig.set_dpi(PNG_DPI)
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, f"{name}.{ext}")
        fig.savefig(path, dpi=PNG_DPI if ext == "png" else None, bbox_inches=box)
        files.append(path)
    plt.close(fig)
    return files


def subplot_grid(nrows, ncols, w=5.0, h=3.6):
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
        fig, axes = subplot_grid(len(rows), len(cols))
        drawn = set()
        for rc in panels:
            drawn |= _line_panel(axes[rows.index(rc[0])][cols.index(rc[1])], series, rows_cols, rc, ref, colour,
                                 xlabel=xlabel, ylabel=ylabel, xfmt=xfmt, use_log=use_log)
        if not drawn:  # e.g. a ratio chart of files with no point in common
            plt.close(fig)
            continue
        t = _line_legend_title(fig, axes, series, [k for k in keys if k in drawn], colour, ref, title, note)
        charts.append(Chart(name + suffix, t, save_figure(fig, out_dir, name + suffix), note))
    return charts


def _line_panel(ax, series, rows_cols, rc, ref, colour, xlabel, ylabel, xfmt, use_log):
    """Panel rc of a line_chart: a line per file and series key, or with ref (a file
    index) each other file's ratio to that file. The series keys it drew."""
    drawn, xs_all, ys_all = set(), [], []
    for fi, data in enumerate(rows_cols):
        if ref is not None and fi == ref:
            continue
        for k, pts in sorted(data.get(rc, {}).items()):
            base = None if ref is None else rows_cols[ref].get(rc, {}).get(k, {})
            xs, ys = _panel_line(ax, pts, base, FILE_STYLES[fi % len(FILE_STYLES)], colour[k])
            if xs:
                drawn.add(k)
            xs_all += xs
            ys_all += ys
    if not xs_all:
        return drawn
    log2_axis(ax, xs_all, xfmt)
    if ref is None:
        _log_y(ax, ys_all, use_log)  # minor labels by this panel's own range
        ax.set_ylabel(ylabel + (" (log)" if use_log and "log" not in ylabel else ""))
    else:
        ax.axhline(1.0, color="0.3", linewidth=0.8)
        ax.set_ylabel(f"ratio to {series[ref].label}")
    ax.set_xlabel(xlabel)
    r, c = rc
    ax.set_title(" · ".join(x for x in (c[-1], r[-1]) if x))
    return drawn


def _panel_line(ax, pts, base, style, colour):
    """One series key's line in a panel: its values with their notes and min..max
    band, or with base (the reference file's values of that key) the ratios at the
    x values both have. Returns the xs and ys drawn (none when nothing was)."""
    xs = sorted(pts)
    if base is None:
        ys = [pts[x][0] for x in xs]
    else:
        xs = [x for x in xs if base.get(x) and base[x][0]]
        ys = [pts[x][0] / base[x][0] for x in xs]
    if not xs:
        return xs, ys
    ls, mk = style
    ax.plot(xs, ys, linestyle=ls, marker=mk, color=colour, markersize=4)
    if base is None:
        for x, y in zip(xs, ys):
            if len(pts[x]) > 3 and pts[x][3]:
                ax.margins(y=0.12)
                ax.annotate(pts[x][3], (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7, color=colour)
        if all(pts[x][1] is not None for x in xs):
            ax.fill_between(xs, [pts[x][1] for x in xs], [pts[x][2] for x in xs], color=colour, alpha=0.15,
                            linewidth=0)
    return xs, ys


def _line_legend_title(fig, axes, series, keys, colour, ref, title, note):
    """Hides the empty panels, puts the legend (the keys drawn, then the files) right
    of the top row and the title above; returns the title."""
    for ax in axes.flat:
        if not ax.has_data():
            ax.set_visible(False)
    files = file_handles(series)
    handles = [Line2D([], [], color=colour[k], label=k[-1]) for k in keys] + (
        files if ref is None else files[:ref] + files[ref + 1:])
    top_right = next(ax for ax in reversed(axes[0]) if ax.get_visible()) if any(
        ax.get_visible() for ax in axes[0]) else axes[0][-1]
    top_right.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
                     frameon=False)
    t = title + (f" (ratio to {series[ref].label})" if ref is not None else "")
    fig.suptitle(t + (f"\n{wrap_note(note, fig)}" if note else ""), fontsize=12)
    fig.tight_layout()
    return t


def wrap_note(note, fig):
    """A note wrapped to the figure's width (about 11 characters per inch at 12 pt)."""
    width = max(60, int(fig.get_figwidth() * 11))
    return "\n".join(textwrap.fill(part, width) for part in note.split("\n"))
