"""Results files as one table (tools/export): the rows, their columns, CSV and markdown.
Stdlib only. tools/export --help is the user's description of the rows and columns.

A row is one entry of a point as the loader groups them: each repetition, failed ones
too (their message in `error`); a point with only aggregates gives those instead.
Columns: [file] name repetition [aggregate], the knobs (the entry's `config` in
knob-table order, or what an older file's point name states), the figures (HEADLINE
first, then by name, anomalies last), error.
"""

import csv
import math

from . import results as rr

KNOB_ORDER = tuple(rr.KNOBS) + rr.RUN_KEYS
# What a reader looks at first: the metrics the tools judge, then the counts and times
# they come from (real_time and cpu_time are in time_unit).
HEADLINE = tuple(rr.RDMASWEEP_METRICS) + ("server_cpu_seconds", "messages", "bytes", "seconds",
                                          "real_time", "cpu_time", "time_unit")
# Google Benchmark's bookkeeping, and what has a column of its own. Its `threads` is the
# benchmark's thread count (1 in rdmasweep's files: their threads are config's).
NOT_FIGURES = {"name", "run_name", "run_type", "family_index", "per_family_instance_index",
               "repetition_index", "repetitions", "threads", "aggregate_name", "aggregate_unit",
               "error_occurred", "error_message", "config"}


def name_config(params):
    """The knobs a point name states, for files written before entries carried a config:
    op, mode, qps, size, cq_depth (the depth the point ran at, which the name records),
    the knobs it lists, and the on/off ones (a name lists one when it is on). A number
    or name it leaves out was at the default of the version that wrote it, not always
    today's (inline_size was 0): left unknown."""
    cfg = {"op": params["op"], "mode": params["mode"], "qps": params["qps"], "size": params["size"],
           "cq_depth": params["cq"]}
    for key, (tag, default) in rr.KNOBS.items():
        if tag == "srq":
            cfg[key] = params["srq"]
        elif isinstance(default, bool):
            cfg[key] = params["knobs"].get(tag) is True
        elif tag in params["knobs"]:
            cfg[key] = params["knobs"][tag]
    return cfg


def _knobs(entry, point):
    if isinstance(entry.get("config"), dict):
        return dict(entry["config"])
    if point.config is not None:
        return dict(point.config)
    return name_config(point.params) if point.params else {}


def _figures(entry):
    out = {}
    for k, v in entry.items():
        if k in NOT_FIGURES or isinstance(v, (dict, list)):
            continue  # nested: the raw per-side counters (their sums are flat), hunt's record
        out[k + "_resolved" if k in KNOB_ORDER else k] = v
    if isinstance(entry.get("anomalies"), list):
        out["anomalies"] = "; ".join(map(str, entry["anomalies"]))
    return out


def _ordered(keys, first):
    return [k for k in first if k in keys] + sorted(k for k in keys if k not in first)


def table(files):
    """(columns, rows) of loaded ResultFiles; a row is a dict column -> value (None or
    absent: an empty cell)."""
    rows, knob_keys, figure_keys = [], set(), set()
    for f in files:
        for p in f.points.values():
            entries = [(None, e) for e in p.entries] or list(p.aggregates.items())
            for agg, e in entries:
                knobs, figures = _knobs(e, p), _figures(e)
                knob_keys.update(knobs)
                figure_keys.update(figures)
                error = str(e.get("error_message") or "failed") if e.get("error_occurred") else None
                rows.append({**knobs, **figures, "file": f.path, "name": p.name,
                             "repetition": e.get("repetition_index"), "aggregate": agg, "error": error})
    columns = (["file"] if len(files) > 1 else []) + ["name", "repetition"]
    columns += ["aggregate"] if any(r["aggregate"] is not None for r in rows) else []
    columns += _ordered(knob_keys, KNOB_ORDER)
    columns += _ordered(figure_keys - {"anomalies"}, HEADLINE) + (["anomalies"] if "anomalies" in figure_keys else [])
    return columns + ["error"], rows


def csv_cell(v):
    """Every digit (a float's repr reads back equal), booleans as the JSON writes them."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def markdown_cell(v):
    """For reading: 6 significant digits, whole numbers from a million up."""
    if isinstance(v, float) and math.isfinite(v):
        s = f"{v:.0f}" if abs(v) >= 1e6 else f"{v:.6g}"
    else:
        s = csv_cell(v)
    return " ".join(s.split()).replace("|", "\\|")  # one line; a | would end the cell


def write_csv(out, columns, rows):
    """RFC 4180 (csv.writer: CRLF line ends, quoted where needed); OUT opened with newline=""."""
    w = csv.writer(out)
    w.writerow(columns)
    for r in rows:
        w.writerow([csv_cell(r.get(c)) for c in columns])


def write_markdown(out, columns, rows):
    """A GitHub markdown table."""
    out.write("| " + " | ".join(columns) + " |\n")
    out.write("|" + "---|" * len(columns) + "\n")
    for r in rows:
        out.write("| " + " | ".join(markdown_cell(r.get(c)) for c in columns) + " |\n")
