"""Checks a `rdmasweep mesh` results file from a run across the lab cluster (stdlib only).

check.py FILE --hosts H1,H2,.. [--pattern P] [--iters N] [--counters] [--slow HOST]
              [--stopped RANK]
check.py FILE --mcast-client --hosts SENDER,RECEIVER1,.. --iters N
Ranks are placed round robin over the hosts (mpirun --map-by node). Exit 1 with
one line per problem, 0 when every check holds; --slow prints what it found.
--mcast-client: a `client --multicast` file, the sender on the first host and one
server --join on each other host.
"""
import argparse
import json
import re
import statistics
import sys

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--hosts", required=True, help="the lab hosts, in mpirun's --host order")
ap.add_argument("--ranks", type=int, help="ranks in the job (default: one per host)")
ap.add_argument("--pattern", default="pairs")
ap.add_argument("--iters", type=int, help="count mode: every flow exactly qps x iters messages")
ap.add_argument("--counters", action="store_true", help="each flow carries both its hosts' port counters")
ap.add_argument("--slow", metavar="HOST",
                help="the latency points' flows through HOST, and only those, are the slow ones")
ap.add_argument("--stopped", type=int, metavar="RANK",
                help="RANK was stopped mid-run: the results are incomplete and name it with its host")
ap.add_argument("--mcast-client", action="store_true", help="a `client --multicast` results file")
a = ap.parse_args()

problems = []
with open(a.file, encoding="utf-8") as f:
    doc = json.load(f)
ctx, entries = doc["context"], doc["benchmarks"]
hosts = a.hosts.split(",")
ranks = a.ranks or len(hosts)
host_of = [hosts[r % len(hosts)] for r in range(ranks)]

def mcast_client():
    """The sender's row and each receiver's per point: every datagram received, none
    lost, one-way latency measured against each receiver's estimated clock offset."""
    out = []
    receivers = ctx.get("receivers", [])
    if [r.get("host") for r in receivers] != hosts[1:]:
        out.append(f"receivers {[r.get('host') for r in receivers]}, expected {hosts[1:]}")
    for r in receivers:
        if r.get("same_host") or not isinstance(r.get("clock_offset_uncertainty_us"), (int, float)):
            out.append(f"receiver {r.get('host')}: no clock offset estimate in the context: {r}")
    if ctx.get("incomplete"):
        out.append(f"results marked incomplete: {ctx.get('incomplete_reason')}")
    rows = {}
    for b in entries:
        m = re.match(r"^multicast/(.+)/src:0(/dst:(\d+))?$", b["name"])
        if not m or b.get("error_occurred"):
            out.append(f"{b['name']}: {'failed: ' + str(b.get('error_message')) if m else 'not a multicast row'}")
            continue
        rows.setdefault(m[1], set()).add(int(m[3] or 0))
        if m[3] is None:
            if b.get("messages") != a.iters or b.get("src_host") != hosts[0]:
                out.append(f"{b['name']}: sender on {b.get('src_host')} measured {b.get('messages')}, expected {a.iters} from {hosts[0]}")
            continue
        dst, sent = int(m[3]), b.get("messages_sent")
        if b.get("messages_received") != sent or b.get("messages_lost") != 0 or sent < a.iters:
            out.append(f"{b['name']}: sent {sent}, received {b.get('messages_received')}, lost {b.get('messages_lost')}")
        if b.get("dst_host") != hosts[dst]:
            out.append(f"{b['name']}: dst_host {b.get('dst_host')}, expected {hosts[dst]}")
        if not b.get("latency_measured") or not b.get("lat_p50_us", 0) > 0 or "estimated offset" not in b.get("label", ""):
            out.append(f"{b['name']}: one-way latency not measured against an estimated offset: {b.get('label')}")
    want = set(range(len(hosts)))
    if not rows:
        out.append("no multicast rows")
    out += [f"{p}: rows {sorted(got)}, expected {sorted(want)}" for p, got in rows.items() if got != want]
    return out


