"""The ceiling chart for tools/plot, from `tools/ceiling --json FILE`: on the null device,
each point's message rate for the bare post/poll loop (the limit both tools share),
perftest and rdmasweep side by side (medians of the interleaved rounds, the rounds' range
as a whisker), and each tool's cost above the bare loop in ns per message."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from .charts import COLOURS, Chart, save_figure  # noqa: E402

TOOLS = (("bare", "bare loop (the limit)"), ("perftest", "perftest"), ("rdmasweep", "rdmasweep"))


def is_ceiling(doc):
    return isinstance(doc, dict) and isinstance(doc.get("ceiling"), dict) and isinstance(doc.get("points"), list)


def above_bare(point, tool):
    """ns per message above the bare loop at the medians (None where a rate is missing)."""
    rate, bare = point["rate_mmsg"].get(tool), point["rate_mmsg"].get("bare")
    return 1e3 / rate - 1e3 / bare if rate and bare else None


def height(n):
    """The figure's height in inches for n points."""
    return 1.6 + 0.42 * n


def _rates(ax, pts):
    h = 0.8 / len(TOOLS)
    for i, (tool, label) in enumerate(TOOLS):
        ys = [j + (i - 1) * h for j in range(len(pts))]
        med = [p["rate_mmsg"].get(tool) or 0 for p in pts]
        rounds = [[r for r in p.get("rounds_mmsg", {}).get(tool, []) if r] or [m] for p, m in zip(pts, med)]
        err = [[m - min(r) for m, r in zip(med, rounds)], [max(r) - m for m, r in zip(med, rounds)]]
        ax.barh(ys, med, height=h, color=COLOURS[i], label=label, xerr=err, error_kw={"elinewidth": 0.8})
    ax.set_xlabel("million messages per second (median; whisker: the rounds' range)")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=3, fontsize=8, frameon=False)


def _above(ax, pts):
    h = 0.8 / 2
    for i, tool in enumerate(("perftest", "rdmasweep")):
        ys = [j + (i - 0.5) * h for j in range(len(pts))]
        ax.barh(ys, [above_bare(p, tool) or 0 for p in pts], height=h, color=COLOURS[i + 1], label=tool)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("ns per message above the bare loop (wall clock)")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, fontsize=8, frameon=False)


def ceiling(doc, out_dir):
    """The chart (a list of one Chart), or [] when no point has rates."""
    pts = [p for p in doc["points"] if p.get("rate_mmsg")]
    if not pts:
        return []
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, height(len(pts))), sharey=True,
                                      gridspec_kw={"width_ratios": [3, 2]})
    _rates(left, pts)
    _above(right, pts)
    left.set_yticks(range(len(pts)))
    left.set_yticklabels([p["point"] for p in pts], fontsize=8)
    left.invert_yaxis()
    c = doc["ceiling"]
    title = (f"Each harness's ceiling on null0 ({c.get('profile', '?')}): {c.get('rounds', '?')} interleaved rounds, "
             f"{c.get('cpus', '?')} CPUs, load {c.get('load', '?')} at the start")
    h = height(len(pts))
    fig.subplots_adjust(top=1 - 0.75 / h, bottom=0.75 / h)  # the legends above each panel, the title above them
    fig.suptitle(title, fontsize=10, y=1 - 0.2 / h)
    return [Chart("ceiling", "Ceiling on the null device", save_figure(fig, out_dir, "ceiling"))]
