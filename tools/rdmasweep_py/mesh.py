"""Rank x rank heatmaps for tools/plot from `rdmasweep mesh` results: one chart per
sweep point, a cell per (source, destination) flow coloured by its Gb/s, or in a
latency point by its p50 latency (the median over repetitions when there are
several), so a slow link stands out in a `pairs` run: dark cells are the slow ones."""

import math
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from .charts import Chart, sanitize, save_figure  # noqa: E402


def is_mesh(doc):
    ctx = doc.get("context", {}) if isinstance(doc, dict) else {}
    return isinstance(ctx, dict) and "pattern" in ctx and "ranks" in ctx


def is_latency(point):
    parts = point.split("/")
    return len(parts) > 1 and parts[1] == "lat"


def figure(b, point):
    """A flow's cell: p50 latency in us in a latency point, else payload Gb/s."""
    v = b.get("lat_p50_us") if is_latency(point) else b.get("bytes_per_second")
    if not isinstance(v, (int, float)):
        return None
    return v if is_latency(point) else v * 8 / 1e9


def heatmaps(doc, out_dir):
    """Writes mesh-<point>.png/.svg for every point with flows; returns the Charts."""
    ctx = doc["context"]
    ranks = int(ctx["ranks"])
    hosts = [ri.get("host") if isinstance(ri, dict) else None for ri in ctx.get("rank_info") or []]
    runs, medians = {}, {}  # point -> {(src, dst): figure of each repetition / the _median aggregate}
    for b in doc.get("benchmarks", []):
        src, dst = b.get("src_rank", -1), b.get("dst_rank", -1)
        if b.get("error_occurred") or not (0 <= src < ranks and 0 <= dst < ranks):
            continue
        point = b.get("point") or b.get("run_name", b["name"])
        v = figure(b, point)
        if v is None:
            continue
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians.setdefault(point, {})[(src, dst)] = v
        else:
            runs.setdefault(point, {}).setdefault((src, dst), []).append(v)
    # A flow's cell: its _median aggregate, else the median of its repetitions.
    flows = {p: {c: statistics.median(v) for c, v in cells.items()} for p, cells in runs.items()}
    for p, cells in medians.items():
        flows.setdefault(p, {}).update(cells)
    charts = []
    for point, cells in flows.items():
        m = [[math.nan] * ranks for _ in range(ranks)]
        for (s, d), v in cells.items():
            m[s][d] = v
        fig, ax = plt.subplots(figsize=(2.2 + 1.1 * ranks, 1.6 + 1.0 * ranks))
        lat = is_latency(point)
        # Slow is dark either way: low Gb/s, high latency.
        im = ax.imshow(m, cmap="viridis_r" if lat else "viridis")
        fig.colorbar(im, ax=ax, label="p50 latency (us)" if lat else "Gb/s (payload)")
        lo, hi = min(cells.values()), max(cells.values())
        for (s, d), v in cells.items():
            # Dark text on the colour map's light half, light text on its dark half.
            light_cell = hi > lo and ((hi - v) if lat else (v - lo)) / (hi - lo) > 0.5
            ax.text(d, s, f"{v:.0f}" if v >= 1000 else f"{v:.3g}", ha="center", va="center", fontsize=9,
                    color="black" if light_cell else "white")
        labels = [f"{r}" + (f"\n{hosts[r]}" if r < len(hosts) and isinstance(hosts[r], str) else "") for r in range(ranks)]
        ax.set_xticks(range(ranks), labels)
        ax.set_yticks(range(ranks), labels)
        ax.grid(False)
        ax.set_xlabel("destination rank")
        ax.set_ylabel("source rank")
        title = f"{ctx['pattern']}: {point}"
        ax.set_title(title, fontsize=10)
        charts.append(Chart("mesh-" + sanitize(point), title, save_figure(fig, out_dir, "mesh-" + sanitize(point))))
    return charts