if a.mcast_client:
    problems = mcast_client()
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)

# Every rank on its own host's device, with its own address's RoCE v2 GID.
info = ctx.get("rank_info", [])
if [r.get("host") for r in info] != host_of:
    problems.append(f"rank_info hosts {[r.get('host') for r in info]}, expected {host_of}")
gids = {}
for r in info:
    gids.setdefault(r.get("host"), set()).add(r.get("gid"))
if len({g for s in gids.values() for g in s}) != len(gids) or any(len(s) != 1 for s in gids.values()):
    problems.append(f"each host should have one GID of its own: {gids}")

if a.stopped is not None:
    who = f"rank {a.stopped} ({host_of[a.stopped]})"
    if not ctx.get("incomplete"):
        problems.append("a rank was stopped, but the results are not marked incomplete")
    if who not in ctx.get("incomplete_reason", ""):
        problems.append(f"incomplete_reason does not name {who}: {ctx.get('incomplete_reason')!r}")
    failed = [b for b in entries if b.get("error_occurred")]
    # Stopped in a phase (its measurement or its setup), the phase's flows through it
    # fail naming it; stopped between phases (in a collective), in a phase where it
    # had no flow, or right after its flows' results came back, none failed.
    reason = ctx.get("incomplete_reason", "")
    between = any(s in reason for s in ("(no heartbeat for", "it had no flow in this phase",
                                        "every flow of the phase kept its results"))
    if not failed and not between:
        problems.append("no failed flow")
    for b in failed:
        if who not in b.get("error_message", ""):
            problems.append(f"{b['name']}: its error does not name {who}: {b.get('error_message')!r}")
    kept = [b for b in entries if not b.get("error_occurred")]
    if not kept:
        problems.append("no flow kept its results")
    entries = kept
elif ctx.get("incomplete"):
    problems.append(f"results marked incomplete: {ctx.get('incomplete_reason')}")

name_re = re.compile(rf"^mesh/{re.escape(a.pattern)}/(?P<point>[a-z_]+/(?P<mode>bw|lat)/qps:(?P<qps>\d+)/size:(?P<size>\d+)(/[^/]+)*?)"
                     r"/(?P<tail>src:(?P<src>\d+)(/dst:(?P<dst>\d+))?|total)$")
