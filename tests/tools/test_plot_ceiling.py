"""tools/plot's ceiling chart, from tests/tools/data/ceiling.json (a real
`tools/ceiling --rounds 2 --iters 20000 --only ' s8 ' --json` run on the 2-core build
machine: FAA and WRITE of 8 B, 1 QP, on the null device)."""

import json
import os

from _util import DATA, TempDirCase, run_tool, tools_module

cc = tools_module("ceiling_charts")
SAMPLE = os.path.join(DATA, "ceiling.json")


class CeilingChart(TempDirCase):
    def test_each_point_with_the_three_loops_and_each_tools_cost_above_the_bare_one(self):
        r = run_tool("plot", SAMPLE, "--out", self.path("charts"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), [self.path("charts/ceiling.png"), self.path("charts/ceiling.svg")])
        with open(self.path("charts/ceiling.svg"), encoding="utf-8") as f:
            text = f.read()
        for needle in ("faa q1 s8 l1 Q32 I0 T1", "write q1 s8 l1 Q32 I0 T1", "bare loop (the limit)", "perftest",
                       "rdmasweep", "ns per message above the bare loop", "2 interleaved rounds"):
            self.assertTrue(needle in text, needle)

    def test_the_cost_above_the_bare_loop_is_the_difference_of_the_time_per_message(self):
        with open(SAMPLE) as f:
            doc = json.load(f)
        p = doc["points"][1]
        rate = p["rate_mmsg"]
        self.assertAlmostEqual(cc.above_bare(p, "rdmasweep"), 1e3 / rate["rdmasweep"] - 1e3 / rate["bare"])
        self.assertIsNone(cc.above_bare({"rate_mmsg": {"bare": 100.0, "rdmasweep": None}}, "rdmasweep"))

    def test_an_ordinary_results_file_is_not_taken_for_one(self):
        with open(os.path.join(DATA, "demo.json")) as f:
            self.assertFalse(cc.is_ceiling(json.load(f)))
        r = run_tool("plot", os.path.join(DATA, "demo.json"), "--out", self.path("demo"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(self.path("demo/ceiling.png")))
