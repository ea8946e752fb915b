"""tools/ratio-gate: CI's performance gate judges rdmasweep against perftest measured in
the same run, against the committed ratio, never an absolute figure."""

import json
import os
import tempfile
import unittest

from _util import run_tool, tool_script


def run_file(rows, p=0.008):
    """A tools/vs-perftest --json file with these (point, metric, ratio, better) rows, each
    with Mann-Whitney p `p` (0.008: five rounds each, all on one side)."""
    return {"device": "rxe0", "rounds": 5, "tables": {"same": [
        {"point": pt, "metric": m, "ratio": r, "better": b, "perftest": 1.0, "rdmasweep": r, "p": p}
        for pt, m, r, b in rows]}}


BASE_ROWS = [("write/bw/qps:1/size:64", "Mmsg/s", 1.0, "higher"), ("write/bw/qps:1/size:64", "Gb/s", 1.0, "higher"),
             ("send/lat/qps:1/size:64", "p50 us", 1.1, "lower"), ("send/lat/qps:1/size:64", "min us", 1.0, "lower")]


class RatioGate(unittest.TestCase):
    def setUp(self):
        self.gate = tool_script("ratio-gate")
        self.base = self.gate.baseline_from(run_file(BASE_ROWS))

    def verdicts(self, rows, p=0.008):
        got, failed = self.gate.judge(self.base, run_file(rows, p))
        return {(pt, m): v for pt, m, _, _, _, v in got}, failed

    def test_the_baseline_keeps_a_rate_and_a_median_latency(self):
        self.assertEqual(self.base["ratios"], {"write/bw/qps:1/size:64": {"Mmsg/s": {"ratio": 1.0, "better": "higher"}},
                                               "send/lat/qps:1/size:64": {"p50 us": {"ratio": 1.1, "better": "lower"}}})

    def test_a_host_that_slows_both_tools_alike_passes(self):
        # Absolute figures 100x worse on both sides leave the ratios where they were.
        v, failed = self.verdicts([("write/bw/qps:1/size:64", "Mmsg/s", 0.95, "higher"),
                                   ("send/lat/qps:1/size:64", "p50 us", 1.3, "lower")])
        self.assertFalse(failed, v)

    def test_rdmasweep_falling_behind_fails_in_each_direction(self):
        v, failed = self.verdicts([("write/bw/qps:1/size:64", "Mmsg/s", 0.69, "higher"),
                                   ("send/lat/qps:1/size:64", "p50 us", 1.1, "lower")])
        self.assertTrue(failed)
        self.assertEqual(v[("write/bw/qps:1/size:64", "Mmsg/s")], "worse")
        v, failed = self.verdicts([("write/bw/qps:1/size:64", "Mmsg/s", 1.0, "higher"),
                                   ("send/lat/qps:1/size:64", "p50 us", 1.1 * 1.5 + 0.01, "lower")])
        self.assertTrue(failed)
        self.assertEqual(v[("send/lat/qps:1/size:64", "p50 us")], "worse")

    def test_past_the_bound_on_rounds_that_do_not_differ_is_noise_and_passes(self):
        # The CI run that failed this gate by chance: both tools' rounds swung alike.
        rows = [("write/bw/qps:1/size:64", "Mmsg/s", 0.69, "higher"), ("send/lat/qps:1/size:64", "p50 us", 1.1, "lower")]
        v, failed = self.verdicts(rows, p=0.9)
        self.assertFalse(failed, v)
        self.assertEqual(v[("write/bw/qps:1/size:64", "Mmsg/s")], "noise (p 0.9)")
        # Just significant, and a row without a p (too few rounds): judged on the ratio.
        self.assertEqual(self.verdicts(rows, p=0.049)[0][("write/bw/qps:1/size:64", "Mmsg/s")], "worse")
        self.assertTrue(self.verdicts(rows, p=None)[1])
        # Within the bound, p does not matter.
        self.assertFalse(self.verdicts([("write/bw/qps:1/size:64", "Mmsg/s", 0.95, "higher"),
                                        ("send/lat/qps:1/size:64", "p50 us", 1.1, "lower")], p=0.001)[1])

    def test_a_point_the_run_lacks_fails(self):
        v, failed = self.verdicts([("write/bw/qps:1/size:64", "Mmsg/s", 1.0, "higher")])
        self.assertTrue(failed)
        self.assertEqual(v[("send/lat/qps:1/size:64", "p50 us")], "missing")

    def test_the_command_writes_a_baseline_that_its_own_run_passes_and_fails_a_worse_one(self):
        with tempfile.TemporaryDirectory() as d:
            new, base = os.path.join(d, "new.json"), os.path.join(d, "base.json")
            with open(new, "w") as f:
                json.dump(run_file(BASE_ROWS), f)
            self.assertEqual(run_tool("ratio-gate", "--write", base, new).returncode, 0)
            r = run_tool("ratio-gate", base, new)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(new, "w") as f:
                json.dump(run_file([("write/bw/qps:1/size:64", "Mmsg/s", 0.5, "higher"),
                                    ("send/lat/qps:1/size:64", "p50 us", 1.1, "lower")]), f)
            r = run_tool("ratio-gate", base, new)
            self.assertEqual(r.returncode, 1)
            self.assertRegex(r.stdout, r"write/bw/qps:1/size:64 +Mmsg/s +1\.000 +0\.500 +0\.700 +worse")
            self.assertEqual(run_tool("ratio-gate", base, os.path.join(d, "none.json")).returncode, 2)


if __name__ == "__main__":
    unittest.main()