seen = {}
for b in entries:
    n = b["name"]
    if b.get("error_occurred"):
        problems.append(f"{n}: failed: {b.get('error_message')}")
        continue
    m = name_re.match(n)
    if not m:
        problems.append(f"{n}: not a {a.pattern} flow's name")
        continue
    if m["tail"] == "total":
        continue
    qps, size = int(m["qps"]), int(m["size"])
    if a.pattern == "multicast":
        if m["dst"] is None:
            continue  # the sender's own entry
        dst = int(m["dst"])
        sent, got, lost = b.get("messages_sent"), b.get("messages_received"), b.get("messages_lost")
        if a.iters and (sent != got or lost != 0 or sent < a.iters):
            problems.append(f"{n}: sent {sent}, received {got}, lost {lost}; expected every one of them")
        if b.get("dst_host") != host_of[dst]:
            problems.append(f"{n}: dst_host {b.get('dst_host')!r}, rank {dst} is on {host_of[dst]}")
        same = host_of[dst] == host_of[0]
        label = b.get("label", "")
        if not b.get("latency_measured") or not b.get("lat_p50_us", 0) > 0:
            problems.append(f"{n}: one-way latency not measured on {host_of[dst]}: {b.get('clock_offset', label)}")
        elif same and "one host's clock" not in label:
            problems.append(f"{n}: on the sender's host, but labelled {label!r}")
        elif not same and ("estimated offset" not in label
                           or not isinstance(b.get("clock_offset_uncertainty_us"), (int, float))):
            problems.append(f"{n}: on {host_of[dst]}, not against an estimated clock offset: {label!r}")
        seen.setdefault(m["point"], set()).add((0, dst))
        continue
    src, dst = int(m["src"]), int(m["dst"])
    seen.setdefault(m["point"], set()).add((src, dst))
    if (b.get("src_host"), b.get("dst_host")) != (host_of[src], host_of[dst]):
        problems.append(f"{n}: hosts {b.get('src_host')}->{b.get('dst_host')}, expected {host_of[src]}->{host_of[dst]}")
    if a.iters and (b["messages"] != qps * a.iters or b.get("qp_messages_min") != a.iters
                    or b.get("qp_messages_max") != a.iters or (m["mode"] == "bw" and b["bytes"] != b["messages"] * size)):
        problems.append(f"{n}: {b['messages']} messages ({b.get('qp_messages_min')}..{b.get('qp_messages_max')} a QP), "
                        f"{b['bytes']} bytes; expected {qps * a.iters} ({a.iters} a QP)")
    if a.counters:
        c = b.get("counters", {})
        for side, host in (("client", host_of[src]), ("server", host_of[dst])):
            if side not in c:
                problems.append(f"{n}: no port counters from {host} ({side})")
        # Both hosts' ports saw the flow: the source sent, the target received, a packet a message at least.
        norm = c.get("normalized", {})
        if norm.get("client", {}).get("packets_sent", 0) < b["messages"]:
            problems.append(f"{n}: {host_of[src]}'s port sent {norm.get('client', {}).get('packets_sent')} packets "
                            f"for {b['messages']} messages")
        if norm.get("server", {}).get("packets_received", 0) < b["messages"]:
            problems.append(f"{n}: {host_of[dst]}'s port received {norm.get('server', {}).get('packets_received')} "
                            f"packets for {b['messages']} messages")

# Every expected flow of every point, once.
if a.stopped is None:
    want = {(i, j) for i in range(ranks) for j in range(ranks) if i != j}
    if a.pattern == "incast":
        want = {(i, 0) for i in range(1, ranks)}
    elif a.pattern == "multicast":
        want = {(0, j) for j in range(1, ranks)}
    if not seen:
        problems.append("no flow measured")
    for point, got in sorted(seen.items()):
        if got != want:
            problems.append(f"{point}: flows {sorted(got)}, expected {sorted(want)}")


def through(flow, host):
    return host in (host_of[flow[0]], host_of[flow[1]])


if a.slow:
    # Per latency point: the host whose flows are slowest (median p50) is found from
    # the figures alone, and every flow through it is slower than every flow that
    # avoids it. (A delay shows in a round trip; a bandwidth point whose window of
    # messages in flight covers the added delay need not slow down.)
    by_point = {}
    for b in entries:
        m = name_re.match(b["name"])
        if m and m["mode"] == "lat" and m["tail"] != "total" and not b.get("error_occurred"):
            by_point.setdefault(m["point"], []).append(((int(m["src"]), int(m["dst"])), b["lat_p50_us"]))
    if not by_point:
        problems.append("--slow: no latency flows to compare")
    for point, flows in sorted(by_point.items()):
        found = max(set(host_of), key=lambda h: statistics.median(f for fl, f in flows if through(fl, h)))
        via = [f for fl, f in flows if through(fl, a.slow)]
        avoid = [f for fl, f in flows if not through(fl, a.slow)]
        clean = bool(via and avoid) and min(via) > max(avoid)
        print(f"{point}: slowest host {found}; p50 us through {a.slow} {[round(v) for v in sorted(via)]}, "
              f"avoiding it {[round(v) for v in sorted(avoid)]}")
        if found != a.slow or not clean:
            problems.append(f"{point}: the flows through {a.slow} are not the slow ones "
                            f"(slowest host by median: {found}; through it {via}, avoiding it {avoid})")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
