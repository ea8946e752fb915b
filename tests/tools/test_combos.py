"""tools/combos without a device: its covering array holds every pair of values of
every two axes (over a small fake knob table, and over the built binary's real one),
the same seed gives the same array, and its oracle passes exact results and a
one-line refusal from the table and fails everything else."""

import copy
import json
import os
import subprocess
import sys
import unittest

from _util import tools_module, run_tool, find_binary

cb = tools_module("combos")

FAKE_KNOBS = [
    {"key": "op", "flag": "--op", "default": "send"},
    {"key": "mode", "flag": "--mode", "default": "bw"},
    {"key": "qps", "flag": "--qps", "default": 1},
    {"key": "srq", "flag": "--srq", "default": False},
    {"key": "hugepages", "flag": "--hugepages", "default": False},
    {"key": "brand_new", "flag": "--brand-new", "default": 4},
]
REFUSALS = [
    {"id": "srq-op", "reason": "srq: only SEND tests have receive queues to share; drop --srq or use --op send"},
    {"id": "ud-size", "reason": "size: {size} is over the UD limit of {mtu} bytes (the path MTU, --mtu): a UD "
                                "message is one packet; lower --size or raise --mtu"},
]


def covered(axes, rows):
    return set().union(*(cb.pairs_of(r) for r in rows))


