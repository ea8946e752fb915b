"""tools/test --repeat's count (tools/rdmasweep_py/tally.py) and tools/test's own
argument checks: each runner's test lines are read, a test that failed in one run of
five shows 4 of 5, and a stage with no test lines counts as one test."""

import os
import subprocess
import tempfile
import unittest

from _util import ROOT, tools_module

tally = tools_module("tally")

CTEST = """\
      Start  1: Channel.Basics
 1/3 Test  #1: Channel.Basics ...................   Passed    0.01 sec
 2/3 Test  #2: Provider.SendNeverOutrunsTheReceiver ***Failed   12.30 sec
 3/3 Test  #3: Ud.Lost ..........................***Timeout 900.00 sec
"""
UNITTEST = """\
test_a_tie (test_history.Changes.test_a_tie) ... ok
test_drawn (test_plot.Plot.test_drawn) ... FAIL
test_browser (test_report.Report.test_browser) ... skipped 'no chromium'
"""
DRIVER = """\
b| ok ops x modes x qps 1,4,16
b| FAIL link down not ridden out: client exit 0 with the default --qp-timeout 14
b| ok netem loss1 (failed cleanly: ERROR ...)
b| skip UD on siw: iWARP has no UD QPs
ok a slow link is found (netem 10 ms on rxe-c): every flow through rxe-c slower
"""


class Tally(unittest.TestCase):
    def test_each_runner_s_lines_name_their_tests(self):
        self.assertEqual(tally.tests_in(CTEST), {"Channel.Basics": "pass", "Provider.SendNeverOutrunsTheReceiver": "fail",
                                                 "Ud.Lost": "fail"})
        self.assertEqual(tally.tests_in(UNITTEST), {"test_history.Changes.test_a_tie": "pass",
                                                    "test_plot.Plot.test_drawn": "fail",
                                                    "test_report.Report.test_browser": "skip"})
        self.assertEqual(tally.tests_in(DRIVER), {"ops x modes x qps 1,4,16": "pass", "link down not ridden out": "fail",
                                                  "netem loss1": "pass", "UD": "skip", "a slow link is found": "pass"})

    def test_ok_and_fail_lines_of_one_test_count_as_one(self):
        runs = [("4b", 0, "b| ok link down not ridden out: 3 s with the default --qp-timeout 14 (exit 1)")] * 4
        runs.append(("4b", 1, "b| FAIL link down not ridden out: client exit 0 with the default --qp-timeout 14"))
        s = tally.tally(runs)["4b"]
        self.assertEqual((s["runs"], s["passed"]), (5, 4))
        self.assertEqual(s["tests"], {"link down not ridden out": [4, 5, 0]})
        text = tally.render(tally.tally(runs))
        self.assertIn("4b: 4 of 5 run(s) passed", text)
        self.assertIn("4 of 5 passed: link down not ridden out", text)
        self.assertIn("0 test(s) passed (or skipped) in every run of the 5", text)

    def test_a_stage_without_test_lines_is_one_test(self):
        s = tally.tally([("5", 0, "gate: ok\n"), ("5", 3, "gate: slower\n")])["5"]
        self.assertEqual(s["tests"], {"5": [1, 2, 0]})

    def test_logs_directory_is_read_run_by_run(self):
        with tempfile.TemporaryDirectory() as d:
            for run, (rc, text) in enumerate([(0, "ok x\n"), (1, "FAIL x: no\n")], 1):
                with open(os.path.join(d, f"4f.{run}.log"), "w") as f:
                    f.write(text)
                with open(os.path.join(d, f"4f.{run}.rc"), "w") as f:
                    f.write(f"{rc}\n")
            out = subprocess.run(["python3", os.path.join(ROOT, "tools/rdmasweep_py/tally.py"), d],
                                 capture_output=True, text=True, check=True).stdout
        self.assertIn("stage 4f: 1 of 2 run(s) passed", out)
        self.assertIn("1 of 2 passed: x", out)


class TestCommand(unittest.TestCase):
    def run_test(self, *args):
        return subprocess.run([os.path.join(ROOT, "tools/test"), *args], capture_output=True, text=True, timeout=60)

    def test_a_bad_stage_or_count_is_one_line_before_anything_runs(self):
        for args, said in ((["nosuch"], "no stage 'nosuch'"), (["--repeat", "0", "unit"], "--repeat takes a count"),
                           (["--fast"], "unknown option '--fast'")):
            r = self.run_test(*args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(said, r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertNotIn("build", r.stderr)


if __name__ == "__main__":
    unittest.main()
