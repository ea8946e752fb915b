"""Charts of --threads points for tools/plot: message rate against the number of
threads (a panel per op, a line per QP count, message size and CQ scope), and each
thread's own rate as bars for the points that ran several threads. Each returns the
Chart records it wrote (none when the files have nothing to draw).
"""

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from .charts import COLOURS, Chart, line_chart, op_col, qps_label, save_figure, size_label  # noqa: E402
from .results import knob_diff  # noqa: E402

_SCOPE_LABEL = {"thread": "", "process": " · one CQ"}


def _threads_of(p):
    kn = p.params["knobs"]
    return kn.get("threads", 1), kn.get("cq_scope", "thread")


def threads(series, out_dir):
    """Message rate (all threads over the common window) vs threads: needs bw points
    at two or more thread counts. A one-thread point starts both its scope's lines
    (one thread has one CQ whatever the scope)."""
    data, counts = [], set()
    for s in series:
        d = {}
        for p in s.rf.ok_points():
            pr = p.params
            v = p.value("items_per_second") if pr and pr["mode"] == "bw" else None
            if not v:
                continue
            t, scope = _threads_of(p)
            counts.add(t)
            others = knob_diff({k: x for k, x in pr["knobs"].items() if k not in ("threads", "cq_scope")}, {})
            sp = p.spread("items_per_second")
            y = (v * 1e-6, sp[0] * 1e-6 if sp else None, sp[1] * 1e-6 if sp else None)
            panel = d.setdefault(((0, ""), op_col(pr["op"])), {})
            for sc in (("thread", "process") if t == 1 else (scope,)):
                label = (f"{qps_label(pr['qps'])}/thread · {size_label(pr['size'])}" + _SCOPE_LABEL[sc]
                         + (" SRQ" if pr["srq"] else "") + (f" · {others}" if others else ""))
                panel.setdefault((pr["qps"], pr["size"], sc, others, label), {})[t] = y
        # A one-thread point alone on a process line: no process points at that shape.
        for panel in d.values():
            for k in [k for k, pts in panel.items() if k[2] == "process" and set(pts) == {1}]:
                del panel[k]
        data.append(d)
    if len(counts) < 2:
        return []
    return line_chart(series, out_dir, "threads", "Message rate vs threads (all threads, Mmsg/s)", data,
                      "threads (each with its own QPs)", "message rate (Mmsg/s)", xfmt=lambda v: str(int(v)))


def thread_bars(series, out_dir, regex=None, cap=6):
    """Each thread's messages per second over its own window, for up to `cap`
    points with several threads (from FILE.hist.json's per_thread) whose names
    match `regex` (all when None). Returns (charts, names of the points left out)."""
    picks = []
    for s in series:
        for p in s.rf.ok_points():
            if regex and not re.search(regex, p.name):
                continue
            rates = s.rf.per_thread_rates(p.name) if p.params else None
            if rates and len(rates) > 1:
                picks.append((s, p.name, rates))
    if not picks:
        return [], []
    picks, left = picks[:cap], [name for _s, name, _r in picks[cap:]]
    fig, axes = plt.subplots(len(picks), 1, figsize=(7.5, 1.9 * len(picks) + 0.8), squeeze=False)
    for ax, (s, name, rates) in zip(axes[:, 0], picks):
        ax.barh(range(len(rates)), [r * 1e-3 for r in rates], color=COLOURS[0], height=0.7)
        ax.set_yticks(range(len(rates)))
        ax.set_yticklabels([f"thread {t}" for t in range(len(rates))])
        ax.invert_yaxis()
        mean = sum(rates) / len(rates)
        jain = sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates)) if any(rates) else float("nan")
        ax.set_title(f"{name}" + (f" — {s.label}" if len(series) > 1 else "") + f"  (Jain {jain:.3f})", fontsize=9)
        ax.axvline(mean * 1e-3, color="0.3", linewidth=0.9, linestyle="--")
        ax.set_xlabel("kmsg/s over the thread's own window")
    fig.suptitle("Each thread's message rate (dashed: the threads' mean)", fontsize=12)
    fig.tight_layout()
    return [Chart("thread-bars", "Each thread's message rate", save_figure(fig, out_dir, "thread-bars"))], left
