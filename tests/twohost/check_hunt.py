"""Checks `rdmasweep hunt`'s report from the two-host tests (stdlib only).

check_hunt.py DIR --trigger-size N --below N   (a planted fault)
    some anomaly's minimal trigger has message size N, every other searched knob at
    its simplest, and the smaller size N was measured while shrinking without it;
    prints that anomaly's reproduce command on stdout.
check_hunt.py DIR --clean
    the report says what it explored; every anomaly held in every repetition; every
    point flagged but not reported has its status and reruns.
check_hunt.py --reproduced FILE --size N
    the reproduce command's results show the anomaly at size N again: retransmits in
    every run of that size, or bytes/s under half of the smaller size's.
Exit 1 with one line per problem.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("dir", nargs="?")
ap.add_argument("--trigger-size", type=int)
ap.add_argument("--below", type=int)
ap.add_argument("--clean", action="store_true")
ap.add_argument("--reproduced")
ap.add_argument("--size", type=int)
a = ap.parse_args()
problems = []


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: not readable: {e}")


def check_report(rep, points):
    if rep["explored"] < 1:
        problems.append("nothing explored")
    runs = [b for b in points["benchmarks"] if b.get("hunt", {}).get("role") != "aggressor"]
    if len(runs) < rep["measurements"]:
        problems.append(f"points.json has {len(runs)} runs, the report counts {rep['measurements']}")
    for an in rep["anomalies"]:
        ev = an["evidence"]
        if ev["held"] < rep["space"]["must_hold"]:
            problems.append(f"anomaly {an['id']} held in {ev['held']} of {ev['runs']} runs only")
        if not an["reproduce"].startswith("rdmasweep client "):
            problems.append(f"anomaly {an['id']}: no reproduce command")
    for f in rep["not_reported"]:
        if f["status"] == "noise" and f["rerun"]["held"] >= rep["space"]["must_hold"]:
            problems.append(f"{f['candidate']}: dismissed as noise although it held")


if a.reproduced:
    doc = load(a.reproduced)
    ok = [b for b in doc["benchmarks"] if not b.get("error_occurred") and b.get("run_type") == "iteration"]
    at = [b for b in ok if b["config"]["size"] == a.size]
    below = [b for b in ok if b["config"]["size"] < a.size]
    if not at:
        problems.append(f"no run at {a.size} B")
    retrans = all(b.get("retransmits", 0) > 0 for b in at)
    slow = below and at and max(b["bytes_per_second"] for b in at) < 0.5 * min(b["bytes_per_second"] for b in below)
    if at and not (retrans or slow):
        problems.append(f"{a.size} B runs show neither retransmits nor a throughput cliff: "
                        + ", ".join(f"{b['bytes_per_second'] / 1e6:.2f} MB/s, retransmits {b.get('retransmits')}" for b in at))
    else:
        print(f"reproduced at {a.size} B: " + ", ".join(
            f"{b['bytes_per_second'] / 1e6:.2f} MB/s, retransmits {b.get('retransmits')}" for b in at))
else:
    rep = load(f"{a.dir}/anomalies.json")
    check_report(rep, load(f"{a.dir}/points.json"))
    if a.trigger_size:
        hits = [an for an in rep["anomalies"] if an["minimal"]["config"]["size"] == a.trigger_size]
        if not hits:
            problems.append(f"no anomaly with a minimal trigger of {a.trigger_size} B: "
                            + "; ".join(an["summary"] for an in rep["anomalies"]))
        else:
            an = hits[0]
            extra = {k: v for k, v in an["minimal"]["changed"].items() if k not in ("op", "mode", "size")}
            smaller = [b for b in load(f"{a.dir}/points.json")["benchmarks"]
                       if b.get("hunt", {}).get("phase", "").startswith(("shrink", "confirm"))
                       and b["config"]["size"] == a.below]
            if extra:
                problems.append(f"anomaly {an['id']}: not shrunk: {extra} still away from the defaults")
            if not smaller and not any(f"-> {a.below}:" in s for s in an["shrinking"]):
                problems.append(f"anomaly {an['id']}: {a.below} B never tried while shrinking")
            print(an["reproduce"])
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