class Array(unittest.TestCase):
    def test_fake_table_all_pairs_and_new_knob_joins(self):
        axes, notes = cb.axes_from(FAKE_KNOBS)
        keys = [a[0] for a in axes]
        self.assertIn("brand_new", keys)  # joined by itself, values from its default
        self.assertEqual(dict((a[0], a[2]) for a in axes)["brand_new"], ["4", "8"])
        self.assertNotIn("hugepages", keys)
        self.assertTrue(any("brand_new" in n for n in notes))
        self.assertIn("cm", keys)  # client options are axes too
        rows = cb.covering_array(axes, 7)
        self.assertEqual(covered(axes, rows), cb.all_pairs(axes))
        self.assertLess(len(rows), 40)

    def test_same_seed_same_array_other_seed_other(self):
        axes, _ = cb.axes_from(FAKE_KNOBS)
        self.assertEqual(cb.covering_array(axes, 3), cb.covering_array(axes, 3))
        self.assertNotEqual(cb.covering_array(axes, 3), cb.covering_array(axes, 4))

    def test_rows_that_run_are_preferred(self):
        axes, _ = cb.axes_from(FAKE_KNOBS)
        refs = [{"id": "srq-op", "reason": "x"}]
        runs = lambda row: cb.predict(cb.named(axes, row), refs) is None  # noqa: E731
        rows = cb.covering_array(axes, 1, runs)
        self.assertEqual(covered(axes, rows), cb.all_pairs(axes))
        refused = [r for r in rows if not runs(r)]
        # srq=1 meets four other ops: those pairs need refused rows, nothing else does
        self.assertGreaterEqual(len(refused), 1)
        self.assertLessEqual(len(refused), 4)

    def test_triple_rows_each_hold_an_uncovered_triple(self):
        import random
        axes, _ = cb.axes_from(FAKE_KNOBS)
        left, rng = cb.all_triples(axes), random.Random(5)
        for _ in range(10):
            row = cb.triple_row(axes, left, rng)
            new = cb.triples_of(row) & left
            self.assertTrue(new)
            left -= new

    def test_real_table_all_pairs(self):
        binary, why = find_binary()
        if binary is None:
            self.skipTest(why)
        knobs = json.loads(subprocess.run([binary, "help", "--knobs"], capture_output=True, text=True,
                                          timeout=60).stdout)
        refs = json.loads(subprocess.run([binary, "help", "--refusals"], capture_output=True, text=True,
                                         timeout=60).stdout)
        axes, _ = cb.axes_from(knobs)
        self.assertGreaterEqual(len(axes), 22)
        for rid in cb.PREDICT:
            self.assertIn(rid, [r["id"] for r in refs], f"combos.PREDICT names {rid}, which the table lacks")
        runs = lambda row: cb.predict(cb.named(axes, row), refs) is None  # noqa: E731
        rows = cb.covering_array(axes, 1, runs)
        self.assertEqual(covered(axes, rows), cb.all_pairs(axes))
        self.assertGreater(sum(map(runs, rows)), len(rows) // 2)  # most rows run, not refused
        # --rate is in the array, and some rows pace a point that runs
        keys = [a[0] for a in axes]
        self.assertIn("rate", keys)
        self.assertIn("arrivals", keys)
        paced = [r for r in rows if runs(r) and cb.named(axes, r)["rate"] != "none"]
        self.assertGreaterEqual(len(paced), 2)

    def test_paced_rows_the_table_refuses_are_foreseen(self):
        refs = [{"id": k, "reason": "x"} for k in cb.PREDICT]
        self.assertEqual(cb.predict({"rate": "5kpps", "mode": "lat"}, refs), "rate-lat")
        self.assertEqual(cb.predict({"rate": "5kpps", "post_list": "4", "tx_depth": "64"}, refs), "rate-post-list")
        self.assertIsNone(cb.predict({"rate": "5kpps", "bidir": "1"}, refs))  # each direction paced
        self.assertEqual(cb.predict({"arrivals": "poisson"}, refs), "arrivals-rate")
        self.assertIsNone(cb.predict({"rate": "5kpps", "arrivals": "poisson"}, refs))
        # a paced point signals every message: its CQ needs a CQE per send WR
        self.assertEqual(cb.predict({"rate": "5kpps", "op": "write", "cq_depth": "64", "tx_depth": "128"}, refs),
                         "cq-depth")
        self.assertIsNone(cb.predict({"op": "write", "cq_depth": "64", "tx_depth": "128"}, refs))

    def test_list_prints_the_array_without_a_device(self):
        binary, why = find_binary()
        if binary is None:
            self.skipTest(why)
        r = run_tool("combos", "--binary", binary, "--seed", "1", "--list")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("combos: seed 1:", r.stderr)
        self.assertGreater(len(r.stdout.splitlines()), 15)
        self.assertEqual(r.stdout, run_tool("combos", "--binary", binary, "--seed", "1", "--list").stdout)


def entry(**over):
    e = {"name": "send/bw/qps:3/size:64/cq:1584/threads:2", "run_type": "iteration", "messages": 120,
         "bytes": 7680, "seconds": 0.5, "bytes_per_second": 15360.0, "items_per_second": 240.0,
         "qp_messages_min": 20, "qp_messages_max": 20,
         "config": {"op": "send", "mode": "bw", "qps": 3, "size": 64, "threads": 2, "transport": "rc",
                    "bidir": False}}
    e.update(over)
    return e


HIST = {"points": {"send/bw/qps:3/size:64/cq:1584/threads:2": {
    "per_qp_messages": [[20] * 6], "per_thread": [{"messages": [60, 60]}]}}}
VALUES = {"op": "send", "mode": "bw", "qps": "3", "size": "64", "threads": "2", "transport": "rc", "bidir": "0"}


class Oracle(unittest.TestCase):
    def judge(self, code=0, err="", results=None, hist=None, values=None):
        return cb.judge(code, err, {"benchmarks": [entry()]} if results is None else results,
                        HIST if hist is None else hist, values or VALUES, 20, REFUSALS)

    def test_exact_results_pass(self):
        self.assertEqual(self.judge(), ("ran", ""))

    def test_wrong_counts_and_figures_fail(self):
        bad = {"messages": 119, "bytes": 7000, "qp_messages_min": 19, "bytes_per_second": 15000.0,
               "items_per_second": 241.0}
        for k, v in bad.items():
            with self.subTest(k):
                verdict, why = self.judge(results={"benchmarks": [entry(**{k: v})]})
                self.assertEqual(verdict, "failed")
                self.assertIn(k.split("_")[0], why)
        h = copy.deepcopy(HIST)
        h["points"][entry()["name"]]["per_thread"][0]["messages"] = [59, 61]
        self.assertEqual(self.judge(hist=h)[0], "failed")
        h["points"][entry()["name"]]["per_qp_messages"] = [[20] * 5 + [21]]
        self.assertIn("per-QP", self.judge(hist=h)[1])
        self.assertIn("asked 3", self.judge(results={"benchmarks": [entry(config=dict(
            entry()["config"], qps=2))]})[1])

    def test_ud_sent_is_received_plus_lost(self):
        ud = dict(VALUES, transport="ud")
        ok = entry(messages_sent=132, messages_received=132, messages_lost=0,
                   config=dict(entry()["config"], transport="ud"))
        self.assertEqual(self.judge(results={"benchmarks": [ok]}, values=ud), ("ran", ""))
        self.assertEqual(self.judge(results={"benchmarks": [dict(ok, messages_lost=1)]}, values=ud)[0], "failed")

    def test_ud_that_lost_datagrams_counts_the_windows_share_of_arrivals(self):
        ud = dict(VALUES, transport="ud")
        # 120 posted in the window, 130 of 132 arrived: round(120 x 130 / 132) = 118
        lossy = entry(messages_sent=132, messages_received=130, messages_lost=2, messages=118, bytes=118 * 64,
                      bytes_per_second=118 * 64 / 0.5, items_per_second=118 / 0.5,
                      config=dict(entry()["config"], transport="ud"))
        self.assertEqual(self.judge(results={"benchmarks": [lossy]}, values=ud), ("ran", ""))
        posted = dict(lossy, messages=120, bytes=120 * 64, bytes_per_second=120 * 64 / 0.5, items_per_second=240.0)
        verdict, why = self.judge(results={"benchmarks": [posted]}, values=ud)
        self.assertEqual(verdict, "failed")
        self.assertIn("share of the arrivals", why)

    def test_a_failed_points_own_error_is_named(self):
        failed = {"benchmarks": [entry(error_occurred=True, error_message="no completion for 10 s")]}
        self.assertEqual(self.judge(code=1, err="rdmasweep: 1 benchmark(s) run, 1 failed\n", results=failed),
                         ("failed", "exit 1: no completion for 10 s"))

    def test_failed_point_hang_and_crash_fail(self):
        self.assertEqual(self.judge(results={"benchmarks": [entry(error_occurred=True, error_message="x")]})[0],
                         "failed")
        self.assertEqual(self.judge(code=1, err="rdmasweep client: boom\n"), ("failed", "exit 1: rdmasweep client: boom"))
        self.assertEqual(self.judge(code=-11)[0], "failed")

    def test_refusal_from_the_table_in_one_line(self):
        line = "rdmasweep client: point send/bw/qps:1/size:1000/cq:528/mtu:512/transport:ud: size: 1000 is over the " \
               "UD limit of 512 bytes (the path MTU, --mtu): a UD message is one packet; lower --size or raise --mtu\n"
        self.assertEqual(self.judge(code=2, err=line, results={}), ("refused", "ud-size"))
        self.assertEqual(self.judge(code=2, err=line + "more\n", results={})[0], "failed")  # two lines
        self.assertEqual(self.judge(code=2, err="rdmasweep client: --inline-size: too big\n", results={})[0], "failed")
        self.assertEqual(self.judge(code=1, err=line, results={})[0], "failed")  # a refusal exits 2


if __name__ == "__main__":
    unittest.main()
