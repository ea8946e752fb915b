"""tools/plot's timeline chart: interval rates from the `timeline` that rdmasweep
records in FILE.hist.json (--interval), by the same rule as interval_min/max."""

import os

from _util import TempDirCase, load, run_tool, save, tools_module

tl = tools_module("timeline")

# 0.1 s intervals; the third holds a stall; the 20 ms after the last boundary (the
# drain after the deadline) is too short to count.
STALL = {"interval_s": 0.1, "t_s": [0.1, 0.2, 0.3, 0.4, 0.42], "messages": [1000, 2000, 2100, 3100, 3150]}


class IntervalRates(TempDirCase):
    def test_rates_per_interval_with_the_short_tail_left_out(self):
        rates = tl.interval_rates(STALL)
        self.assertEqual(len(rates), 4)
        for (t0, t1, r), want in zip(rates, (10000, 10000, 1000, 10000)):
            self.assertAlmostEqual(r, want, places=6)
        self.assertAlmostEqual(rates[2][0], 0.2)
        self.assertAlmostEqual(rates[2][1], 0.3)
        self.assertEqual(tl.interval_rates({"interval_s": 0.1, "t_s": [], "messages": []}), [])

    def test_plot_draws_the_points_that_recorded_a_timeline(self):
        src = self.copy_demo()
        hist = load("demo.hist.json")
        names = sorted(hist["points"])[:2]
        for n in names:
            hist["points"][n]["timeline"] = [STALL]
        save(hist, self.path("demo.hist.json"))
        r = run_tool("plot", src, "--out", self.path("charts"))
        self.assertEqual(r.returncode, 0, r.stderr)
        svg = self.path("charts/timeline.svg")
        self.assertTrue(os.path.isfile(self.path("charts/timeline.png")), r.stderr)
        with open(svg, encoding="utf-8") as f:
            text = f.read()
        for n in names:
            self.assertIn(n, text)
        self.assertIn("kmsg/s per interval", text)  # 1 to 10 k msg/s
        # --points narrows it; without any timeline the chart is skipped and said so.
        r = run_tool("plot", src, "--out", self.path("one"), "--points", "^" + names[0] + "$")
        with open(self.path("one/timeline.svg"), encoding="utf-8") as f:
            self.assertNotIn(names[1], f.read())
        r = run_tool("plot", self.copy_demo("plain"), "--out", self.path("none"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("chart skipped: timeline", r.stderr)
        self.assertFalse(os.path.exists(self.path("none/timeline.png")))
