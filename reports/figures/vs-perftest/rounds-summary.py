"""Medians and Mann-Whitney p of a lab script's round lines
("round N TRANSPORT TOOL min X p50 Y p99 Z", e.g. rxe-udlat-repost.txt):
each tool against rdmasweep, then each pair named with --pair A B.
Run: /usr/bin/python3 reports/figures/vs-perftest/rounds-summary.py FILE [--pair A B]..."""

import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from rdmasweep_py.stats import mann_whitney  # noqa: E402

LINE = re.compile(r"round \d+ (\w+) (\S+) min (\S+) p50 (\S+) p99 (\S+)$")


def rounds(path):
    """{(transport, figure): {tool: [values]}}"""
    out = {}
    for line in open(path):
        m = LINE.match(line.strip())
        if not m:
            continue
        transport, tool, *values = m.groups()
        for figure, v in zip(("min", "p50", "p99"), values):
            out.setdefault((transport, figure), {}).setdefault(tool, []).append(float(v))
    return out


def row(transport, figure, a_name, a, b_name, b):
    ma, mb = statistics.median(a), statistics.median(b)
    return (f"{transport} {figure:3} {a_name} {ma:.2f} ({len(a)}) against {b_name} {mb:.2f} ({len(b)}):"
            f" ratio {ma / mb:.3f}, p {mann_whitney(a, b):.2g}")


def main(argv):
    path, pairs = argv[0], []
    rest = argv[1:]
    while rest[:1] == ["--pair"] and len(rest) >= 3:
        pairs.append((rest[1], rest[2]))
        rest = rest[3:]
    data = rounds(path)
    tools = sorted({t for d in data.values() for t in d} - {"rdmasweep"})
    pairs = [("rdmasweep", t) for t in tools] + pairs
    for a, b in pairs:
        for (transport, figure), d in sorted(data.items()):
            if a in d and b in d:
                print(row(transport, figure, a, d[a], b, d[b]))


if __name__ == "__main__":
    main(sys.argv[1:])
