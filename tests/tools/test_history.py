"""tools/history: change points on synthetic series with the lab's noise, files kept
apart by what they measured, the gate's exit codes."""

import copy
import json
import os
import random
import re
import statistics
import tempfile
import unittest

import numpy as np

from _util import DATA, PNG_SIGNATURE, TempDirCase, colour_stats, gunzip, load, run_tool, save, tools_module

hy = tools_module("history")
BW_POINT = "write/bw/qps:4/size:4096/cq:16"


def unpack(name, dest, first=None, last=None):
    """tests/tools/data/NAME's gzipped runs, numbered from 1, first to last of them,
    unpacked into dest; their paths."""
    names = sorted(n for n in os.listdir(os.path.join(DATA, name)) if n.endswith(".json.gz"))
    out = []
    for n in names[(first or 1) - 1:last]:
        out.append(os.path.join(dest, n[:-3]))
        gunzip(os.path.join(name, n), out[-1])
    return out


def quiet_lab_runs():
    """Runs in the rxe lab VM with nothing else running: the 40 of
    tests/tools/data/noise-lab and the 10 of history-lab before its hogs, read as
    tools/history reads them. For each set and point (in name order), its runs: each
    run's repetitions of bytes_per_second."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, quiet in (("noise-lab", 40), ("history-lab", 10)):
            dest = os.path.join(tmp, name)
            os.mkdir(dest)
            unpack(name, dest, last=quiet)
            by_point = hy.series(hy.collect([dest]), ["bytes_per_second"])
            out += [[samples for _, samples in runs] for _, runs in sorted(by_point.items())]
    return out


def lab_noise():
    """The lab's noise as it was measured, in two parts that the synthetic series
    draw from: each quiet run's median over its point's median (a whole run faster
    or slower: the host), and each repetition over its run's median (one
    repetition off: a hiccup). Its tails are the lab's own; a normal law with the
    same spread would put them everywhere instead."""
    levels, reps = [], []
    for runs in quiet_lab_runs():
        medians = [statistics.median(r) for r in runs]
        mid = statistics.median(medians)
        levels += [m / mid for m in medians]
        reps += [v / m for r, m in zip(runs, medians) for v in r]
    return levels, reps


RUN_LEVELS, REP_RATIOS = lab_noise()


def series(runs, seed, reps=5, step_at=None, step=0.0, ramp=None):
    """`runs` runs of `reps` samples around 1.0 with the lab's noise; from run
    step_at on the level is 1 + step; ramp (start, per_run, runs) adds per_run a
    run for `runs` runs from start on, and keeps the level reached."""
    r = random.Random(seed)
    out = []
    for i in range(runs):
        level = 1 + step if step_at is not None and i >= step_at else 1.0
        if ramp and i >= ramp[0]:
            level *= 1 + ramp[1] * min(i - ramp[0] + 1, ramp[2])
        level *= r.choice(RUN_LEVELS)
        out.append([level * r.choice(REP_RATIOS) for _ in range(reps)])
    return out


def decided_by_the_data(runs, step_at, step, margin, around=2):
    """Whether the runs next to a planted step (`around` on each side) show it: each
    run's median on its own side of the midpoint between the two levels, by at least
    `margin`. When the lab's noise moved one of them across, the data itself puts the
    step a run or two away, and no method can place it at the planted run."""
    mid = 1 + step / 2
    for i in range(step_at - around, step_at + around):
        above = (i >= step_at) == (step > 0)
        if (statistics.median(runs[i]) - mid) * (1 if above else -1) < margin:
            return False
    return True


class ChangePoints(unittest.TestCase):
    def test_the_noise_is_the_labs(self):
        # 50 quiet runs of 2 points, 5 repetitions each. Whole runs move by a few
        # percent; most repetitions sit within 2% of their run, a few far below it.
        self.assertEqual((len(RUN_LEVELS), len(REP_RATIOS)), (100, 500))
        self.assertGreater(statistics.stdev(RUN_LEVELS), 0.01)
        quartiles = statistics.quantiles(REP_RATIOS, n=4)
        self.assertLess(quartiles[2] - quartiles[0], 0.02)
        self.assertLess(min(REP_RATIOS), 0.7)

    def test_planted_steps_are_found_at_their_run(self):
        # 100 series of 40 runs for each step, planted at run 20. Where the runs next
        # to the step show it (decided_by_the_data, with a tenth of the step to spare),
        # there is a change point at run 20, every time. Where the lab's noise moved
        # one of them to the other level's side, the data itself puts the step a run
        # or two away: that happens at 10% (about 1 in 8 series, measured over 1000
        # seeds), rarely at 20%, never at 50%, and such a series still has a change
        # point within two runs. A second change point is a false alarm at the
        # permutation test's rate (alpha 0.01 for each segment tried).
        most_undecided = {0.1: 20, 0.2: 6, 0.5: 0}
        for step in (-0.5, -0.2, -0.1, 0.1, 0.2, 0.5):
            undecided, exact, extra = 0, 0, 0
            for seed in range(100):
                runs = series(40, seed, step_at=20, step=step)
                cuts = [at for at, _ in hy.change_points(runs)]
                with self.subTest(step=step, seed=seed):
                    self.assertTrue(cuts and min(abs(at - 20) for at in cuts) <= 2, cuts)
                    if decided_by_the_data(runs, 20, step, margin=abs(step) / 10):
                        self.assertIn(20, cuts)
                    else:
                        undecided += 1
                exact += 20 in cuts
                extra += len(cuts) > 1
            with self.subTest(step=step):
                self.assertLessEqual(undecided, most_undecided[abs(step)])
                self.assertGreaterEqual(exact, 90 if abs(step) < 0.2 else 98)
                self.assertLessEqual(extra, 3)

    def test_a_hiccup_does_not_move_a_change_point(self):
        # Seen in the lab's noise: two repetitions of the run before a 20% drop at
        # half its level. The run's median is where it was, and so is the change point.
        runs = series(40, 7, step_at=20, step=-0.2)
        self.assertEqual([at for at, _ in hy.change_points(runs)], [20])
        runs[19] = [1.0, 1.0, 1.0, 0.55, 0.66]
        self.assertEqual([at for at, _ in hy.change_points(runs)], [20])

    def test_noise_alone_gives_no_change_point(self):
        # 100 series of 50 runs (5 repetitions each): at most 5 with any change point.
        noisy = [s for s in range(100) if hy.change_points(series(50, 1000 + s))]
        self.assertLessEqual(len(noisy), 5, noisy)

    def test_a_drift_of_two_percent_a_run_is_found_within_it(self):
        for seed in range(5):
            cuts = hy.change_points(series(40, seed, ramp=(15, -0.02, 10)))
            self.assertTrue(cuts, seed)
            self.assertTrue(any(15 <= at <= 25 for at, _ in cuts), cuts)

    def test_one_odd_run_is_not_a_change_point_two_are(self):
        runs = series(30, 7)
        runs[-1] = [0.5] * 5
        self.assertEqual(hy.change_points(runs), [])
        runs[-2] = [0.5] * 5
        self.assertEqual([at for at, _ in hy.change_points(runs)], [28])

    def test_a_tie_with_a_shuffle_counts_against_the_split(self):
        # Six runs, the last one odd: a third of the shuffles put the odd run at an
        # end, and they separate the runs exactly as well. The p-value is that third,
        # whatever the values; it once hung on how the sums happened to round.
        r = random.Random(3)
        for _ in range(20):
            runs = [[0.75 * (1 + r.gauss(0, 0.03)) for _ in range(5)] for _ in range(5)]
            runs.append([1 + r.gauss(0, 0.03) for _ in range(5)])
            at, _, p = hy.best_split(runs, 199, np.random.RandomState(1))
            self.assertEqual(at, 5)
            self.assertGreater(p, 0.25)
            self.assertEqual(hy.change_points(runs), [])

    def test_direction_names_regressions(self):
        drop = series(30, 3, step_at=15, step=-0.3)
        rise = series(30, 3, step_at=15, step=0.3)
        for runs, metric, kind in ((drop, "bytes_per_second", "regression"), (rise, "bytes_per_second", "improvement"),
                                   (rise, "lat_p50_us", "regression"), (drop, "lat_p50_us", "improvement"),
                                   (rise, "cpu_seconds", "regression")):
            with self.subTest(metric=metric, kind=kind):
                found = hy.describe(runs, hy.change_points(runs), hy.direction_of(metric))
                self.assertEqual([c["kind"] for c in found], [kind])
                self.assertAlmostEqual(found[0]["ratio"], 0.7 if runs is drop else 1.3, delta=0.06)


def history_file(doc, run, device="rxe0", factor=1.0, seed=0):
    """demo.json as run number `run` of a history: its date, device and revision, the
    bandwidth point's repetitions scaled by `factor` with the lab's noise."""
    doc = copy.deepcopy(doc)
    r = random.Random(seed * 1000 + run)
    ctx = doc["context"]
    ctx["date"] = f"2026-11-{1 + run // 24:02d}T{run % 24:02d}:00:00+0000"
    ctx["device"] = device
    ctx["git_revision"] = "0123456789ab"  # the tool's build: the same in every run
    ctx["labels"] = {"commit": f"{run:012x}", "run": str(run)}  # what CI said with --label
    level = factor * r.choice(RUN_LEVELS)
    for e in doc["benchmarks"]:
        if e["name"] == BW_POINT:
            rep = r.choice(REP_RATIOS)
            for m in ("bytes_per_second", "items_per_second"):
                e[m] *= level * rep
    return doc


class HistoryFiles(TempDirCase):
    def setUp(self):
        super().setUp()
        self.demo = load("demo.json")
        self.dir = self.path("history")
        os.mkdir(self.dir)

    def fill(self, runs, device="rxe0", slow_from=None, factor=0.6):
        for i in range(runs):
            f = factor if slow_from is not None and i >= slow_from else 1.0
            # Names sort against the dates on purpose: the order is the context's.
            save(history_file(self.demo, i, device, f), os.path.join(self.dir, f"{device}-{runs - i:03d}.json"))

    def test_a_slowdown_is_named_with_its_first_run_and_commit(self):
        self.fill(16, slow_from=10)
        r = run_tool("history", self.dir, "--json", "--metrics", "bytes_per_second")
        self.assertEqual(r.returncode, 0, r.stderr)
        found = json.loads(r.stdout)
        self.assertEqual(len(found), 1, found)
        c = found[0]
        self.assertEqual((c["point"], c["metric"], c["kind"], c["run"], c["commit"]),
                         (BW_POINT, "bytes_per_second", "regression", 10, f"{10:012x}"))
        self.assertAlmostEqual(c["ratio"], 0.6, delta=0.1)
        self.assertLess(c["p_value"], hy.DEFAULT_ALPHA)

    def test_files_of_two_devices_are_not_mixed(self):
        self.fill(12, "rxe0")
        self.fill(12, "mlx5_0", factor=0.5, slow_from=0)  # slower everywhere: a different history, not a change
        r = run_tool("history", self.dir, "--json", "--metrics", "bytes_per_second")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), [])
        files = hy.collect([self.dir])
        self.assertEqual(sorted(len(v) for v in hy.histories(files).values()), [12, 12])

    def test_gate_exit_codes(self):
        self.fill(14, slow_from=12)
        new = save(history_file(self.demo, 14, factor=0.6), self.path("new.json"))
        md = self.path("pr.md")
        r = run_tool("history", "--gate", new, self.dir, "--metrics", "bytes_per_second", "--recent", "3", "--markdown", md)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("regression: " + BW_POINT, r.stderr)
        self.assertEqual(len(os.listdir(self.dir)), 15)  # the history keeps the new run
        with open(md, encoding="utf-8") as f:
            self.assertIn("**1 regression(s) at the newest runs**", f.read())

        clean = self.path("clean")
        os.mkdir(clean)
        for i in range(14):
            save(history_file(self.demo, i), os.path.join(clean, f"{i:03d}.json"))
        ok = save(history_file(self.demo, 14), self.path("ok.json"))
        r = run_tool("history", "--gate", ok, clean, "--metrics", "bytes_per_second")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(os.listdir(clean)), 15)

        # The directory first works too: --gate DIR NEW.json (the slowdown's first run
        # is now the fourth newest).
        slow = save(history_file(self.demo, 15, factor=0.6), self.path("slow.json"))
        r = run_tool("history", "--gate", self.dir, slow, "--metrics", "bytes_per_second", "--recent", "4")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(len(os.listdir(self.dir)), 16)

        for args in (("--gate", ok, self.path("missing")), (self.path("missing"),), ("--alpha", "2", clean)):
            with self.subTest(args=args):
                r = run_tool("history", *args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        not_results = self.path("x.json")
        with open(not_results, "w") as f:
            f.write("[1, 2]")
        r = run_tool("history", "--gate", not_results, clean)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(os.listdir(clean)), 15)  # nothing copied


class MtuHistory(TempDirCase):
    """A real history (tests/tools/data/mtu-lab, docs/charts.md): 24 runs of the CI
    sweep in the rxe lab VM, the lab's MTU lowered from run 17 on (rxe's active MTU
    512 instead of 1024): the 4 KiB points slow down, the 64 B points do not."""

    def test_the_slowdown_is_found_at_its_run_in_every_4k_point_only(self):
        unpack("mtu-lab", self.tmp)
        r = run_tool("history", self.tmp, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        found = json.loads(r.stdout)
        regressions = [c for c in found if c["kind"] == "regression"]
        self.assertEqual({c["point"] for c in regressions},
                         {"write/bw/qps:1/size:4096/cq:4", "write/bw/qps:4/size:4096/cq:16",
                          "send/lat/qps:1/size:4096/cq:516", "send/lat/qps:4/size:4096/cq:2064"})
        self.assertEqual({(c["run"], os.path.basename(c["file"])) for c in regressions}, {(16, "run-17.json")})
        by = {(c["point"], c["metric"]): c for c in regressions}
        for point in ("write/bw/qps:1/size:4096/cq:4", "write/bw/qps:4/size:4096/cq:16"):
            self.assertLess(by[(point, "bytes_per_second")]["ratio"], 0.8)
        for point in ("send/lat/qps:1/size:4096/cq:516", "send/lat/qps:4/size:4096/cq:2064"):
            self.assertGreater(by[(point, "lat_p50_us")]["ratio"], 1.3)

    def test_the_gate_fails_once_the_slowdown_is_three_runs_old(self):
        # Run by run, as CI would: 2 slowed runs of 18 cannot be told from chance
        # (2 / C(18, 2) > 0.01), 3 of 19 can; after that the change point is older
        # than the newest 3 runs, and the gate passes again.
        history = self.path("history")
        os.mkdir(history)
        unpack("mtu-lab", history, last=16)
        new = self.path("new")
        os.mkdir(new)
        codes = []
        for path in unpack("mtu-lab", new, first=17, last=20):
            r = run_tool("history", "--gate", history, path, "--metrics", "bytes_per_second,lat_p50_us")
            codes.append(r.returncode)
        self.assertEqual(codes, [0, 0, 1, 0])


class TwoDevices(TempDirCase):
    """Real runs of one sweep on one host on two devices (docs/charts.md): the first 8
    of tests/tools/data/noise-lab on rxe0, and tests/tools/data/siw-lab's 8 on siw0,
    about 70% faster."""

    def test_runs_of_two_devices_are_two_histories(self):
        rxe, siw = self.path("rxe"), self.path("siw")
        os.mkdir(rxe)
        os.mkdir(siw)
        unpack("noise-lab", rxe, last=8)
        unpack("siw-lab", siw)
        r = run_tool("history", rxe, siw, "--json", "--metrics", "bytes_per_second")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), [])
        files = hy.collect([rxe, siw])
        groups = hy.histories(files)
        self.assertEqual(sorted((k[1], len(v)) for k, v in groups.items()), [("rxe0", 8), ("siw0", 8)])
        # Only the devices (the client's and the server's) tell them apart, and one
        # series of both would have a step.
        self.assertEqual(hy.HISTORY_KEYS[1], "device")
        self.assertEqual(hy.HISTORY_KEYS[3], "server_device")
        self.assertEqual(len({(k[0], k[2], k[4]) for k in groups}), 1)
        merged = hy.series(sorted(files, key=hy.order_key), ["bytes_per_second"])
        for (point, _), runs in merged.items():
            with self.subTest(point=point):
                self.assertEqual([at for at, _ in hy.change_points([s for _, s in runs])], [8])


class LabHistory(TempDirCase):
    """A real history (tests/tools/data/history-lab, docs/charts.md): 16 runs of WRITE
    bandwidth, 1 and 4 QPs of 4 KiB, 5 repetitions each, in the rxe lab VM; runs 11
    to 16 with two CPU hogs beside the client and server."""

    def test_the_hogs_are_found_where_they_started(self):
        unpack("history-lab", self.tmp)
        r = run_tool("history", self.tmp, "--json", "--metrics", "bytes_per_second")
        self.assertEqual(r.returncode, 0, r.stderr)
        found = json.loads(r.stdout)
        # Both regressions at run 11, and nothing else: the 4-QP point's last run, where
        # the hogs slowed it less, is one run and not a change point.
        self.assertEqual([(c["point"], c["kind"], c["run"], os.path.basename(c["file"])) for c in found],
                         [("write/bw/qps:1/size:4096/cq:4", "regression", 10, "run-11.json"),
                          ("write/bw/qps:4/size:4096/cq:16", "regression", 10, "run-11.json")])
        for c in found:
            self.assertLess(c["ratio"], 0.7, c)

        # A chart per point (PNG and SVG), change points marked; one offline page over them.
        html = self.path("out/history.html")
        r = run_tool("history", self.tmp, "--metrics", "bytes_per_second", "--charts", self.path("charts"),
                     "--report", html)
        self.assertEqual(r.returncode, 0, r.stderr)
        pngs = sorted(n for n in os.listdir(self.path("charts")) if n.endswith(".png"))
        self.assertEqual(len(pngs), 2, pngs)
        for png in pngs:
            with open(self.path("charts/" + png), "rb") as f:
                self.assertEqual(f.read(8), PNG_SIGNATURE)
            self.assertTrue(os.path.isfile(self.path("charts/" + png[:-4] + ".svg")))
            colours, not_background = colour_stats(self.path("charts/" + png))
            self.assertGreater(colours, 50, png)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text.count('src="data:image/png;base64,'), 2)
        self.assertIsNone(re.search(r'(src|href)="(https?:|//|file:)', text), "external resource in the page")
        for needle in ("16 runs, 2 change point(s)", "run-11.json", "regression", "762a323071e2"):
            self.assertIn(needle, text)
        self.assert_renders(html)


if __name__ == "__main__":
    unittest.main()
