#!/usr/bin/env python3
"""Runs the tools' tests (tests/tools/test_*.py) in worker processes, one
`python -m unittest -v MODULE` a module, as many at once as --jobs (default: the
host's CPUs). The tests are independent (each writes only to its own temporary
directory) and most of their time is matplotlib drawing charts on one CPU, so two
workers take the stage from about 7 minutes to about 4 on 2 cores.

Each module's output is printed whole when it ends, under a line with its name and
time, and a last line counts the failed modules; exit 1 when any failed. The slowest modules start first, so the
workers end close together.

  parallel.py [--jobs N] [MODULE...]   (MODULE: test_plot, ...; default: all)
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 1200  # a module that hangs fails, with what it printed, instead of stalling CI
# Measured on 2 cores, two at a time: 15 to 126 s each (charts, the permutation tests,
# Chromium). Only the order depends on this list; a module missing from it starts after these.
SLOWEST_FIRST = ["test_plot", "test_plot_hunt", "test_plot_qp", "test_plot_load", "test_report",
                 "test_history", "test_plot_isolation", "test_timeline"]


def modules():
    found = sorted(f[:-3] for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py"))
    return sorted(found, key=lambda m: SLOWEST_FIRST.index(m) if m in SLOWEST_FIRST else len(SLOWEST_FIRST))


def run(module):
    t0 = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "unittest", "-v", module], cwd=HERE, timeout=TIMEOUT_S,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc, out = 1, out + f"parallel.py: {module} still running after {TIMEOUT_S} s: stopped\n"
    return module, rc, out, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("module", nargs="*")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error(f"--jobs takes a count of at least 1, not {args.jobs}")
    known = modules()
    chosen = args.module or known
    unknown = [m for m in chosen if m not in known]
    if unknown:
        ap.error(f"no test module {', '.join(unknown)} in tests/tools (there: {', '.join(known)})")
    began, ended = time.monotonic(), []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for done in concurrent.futures.as_completed([pool.submit(run, m) for m in chosen]):
            module, rc, out, secs = done.result()
            print(f"== {module} ({secs:.0f} s){'' if rc == 0 else ' FAILED'}", flush=True)
            print(out, end="" if out.endswith("\n") else "\n", flush=True)
            ended.append((module, rc))
    failed = [m for m, rc in ended if rc != 0]
    print(f"== {len(ended)} modules in {time.monotonic() - began:.0f} s on {args.jobs} worker(s): "
          f"{len(failed)} failed{': ' + ', '.join(failed) if failed else ''}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
