"""tools/test --repeat's count: each test's passes over the runs of a stage, read from
the stages' own output (stdlib only).

A test is what a stage's runner names in its output:
  ctest        "  3/120 Test  #3: Name.Case ........   Passed    0.1 sec" (or ***Failed, ***Timeout, ...)
  unittest -v  "test_x (module.Class.test_x) ... ok" (or FAIL, ERROR, skipped)
  lab drivers  "ok NAME[: details]", "FAIL NAME: why", "skip NAME on PROVIDER: why", each
               possibly behind a lab host's "a| " prefix; NAME ends at the first ": " or " ("
A stage whose output names no test counts as one test, its own name, passed when it
exited 0."""

import re

CTEST = re.compile(r"Test\s+#\d+: (\S+) \.*\s*(?:\*\*\*)?(Passed|Failed|Timeout|Exception|Not Run)")
UNITTEST = re.compile(r"^(test\w*) \(([\w.]+)\)(?: \.\.\.)? (ok|FAIL|ERROR|skipped.*|expected failure)$")
DRIVER = re.compile(r"^(?:[a-z]\| )?(ok|FAIL|skip) (.+)$")
DRIVER_NAME = re.compile(r"^(.+?)(?:: | \(| on (?:rxe|siw): |$)")


def tests_in(text):
    """{test name: "pass" | "fail" | "skip"} for the tests a stage's output names."""
    out = {}
    for line in text.splitlines():
        line = line.rstrip()
        m = CTEST.search(line)
        if m:
            out[m[1]] = "pass" if m[2] == "Passed" else "fail"
            continue
        m = UNITTEST.match(line)
        if m:
            name = m[2] if m[2].endswith("." + m[1]) else f"{m[2]}.{m[1]}"
            out[name] = {"ok": "pass", "FAIL": "fail", "ERROR": "fail"}.get(m[3], "skip")
            continue
        m = DRIVER.match(line)
        if m:
            name = DRIVER_NAME.match(m[2])[1]
            verdict = {"ok": "pass", "FAIL": "fail", "skip": "skip"}[m[1]]
            if out.get(name) != "fail":  # a test named twice in one run fails if either failed
                out[name] = verdict
    return out


def tally(runs):
    """runs: [(stage, exit status, output text)] in order. Returns {stage: {"runs": n,
    "passed": n, "tests": {name: [passes, runs, skips]}}}."""
    stages = {}
    for stage, status, text in runs:
        s = stages.setdefault(stage, {"runs": 0, "passed": 0, "tests": {}})
        s["runs"] += 1
        s["passed"] += status == 0
        found = tests_in(text) or {stage: "pass" if status == 0 else "fail"}
        for name, verdict in found.items():
            t = s["tests"].setdefault(name, [0, 0, 0])
            t[1] += 1
            t[0] += verdict == "pass"
            t[2] += verdict == "skip"
    return stages


def render(stages, detail_limit=40):
    """The table tools/test prints: per stage its runs passed, then every test that did
    not pass every run (with its count), then how many passed every run."""
    lines = []
    for stage, s in stages.items():
        lines.append(f"{stage}: {s['passed']} of {s['runs']} run(s) passed")
        flaky = sorted((n, t) for n, t in s["tests"].items() if t[0] + t[2] < t[1])
        steady = [n for n, t in s["tests"].items() if t[0] + t[2] == t[1]]
        for name, (passes, runs, skips) in flaky[:detail_limit]:
            lines.append(f"  {passes} of {runs} passed: {name}")
        if len(flaky) > detail_limit:
            lines.append(f"  ... and {len(flaky) - detail_limit} more that failed in some run")
        lines.append(f"  {len(steady)} test(s) passed (or skipped) in every run of the {s['runs']}")
    return "\n".join(lines)


def main(argv):
    """tally.py DIR: DIR holds STAGE.RUN.log and STAGE.RUN.rc (tools/test --repeat)."""
    import os
    d = argv[1]
    runs = []
    for f in sorted(os.listdir(d), key=lambda f: (int(f.split(".")[1]) if f.count(".") == 2 else 0, f)):
        if not f.endswith(".log"):
            continue
        stage, run, _ = f.split(".")
        with open(os.path.join(d, f), errors="replace") as fh:
            text = fh.read()
        try:
            with open(os.path.join(d, f"{stage}.{run}.rc")) as fh:
                status = int(fh.read().strip() or 1)
        except (OSError, ValueError):
            status = 1
        runs.append((f"stage {stage}", status, text))
    stages = tally(runs)
    print(render(stages))
    for stage, s in stages.items():  # every test's count, for the file beside the logs
        for name, (passes, n, skips) in sorted(s["tests"].items()):
            print(f"    {stage}: {passes} of {n} passed{f', {skips} skipped' if skips else ''}: {name}")


if __name__ == "__main__":
    import sys
    main(sys.argv)
