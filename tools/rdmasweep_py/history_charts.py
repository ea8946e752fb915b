"""tools/history --charts and --report: one chart per point and metric of a history
(each run's repetitions as dots, the runs' medians as a line, every change point
marked with its first run's commit), and one offline HTML page over all of them.
Needs matplotlib."""

import datetime
import os
import re
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rdmasweep_py import history as hy  # noqa: E402
from rdmasweep_py import report  # noqa: E402
from rdmasweep_py import results as rr  # noqa: E402


def _slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def unit_of(metric):
    for table in (rr.RDMASWEEP_METRICS, rr.COUNTER_METRICS, rr.GBENCH_METRICS):
        if metric in table:
            return table[metric][1]
    return ""


def draw(path_base, files, name, metric, runs, found):
    """Writes PATH_BASE.png and .svg for one series; returns the PNG's path."""
    fig, ax = plt.subplots(figsize=(9, 3.6))
    xs = [i + 1 for i, _ in runs]
    for x, (_, samples) in zip(xs, runs):
        ax.plot([x] * len(samples), samples, "o", color="#4c72b0", alpha=0.35, markersize=4)
    ax.plot(xs, [statistics.median(s) for _, s in runs], "-", color="#4c72b0", linewidth=1.5, label="median of the run")
    for c in found:
        colour = "#c44e52" if c["kind"] == "regression" else "#55a868"
        ax.axvline(c["run"] + 0.5, color=colour, linestyle="--", linewidth=1.2)
        ax.annotate(f"{c['kind']} {c['ratio']:.2f}x\n{c['commit'] or os.path.basename(c['file'])}",
                    xy=(c["run"] + 0.6, 0.97), xycoords=("data", "axes fraction"), va="top", fontsize=8, color=colour)
    unit = unit_of(metric)
    ax.set_xlabel(f"run (of {len(files)}, in date order)")
    ax.set_ylabel(f"{metric}" + (f" ({unit})" if unit else ""))
    ax.set_title(f"{name}: {metric}", fontsize=10)
    ax.set_xlim(0.5, len(files) + 0.5)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{path_base}.{ext}", dpi=100)
    plt.close(fig)
    return f"{path_base}.png"


def charts(out_dir, key, files, found, metrics=None):
    """Draws every series of one history into OUT_DIR; returns (png, title, its
    change points) for each, series with change points first."""
    os.makedirs(out_dir, exist_ok=True)
    tag = _slug("_".join(v for v in key if v))[:60]
    drawn = []
    for (name, metric), runs in sorted(hy.series(files, metrics).items()):
        mine = [c for c in found if c["point"] == name and c["metric"] == metric]
        png = draw(os.path.join(out_dir, _slug(f"{tag}_{name}_{metric}")), files, name, metric, runs, mine)
        drawn.append((png, f"{name}: {metric}", mine))
    return sorted(drawn, key=lambda d: not d[2])


def write_report(path, histories):
    """One self-contained page: for each history (key, files, found, drawn) what keeps
    it apart, its runs, its change points and its charts."""
    esc = report.esc
    parts = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>rdmasweep history</title>", f"<style>{report.CSS}</style></head><body>",
             "<h1>rdmasweep history</h1>",
             f"<p>Generated {esc(datetime.datetime.now().strftime('%Y-%m-%d %H:%M'))}: change points by E-Divisive "
             "with means and a permutation test over whole runs (tools/history).</p>"]
    for key, files, found, drawn in histories:
        label = ", ".join(f"{k} {v}" for k, v in zip(hy.HISTORY_KEYS, key) if v)
        parts.append(f"<h2>{esc(label or 'history')}: {len(files)} runs, {len(found)} change point(s)</h2>")
        rows = "".join(f"<tr><td class=\"num\">{i + 1}</td><td>{esc(f.context.get('date', ''))}</td>"
                       f"<td><code>{esc(hy.commit_of(f.context))}</code></td>"
                       f"<td><code>{esc(os.path.basename(f.path))}</code></td></tr>" for i, f in enumerate(files))
        parts.append("<details><summary>Runs</summary><table><tr><th>run</th><th>date</th><th>commit</th>"
                     f"<th>file</th></tr>{rows}</table></details>")
        if found:
            rows = "".join(f"<tr><td>{esc(c['kind'])}</td><td><code>{esc(c['point'])}</code></td><td>{esc(c['metric'])}"
                           f"</td><td class=\"num\">{c['before']:.4g}</td><td class=\"num\">{c['after']:.4g}</td>"
                           f"<td class=\"num\">{c['ratio']:.3f}x</td><td class=\"num\">{c['p_value']:.3g}</td>"
                           f"<td class=\"num\">{c['run'] + 1}</td><td><code>{esc(c['commit'])}</code></td></tr>"
                           for c in found)
            parts.append("<table><tr><th></th><th>point</th><th>metric</th><th>before</th><th>after</th><th>ratio</th>"
                         f"<th>p</th><th>from run</th><th>commit</th></tr>{rows}</table>")
        parts += [report.figure(png, title) for png, title, _mine in drawn]
    report.write_page(path, parts)
