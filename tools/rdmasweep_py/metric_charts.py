"""Per-metric charts for tools/plot, each a line_chart of small multiples (a panel
per op, a line per QP count, message size or CQ depth): bandwidth and message
rate of the bw points, latency percentiles of the lat points, bandwidth per CQ
depth, and client CPU time per message; plus the note that says which points a
chart leaves out or labels. Each takes the list of Series and the output folder
and returns the Chart records it wrote (none when it has nothing to draw).
"""

from .charts import line_chart, op_col, qps_label, series_label, size_label

PERCENTILES = [("lat_p50_us", "p50"), ("lat_p99_us", "p99"), ("lat_p999_us", "p99.9")]


def _yv(p, metric, scale, text=""):
    v = p.value(metric)
    if v is None:
        return None
    sp = p.spread(metric)
    lo, hi = (sp[0] * scale, sp[1] * scale) if sp else (None, None)
    return (v * scale, lo, hi, text)


def _knob_note(series):
    """Say which points a chart leaves out (CQ depth axis) and which it labels."""
    notes = []
    for s in series:
        what = ", ".join(f"{k} {v}" for k, v in s.ref[1])
        if s.hidden:
            cq = "the largest CQ depth of each point" if s.cq_axis else ""
            shown = " and ".join(x for x in (cq, what) if x)
            notes.append(f"{s.label}: at {shown}" + (" (all depths: cq_depth chart)" if s.cq_axis else "")
                         + f"; {s.hidden} other point(s) not shown")
        if s.adjusted:
            notes.append(f"{s.label}: labelled points ran at other knobs than the rest ("
                         + (what or "defaults") + "; e.g. --cq-policy cap)")
    return "; ".join(notes)


def bandwidth(series, out_dir):
    data = []
    for s in series:
        d = {}
        for k, p, variant, adj in s.plotted():
            v = _yv(p, "bytes_per_second", 8 / 1e9, adj)
            if k.mode == "bw" and v:
                d.setdefault(((0, ""), op_col(k.op)), {}).setdefault(
                    (k.qps, k.srq, variant, series_label(qps_label(k.qps), k.srq, variant)), {})[k.size] = v
        data.append(d)
    return line_chart(series, out_dir, "bandwidth", "Bandwidth vs message size (payload Gb/s)", data,
                      "message size (bytes, log2)", "bandwidth (Gb/s)", note=_knob_note(series))


def message_rate(series, out_dir):
    sizes = sorted({k.size for s in series for k in s.main if k.mode == "bw"})
    if len(sizes) > 6:  # a legible number of lines, spread over the range
        sizes = [sizes[round(i * (len(sizes) - 1) / 5)] for i in range(6)]
    rates = [p.value("items_per_second") or 0 for s in series for k, p, *_ in s.plotted() if k.mode == "bw"]
    scale, unit = (1e-3, "kmsg/s") if rates and max(rates) < 1e5 else (1e-6, "Mmsg/s")
    data = []
    for s in series:
        d = {}
        for k, p, variant, adj in s.plotted():
            v = _yv(p, "items_per_second", scale, adj)
            if k.mode == "bw" and k.size in sizes and v:
                d.setdefault(((0, ""), op_col(k.op)), {}).setdefault(
                    (k.size, k.srq, variant, series_label(f"{size_label(k.size)} B", k.srq, variant)), {})[k.qps] = v
        data.append(d)
    return line_chart(series, out_dir, "message_rate", "Message rate vs QP count", data,
                      "QPs (log2)", f"message rate ({unit})", xfmt=lambda v: str(int(round(v))),
                      note=_knob_note(series))


def latency(series, out_dir):
    data, kinds = [], {}
    for s in series:
        d = {}
        for k, p, variant, adj in s.plotted():
            if k.mode != "lat":
                continue
            if p.runs and p.runs[0].get("label"):
                kinds[k.op] = p.runs[0]["label"]
            row = (k.qps, k.srq, variant, series_label(qps_label(k.qps), k.srq, variant))
            for i, (metric, pname) in enumerate(PERCENTILES):
                v = _yv(p, metric, 1.0, adj)
                if v:
                    d.setdefault((row, op_col(k.op)), {}).setdefault((i, pname), {})[k.size] = v
        data.append(d)
    knobs = _knob_note(series)
    note = "; ".join([f"{op.upper()}: {k}" for op, k in sorted(kinds.items())] + ([knobs] if knobs else []))
    return line_chart(series, out_dir, "latency", "Latency percentiles vs message size", data,
                      "message size (bytes, log2)", "latency (µs, log)", note=note, log_y=True)


