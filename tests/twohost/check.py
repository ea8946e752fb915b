"""Checks an rdmasweep results file from the two-host tests (stdlib only).

check.py FILE [--iters N] [--complete] [--client HOST,ADDR] [--server HOST,ADDR]
              [--kept N] [--transport T] [--summary LABEL] [--console LOG]
Exit 1 with one line per problem, 0 when every check holds.
"""
import argparse
import json
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--iters", type=int, help="count mode: exact messages (qps x iters) and bytes")
ap.add_argument("--complete", action="store_true", help="no failed point, file not incomplete")
ap.add_argument("--client", help="HOST,ADDR: the client side the context must name")
ap.add_argument("--server", help="HOST,ADDR: the server side the context must name")
ap.add_argument("--kept", type=int, help="at least this many measured points kept")
ap.add_argument("--transport", help="the context's transport (RoCE, iWARP); on iWARP the QPs connect by RDMA-CM "
                "and a side's GID is its interface's MAC, not an IPv4 RoCE v2 GID")
ap.add_argument("--counters", action="store_true",
                help="every measured point carries both sides' port counter deltas, packets sent on each")
ap.add_argument("--retransmits", action="store_true", help="the completed points' counters show retransmits")
ap.add_argument("--summary", help="print LABEL, Gb/s and p99 of each measured point")
ap.add_argument("--console", metavar="LOG",
                help="the client's output: a point whose counters flag it has its '! counters:' line right under its row")
a = ap.parse_args()

problems = []
try:
    with open(a.file, encoding="utf-8") as f:
        doc = json.load(f)
except (OSError, ValueError) as e:
    sys.exit(f"{a.file}: not a readable results file: {e}")
ctx, entries = doc["context"], doc["benchmarks"]
ok = [b for b in entries if not b.get("error_occurred")]
failed = [b for b in entries if b.get("error_occurred")]

if a.complete:
    if ctx.get("incomplete"):
        problems.append(f"results marked incomplete: {ctx.get('incomplete_reason')}")
    problems += [f"{b['name']}: failed: {b.get('error_message')}" for b in failed]
if a.iters:
    for b in ok:
        m = re.search(r"/qps:(\d+)/size:(\d+)/", b["name"])
        qps, size = int(m.group(1)), int(m.group(2))
        if b["messages"] != qps * a.iters or b["bytes"] != b["messages"] * size:
            problems.append(f"{b['name']}: {b['messages']} messages, {b['bytes']} bytes; "
                            f"expected {qps * a.iters} and {qps * a.iters * size}")
for side, want in (("client", a.client), ("server", a.server)):
    if not want:
        continue
    host, addr = want.split(",")
    got = ctx.get(side, {})
    if got.get("host") != host or not got.get("device"):
        problems.append(f"context {side}: host {got.get('host')!r} device {got.get('device')!r}, expected host {host!r}")
    if a.transport == "iWARP":
        continue  # no RoCE GID; the connection's address is checked below
    if got.get("gid") != "::ffff:" + addr:
        problems.append(f"context {side}: GID {got.get('gid')!r}, expected its own IPv4 RoCE v2 GID ::ffff:{addr}")
if a.transport:
    if ctx.get("transport") != a.transport:
        problems.append(f"context transport {ctx.get('transport')!r}, expected {a.transport!r}")
    for side in ("client", "server"):
        if ctx.get(side, {}).get("capabilities", {}).get("transport") != a.transport:
            problems.append(f"context {side}: capabilities {ctx.get(side, {}).get('capabilities')!r}")
    conn = ctx.get("connection", {})
    if a.transport == "iWARP" and (conn.get("method") != "rdma_cm" or (a.server and conn.get("address") != a.server.split(",")[1])):
        problems.append(f"an iWARP run not connected by RDMA-CM to the server's address: {conn}")
if a.counters:
    for b in ok:
        norm = b.get("counters", {}).get("normalized", {})
        for side in ("client", "server"):
            if norm.get(side, {}).get("packets_sent", 0) <= 0:
                problems.append(f"{b['name']}: no {side} port counters (or no packets sent): {b.get('counters')}")
if a.retransmits and ok and sum(b.get("retransmits", 0) for b in ok) == 0:
    problems.append("no retransmits in any point's counters, although packets were lost")
if a.console:
    with open(a.console, encoding="utf-8", errors="replace") as f:
        out = [l for l in f.read().splitlines() if not l.startswith("rdmasweep")]  # stderr's lines
    for b in ok:
        if not b.get("anomalies"):
            continue
        rows = [i for i, l in enumerate(out) if l.startswith(b["name"] + " ")]
        if not rows or rows[0] + 1 >= len(out) or not out[rows[0] + 1].startswith("  ! counters: "):
            problems.append(f"{b['name']}: flagged {b['anomalies']}, but its console row is not followed by "
                            f"its '! counters:' line")
if a.kept is not None and len(ok) < a.kept:
    problems.append(f"{len(ok)} measured point(s) kept, expected at least {a.kept}")
if a.summary:
    for b in ok:
        p99 = b.get("lat_p99_us")
        print(f"{a.summary}\t{b['name']}\t{b['bytes_per_second'] * 8e-9:.4f} Gb/s\t"
              f"p99 {'-' if p99 is None else f'{p99:.1f} us'}\t"
              f"retransmits {b.get('retransmits', '-')}\tflags {','.join(b.get('anomalies', [])) or '-'}")
    for b in failed:
        print(f"{a.summary}\t{b['name']}\tfailed: {b.get('error_message')}")
for p in problems:
    print(f"{a.file}: {p}")
sys.exit(1 if problems else 0)
