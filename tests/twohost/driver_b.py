#!/usr/bin/env python3
"""Host b of the two-host tests (tools/two-host-test): the client side. Each test prints
"ok NAME" or "FAIL NAME: why" (or "skip NAME on PROVIDER: why"); the exit status is 1
when any failed. Host a (agent_a.py) serves and carries out requests: the server
restarted or killed, its link taken down, netem on its NIC.
RDMASWEEP_TWOHOST_ONLY=hunt, tclass, ud, cm, midtest or ridden runs that test alone."""
import json
import os
import shlex
import subprocess
import sys

from context import HERE, TwoHost
from faults import midtests, netem_faults, ridden_out
from labhost import one_line, run_logged, wait_for
from wire import cm_across, cm_late_rtu, doctor, tclass_on_wire, ud_checks

CONFIGS = os.path.join(HERE, "..", "..", "configs")


def expect(lab, name, label, checks, *args):
    """A client run, then check.py on its results."""
    rc = lab.client(name, *args)
    if rc:
        return lab.v.fail(label, f"client exit {rc}: {one_line(lab.log(name))}")
    held, out = lab.check(name, *checks)
    return lab.v.ok(label) if held else lab.v.fail(label, out)


def ops_and_quick(lab):
    """Every op and mode with 1, 4 and 16 QPs: exact counts, both sides and their GIDs
    named; the quick sweep, also with both sides' port counter deltas in every point."""
    sides = ["--client", f"rxe-b,{lab.b.addr}", "--server", f"rxe-a,{lab.a.addr}"]
    tr = ["--transport", "iWARP"] if lab.iwarp else []
    counters = [] if lab.iwarp else ["--counters"]
    expect(lab, "ops", "ops x modes x qps 1,4,16", ["--complete", "--iters", 40, *sides, *tr],
           "--op", "send,write,read", "--mode", "bw,lat", "--qps", "1,4,16", "--size", 4096, "-n", 40,
           "--warmup", 4, "--timeout", 20)
    expect(lab, "quick", "configs/quick.json", ["--complete", "--iters", 200, *sides, *counters, *tr],
           "--config", os.path.join(CONFIGS, "quick.json"), "--timeout", 20)


def bind(lab):
    """A server bound to a's NIC address."""
    lab.ask("restart", "--bind", lab.a.addr)
    expect(lab, "bind", f"server --bind {lab.a.addr}", ["--complete", "--iters", 20],
           "--op", "write", "--mode", "lat", "-n", 20, "--warmup", 2, "--size", 64, "--timeout", 20)
    lab.ask("restart")


def hunt_planted(lab):
    """(last) rdmasweep hunt with a planted anomaly: both NICs drop 10% of the IP packets
    over 1000 bytes, so every message of an MTU (1024 B) or more suffers and smaller ones
    do not. The hunt must report an anomaly whose minimal trigger is 1024 B, with 512 B
    measured clean, and its command must show it again."""
    v, name, out = lab.v, "hunt planted", lab.path("hunt")
    if lab.iwarp:
        return lab.skip(name, "its planted loss hits packets over one MTU, as rxe cuts messages; "
                        "TCP segments its stream otherwise")
    if not (lab.a.netem_on("big", "10%") and lab.b.netem_on("big", "10%")):
        return v.fail(name, "cannot plant the loss")
    try:
        return hunt_judged(lab, name, out)
    finally:
        show = os.path.join(out, "anomalies.md")
        if os.path.exists(show):
            print("".join(open(show).readlines()[:40]), end="")
        keep = os.environ.get("RDMASWEEP_HUNT_KEEP")  # a path in the shared checkout
        if keep and os.path.isdir(out):
            subprocess.run(f"mkdir -p {shlex.quote(keep)} && cp {shlex.quote(out)}/* {shlex.quote(keep)}/", shell=True)
        lab.b.clear()
        lab.a.clear()


def hunt_judged(lab, name, out):
    v, check_hunt = lab.v, os.path.join(HERE, "check_hunt.py")
    rc = run_logged([lab.bin, "hunt", lab.a.addr, "--budget", "240s", "--seed", 1, "--space",
                     os.path.join(HERE, "hunt-space.json"), "--timeout", 20, "--out", out], lab.path("hunt.log"), 400)
    if rc:
        return v.fail(name, f"exit {rc}: {one_line(lab.log('hunt'))}")
    found = subprocess.run([sys.executable, check_hunt, out, "--trigger-size", "1024", "--below", "512"],
                           capture_output=True, text=True)
    if found.returncode:
        return v.fail(name, " ".join(found.stderr.split("\n")))
    cmd = shlex.split(found.stdout.strip().removeprefix("rdmasweep "))
    rc = run_logged([lab.bin, *cmd, "--out", lab.path("hunt-repro.json")], lab.path("hunt-repro.log"), 240)
    if rc or subprocess.run([sys.executable, check_hunt, "--reproduced", lab.path("hunt-repro.json"),
                             "--size", "1024"]).returncode:
        return v.fail(name, f"the reproduce command did not show it: {one_line(lab.log('hunt-repro'))}")
    with open(os.path.join(out, "anomalies.md")) as f:
        heading = next((line.strip() for line in f if line.startswith("## Anomaly")), "")
    with open(os.path.join(out, "anomalies.json")) as f:
        point = [x["minimal"]["point"] for x in json.load(f)["anomalies"] if x["minimal"]["config"]["size"] == 1024][0]
    return v.ok(f"{name}: {heading} on {point}")


ONLY = {"hunt": [hunt_planted], "tclass": [tclass_on_wire], "ud": [ud_checks], "cm": [cm_across, cm_late_rtu],
        "midtest": [midtests], "ridden": [ridden_out]}
# In this order: the faults after the runs on a clean link, the hunt (slowest) last.
ALL = [ops_and_quick, cm_across, cm_late_rtu, doctor, bind, midtests, ridden_out, netem_faults, tclass_on_wire,
       ud_checks, hunt_planted]


def main():
    sys.stdout.reconfigure(line_buffering=True)
    lab = TwoHost()
    if not wait_for(120, lambda: os.path.exists(lab.path("ready.a"))):
        print("FAIL setup: host a never got ready")
        return 1
    only = os.environ.get("RDMASWEEP_TWOHOST_ONLY", "")
    if only and only not in ONLY:
        print(f"driver_b: RDMASWEEP_TWOHOST_ONLY must be one of {', '.join(ONLY)}, not '{only}'")
        return 2
    for test in ONLY[only] if only else ALL:
        test(lab)
    print(f"two-host tests ({lab.provider}): {lab.v.fails} failure(s)")
    return 1 if lab.v.fails else 0


if __name__ == "__main__":
    sys.exit(main())