def cq_depth(series, out_dir):
    """Small multiples: bandwidth vs size, a line per CQ depth, for each op and QP count."""
    data = []
    for s in series:
        d = {}
        for k, ps in s.cq_axis.items():
            if k.mode != "bw":
                continue
            for p in ps:
                v = _yv(p, "bytes_per_second", 8 / 1e9)
                if v:
                    cq = p.params["cq"]
                    d.setdefault((op_col(k.op), (k.qps, k.srq, series_label(qps_label(k.qps), k.srq))), {}).setdefault(
                        (cq, f"CQ depth {cq}"), {})[k.size] = v
        data.append(d)
    if not any(data):
        return []
    return line_chart(series, out_dir, "cq_depth", "Effect of CQ depth on bandwidth", data,
                      "message size (bytes, log2)", "bandwidth (Gb/s)", ratio=False)


def cpu_cost(series, out_dir):
    """Client CPU time per message (user + system, µs) vs message size: a panel per
    op and mode, a line per QP count (SRQ and knob variants apart), so modes and
    knobs (e.g. poll batch) can be compared on what they cost the host. A file of
    a single message size at several QP counts is drawn against the QP count."""
    rows = []  # (file index, key, variant, adjusted, (median, lo, hi))
    for fi, s in enumerate(series):
        for k, p, variant, adj in s.plotted():
            r = sorted(x * 1e6 for x in p.ratio_samples("cpu_seconds", "messages"))
            if r:
                med = r[len(r) // 2] if len(r) % 2 else (r[len(r) // 2 - 1] + r[len(r) // 2]) / 2
                rows.append((fi, k, variant, adj, (med, r[0], r[-1]) if len(r) > 1 else (med, None, None)))
    if not rows:
        return []
    by_qps = len({k.size for _, k, *_ in rows}) == 1 and len({k.qps for _, k, *_ in rows}) > 1
    data = [{} for _ in series]
    for fi, k, variant, adj, (med, lo, hi) in rows:
        mode = {"bw": (0, "bandwidth mode"), "lat": (1, "latency mode (per round trip)")}[k.mode]
        if by_qps:
            line, x = (k.size, k.srq, variant, series_label(f"{size_label(k.size)} B", k.srq, variant)), k.qps
        else:
            line, x = (k.qps, k.srq, variant, series_label(qps_label(k.qps), k.srq, variant)), k.size
        data[fi].setdefault((mode, op_col(k.op)), {}).setdefault(line, {})[x] = (med, lo, hi, adj)
    note = "user + system CPU of the client process / messages"
    knobs = _knob_note(series)
    if by_qps:
        return line_chart(series, out_dir, "cpu_cost", "Client CPU time per message vs QP count", data,
                          "QPs (log2)", "CPU time per message (µs)", xfmt=lambda v: str(int(round(v))),
                          note=note + (f"; {knobs}" if knobs else ""))
    return line_chart(series, out_dir, "cpu_cost", "Client CPU time per message vs message size", data,
                      "message size (bytes, log2)", "CPU time per message (µs)",
                      note=note + (f"; {knobs}" if knobs else ""))


def counters(series, out_dir):
    """Retransmissions the ports counted per 1,000 messages (both sides, rdmasweep's
    normalized `retransmits`) vs message size: a panel per op and mode, a line per
    QP count. Drawn only when the files carry port counters."""
    data, any_counter = [], False
    for s in series:
        d = {}
        for k, p, variant, adj in s.plotted():
            r = sorted(1e3 * x for x in p.ratio_samples("retransmits", "messages"))
            if not r:
                continue
            any_counter = True
            med = r[len(r) // 2] if len(r) % 2 else (r[len(r) // 2 - 1] + r[len(r) // 2]) / 2
            mode = {"bw": (0, "bandwidth mode"), "lat": (1, "latency mode")}[k.mode]
            d.setdefault((mode, op_col(k.op)), {}).setdefault(
                (k.qps, k.srq, variant, series_label(qps_label(k.qps), k.srq, variant)), {})[k.size] = (
                    med, r[0] if len(r) > 1 else None, r[-1] if len(r) > 1 else None, adj)
        data.append(d)
    if not any_counter:
        return []
    return line_chart(series, out_dir, "counters", "Retransmissions the ports counted, per 1,000 messages", data,
                      "message size (bytes, log2)", "retransmits per 1,000 messages", ratio=False,
                      note="both sides' port counters over each point (rdmasweep's normalized retransmits)")
