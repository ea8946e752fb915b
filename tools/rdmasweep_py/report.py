"""Self-contained HTML report for tools/plot: charts embedded as base64 PNG, so
the one file opens offline (no scripts, no external resources)."""

import base64
import datetime
import html
import json
import os
import statistics

CONTEXT_KEYS = [
    ("host_name", "host"), ("peer_host", "peer"), ("device", "device"), ("firmware", "firmware"),
    ("link_layer", "link layer"), ("mtu", "MTU"), ("rate_gbps", "rate (Gb/s)"), ("gid_type", "GID type"),
    ("kernel", "kernel"), ("num_cpus", "CPUs"), ("tool_version", "rdmasweep"), ("git_revision", "git revision"),
    ("date", "date"), ("sweep_file", "sweep file"), ("points", "points"),
]

CSS = """
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f0f0; }
tr.failed td { background: #fde2e2; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: 6px 10px; }
figure { margin: 16px 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
code { font-size: 12px; }
"""


def esc(v):
    return html.escape(str(v), quote=True)


def _fmt(v, digits=4):
    return "" if v is None else f"{v:.{digits}g}"


def _context_table(s):
    ctx = s.rf.context
    rows = [(label, ctx[k]) for k, label in CONTEXT_KEYS if k in ctx]
    inc = ctx.get("incomplete")
    rows.append(("incomplete", f"yes: {ctx.get('incomplete_reason', '')}" if inc else "no" if inc is False else "?"))
    for side in ("client", "server"):
        if isinstance(ctx.get(side), dict):
            c = ctx[side]
            rows.append((side, ", ".join(f"{k} {c[k]}" for k in ("host", "device", "firmware", "kernel",
                                                                   "tool_version") if k in c)))
    if isinstance(ctx.get("sweep"), dict):
        rows.append(("configuration", json.dumps(ctx["sweep"], sort_keys=True)))
    for k in ("latency_note", "bytes_note"):
        if k in ctx:
            rows.append((k.replace("_", " "), ctx[k]))
    body = "".join(f"<tr><th>{esc(a)}</th><td><code>{esc(b)}</code></td></tr>" for a, b in rows)
    cls = ' class="warn"' if inc else ""
    return f"<table{cls}>{body}</table>"


def _points_table(s):
    head = ["point", "runs", "Gb/s", "Mmsg/s", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "QP Jain",
            "QP max/min", "CPU µs/msg", "setup s", "status"]
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for p in s.rf.points.values():
        if p.failed:
            out.append(f'<tr class="failed"><td>{esc(p.name)}</td><td class="num">0</td>'
                       + '<td></td>' * 10 + f"<td>failed: {esc('; '.join(p.errors))}</td></tr>")
            continue
        bw, mr = p.value("bytes_per_second"), p.value("items_per_second")
        cells = [bw * 8 / 1e9 if bw is not None else None, mr / 1e6 if mr is not None else None]
        lat = p.params and p.params["mode"] == "lat"
        cells += [p.value(m) if lat else None for m in ("lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_max_us")]
        jain, ratio = s.rf.fairness(p)
        cpu = p.ratio_samples("cpu_seconds", "messages")
        cells += [jain, ratio, statistics.median(cpu) * 1e6 if cpu else None, p.value("setup_seconds")]
        status = "ok" if not p.errors else f"{len(p.errors)} run(s) failed"
        out.append(f"<tr><td>{esc(p.name)}</td><td class=\"num\">{p.repetitions}</td>"
                   + "".join(f'<td class="num">{_fmt(c)}</td>' for c in cells) + f"<td>{esc(status)}</td></tr>")
    out.append("</table>")
    return "".join(out)


def write(path, series, charts, notes):
    parts = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>rdmasweep report</title>", f"<style>{CSS}</style></head><body>",
             "<h1>rdmasweep report</h1>",
             f"<p>Generated {esc(datetime.datetime.now().strftime('%Y-%m-%d %H:%M'))} from "
             + ", ".join(f"<code>{esc(s.rf.path)}</code> ({esc(s.label)})" for s in series) + ".</p>"]
    if len(series) > 1:
        parts.append(f"<p>Ratio charts divide each file by the first, <b>{esc(series[0].label)}</b>.</p>")
    if notes:
        parts.append('<div class="warn"><b>Notes</b><ul>' + "".join(f"<li>{esc(n)}</li>" for n in notes)
                     + "</ul></div>")
    parts.append("<h2>Charts</h2>")
    parts.append("<p>QP Jain: Jain's fairness index of the messages each QP completed (1 = all equal); "
                 "CPU µs/msg: user + system CPU of the client per message; SRQ points end in "
                 "<code>/srq</code> and are plotted as series of their own.</p>")
    for c in charts:
        parts.append(figure(c.png, c.title, c.note))
    if not charts:
        parts.append("<p>No charts.</p>")
    for s in series:
        parts.append(f"<h2>{esc(s.label)}: <code>{esc(s.rf.path)}</code></h2>")
        parts.append("<h3>Run</h3>" + _context_table(s))
        parts.append("<h3>Points</h3>" + _points_table(s))
    write_page(path, parts)


def figure(png, title, note=""):
    """A chart embedded in the page (base64 PNG), captioned with its title and file."""
    with open(png, "rb") as f:
        b64 = base64.b64encode(f.read()).decode("ascii")
    return (f'<figure><img alt="{esc(title)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{esc(title)} — <code>{esc(os.path.basename(png))}</code>"
            + (f" — {esc(note)}" if note else "") + "</figcaption></figure>")


def write_page(path, parts):
    """Closes the page and writes it, creating its directory."""
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts + ["</body></html>\n"]))
