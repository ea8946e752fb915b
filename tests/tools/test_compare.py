"""tools/compare: verdicts, exit codes, thresholds, outputs, Mann-Whitney."""

import copy
import json
import os
import unittest

from _util import DATA, TempDirCase, load, run_tool, save, tool_script, with_reps

BW_POINT = "write/bw/qps:4/size:4096/cq:16"
LAT_POINT = "send/lat/qps:1/size:64/cq:516"


def read_json(path):
    with open(path) as f:
        return json.load(f)


def scaled(doc, point, metric, factor):
    doc = copy.deepcopy(doc)
    hit = 0
    for e in doc["benchmarks"]:
        if e["name"] == point:
            e[metric] *= factor
            hit += 1
    assert hit, point
    return doc


class CompareRdmasweep(TempDirCase):
    def setUp(self):
        super().setUp()
        self.demo = load("demo.json")
        self.old = save(self.demo, self.path("old.json"))

    def test_identical_files_pass(self):
        r = run_tool("compare", self.old, os.path.join(DATA, "demo.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 regressed", r.stdout)
        self.assertNotIn("improved ", r.stdout.split("\n")[1])
        self.assertEqual(r.stderr, "")

    def test_bandwidth_cut_20_percent_is_a_regression_naming_the_point(self):
        new = save(scaled(self.demo, BW_POINT, "bytes_per_second", 0.8), self.path("new.json"))
        r = run_tool("compare", self.old, new)
        self.assertEqual(r.returncode, 1)
        self.assertIn(BW_POINT, r.stderr)
        self.assertIn("bytes_per_second", r.stderr)
        self.assertIn("regression in 1 point(s)", r.stderr)
        row = [l for l in r.stdout.splitlines() if l.startswith(BW_POINT) and " bytes_per_second " in l][0]
        self.assertIn("-20.0%", row)
        self.assertIn("regressed", row)

    def test_bandwidth_up_20_percent_is_an_improvement(self):
        new = save(scaled(self.demo, BW_POINT, "bytes_per_second", 1.2), self.path("new.json"))
        r = run_tool("compare", self.old, new)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 improved", r.stdout)

    def test_latency_up_is_a_regression_down_is_not(self):
        worse = save(scaled(self.demo, LAT_POINT, "lat_p99_us", 1.5), self.path("worse.json"))
        better = save(scaled(self.demo, LAT_POINT, "lat_p99_us", 0.5), self.path("better.json"))
        self.assertEqual(run_tool("compare", self.old, worse).returncode, 1)
        self.assertEqual(run_tool("compare", self.old, better).returncode, 0)

    def test_threshold_override_and_config_file(self):
        new = save(scaled(self.demo, BW_POINT, "bytes_per_second", 0.8), self.path("new.json"))
        self.assertEqual(run_tool("compare", self.old, new, "--threshold", "bytes_per_second=25").returncode, 0)
        self.assertEqual(run_tool("compare", self.old, new, "--threshold", "25").returncode, 0)
        self.assertEqual(run_tool("compare", self.old, new, "--threshold", "lat_p99_us=25").returncode, 1)
        cfg = save({"default": 5, "metrics": {"bytes_per_second": 30}}, self.path("cfg.json"))
        self.assertEqual(run_tool("compare", self.old, new, "--config", cfg).returncode, 0)
        # the command line wins over the file
        self.assertEqual(run_tool("compare", self.old, new, "--config", cfg,
                                  "--threshold", "bytes_per_second=10").returncode, 1)
        ign = save({"ignore": ["bytes_per_second"]}, self.path("ign.json"))
        self.assertEqual(run_tool("compare", self.old, new, "--config", ign).returncode, 0)

    def test_metrics_restricts_the_comparison(self):
        new = save(scaled(self.demo, BW_POINT, "bytes_per_second", 0.8), self.path("new.json"))
        r = run_tool("compare", self.old, new, "--metrics", "lat_p50_us,lat_p99_us")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("bytes_per_second", r.stdout)
        self.assertEqual(run_tool("compare", self.old, new, "--metrics", "bytes_per_second").returncode, 1)

    def test_markdown_and_json_outputs(self):
        new = save(scaled(self.demo, BW_POINT, "bytes_per_second", 0.8), self.path("new.json"))
        md, js = self.path("out.md"), self.path("out.json")
        r = run_tool("compare", self.old, new, "--markdown", md, "--json", js)
        self.assertEqual(r.returncode, 1)
        doc = read_json(js)
        self.assertEqual(doc["regressed_points"], [BW_POINT])
        bad = [x for x in doc["rows"] if x["verdict"] == "regressed"]
        self.assertEqual({x["metric"] for x in bad}, {"bytes_per_second"})
        self.assertAlmostEqual(bad[0]["change_pct"], -20.0, places=6)
        with open(md) as f:
            text = f.read()
        self.assertIn("| point | metric |", text)
        self.assertIn(f"**Regressed:** `{BW_POINT}`", text)

    def test_port_counters_are_compared_only_when_asked_and_gate_on_zero(self):
        def with_retransmits(n):
            doc = copy.deepcopy(self.demo)
            for e in doc["benchmarks"]:
                if not e.get("error_occurred"):
                    e["retransmits"] = 0
            for e in doc["benchmarks"]:
                if e["name"] == BW_POINT:
                    e["retransmits"] = n
            return doc
        old = save(with_retransmits(0), self.path("old0.json"))
        new = save(with_retransmits(3), self.path("new3.json"))
        r = run_tool("compare", old, new)  # not a default metric: a clean fabric is all zeros
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("retransmits", r.stdout)
        r = run_tool("compare", old, new, "--threshold", "retransmits=0")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn(BW_POINT, r.stderr)
        self.assertIn("retransmits", r.stderr)
        r = run_tool("compare", old, old, "--threshold", "retransmits=0")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_points_in_one_file_only_are_listed(self):
        doc = copy.deepcopy(self.demo)
        doc["benchmarks"] = [e for e in doc["benchmarks"] if e["name"] != BW_POINT]
        extra = copy.deepcopy(doc["benchmarks"][0])
        extra["name"] = extra["run_name"] = "write/bw/qps:64/size:64/cq:256"
        doc["benchmarks"].append(extra)
        new = save(doc, self.path("new.json"))
        r = run_tool("compare", self.old, new)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"only in OLD: {BW_POINT}", r.stdout)
        self.assertIn("only in NEW: write/bw/qps:64/size:64/cq:256", r.stdout)
        r = run_tool("compare", self.old, new, "--strict")
        self.assertEqual(r.returncode, 1)
        self.assertIn(BW_POINT, r.stderr)

    def test_point_failing_in_new_is_a_regression(self):
        doc = copy.deepcopy(self.demo)
        for e in doc["benchmarks"]:
            if e["name"] == BW_POINT:
                e.update(error_occurred=True, error_message="QP went to error state")
        r = run_tool("compare", self.old, save(doc, self.path("new.json")))
        self.assertEqual(r.returncode, 1)
        self.assertIn(BW_POINT, r.stderr)
        self.assertIn("QP went to error state", r.stdout)

    def write_reps(self, old_vals, new_vals, new_errors=(), old_errors=()):
        """OLD and NEW with BW_POINT as repetitions; the runs at the indices in
        *_errors failed (Google Benchmark keeps a failed run's entry, flagged)."""
        tmpl = next(e for e in self.demo["benchmarks"] if e["name"] == BW_POINT)
        paths = []
        for side, vals, errors in (("old", old_vals, old_errors), ("new", new_vals, new_errors)):
            doc = copy.deepcopy(self.demo)
            doc["benchmarks"] = with_reps(tmpl, BW_POINT, {"bytes_per_second": vals})
            for i in errors:
                doc["benchmarks"][i] = {k: v for k, v in doc["benchmarks"][i].items()
                                        if k not in ("bytes_per_second", "items_per_second")}
                doc["benchmarks"][i].update(error_occurred=True, error_message="work completion error")
            paths.append(save(doc, self.path(side + ".json")))
        return paths

    def test_point_with_some_repetitions_failed_in_new_is_failed(self):
        # the two surviving runs match OLD; judged on them alone the point would pass
        old, new = self.write_reps([100, 100, 100], [100, 100, 100], new_errors=[1])
        r = run_tool("compare", old, new, "--json", self.path("o.json"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"{BW_POINT} (1/3 failed)", r.stderr)
        self.assertIn("--allow-partial", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        row = read_json(self.path("o.json"))["rows"][0]
        self.assertEqual((row["metric"], row["old"], row["new"], row["verdict"]),
                         ("status", "ok", "1/3 failed", "regressed"))
        self.assertIn("work completion error", row["note"])

    def test_allow_partial_judges_the_surviving_runs_and_says_so(self):
        old, new = self.write_reps([100, 100, 100], [100, 100, 100], new_errors=[1])
        r = run_tool("compare", old, new, "--allow-partial", "--metrics", "bytes_per_second",
                     "--json", self.path("o.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        row = read_json(self.path("o.json"))["rows"][0]
        self.assertEqual((row["verdict"], row["new_reps"]), ("same", 2))
        self.assertIn("NEW 1/3 failed", row["note"])
        # and a real regression in the survivors is still one
        old, new = self.write_reps([100, 100, 100], [50, 50, 50], new_errors=[0])
        self.assertEqual(run_tool("compare", old, new, "--allow-partial").returncode, 1)

    def test_partial_failure_only_in_old_is_not_a_regression(self):
        old, new = self.write_reps([100, 100, 100], [100, 100, 100], old_errors=[2])
        r = run_tool("compare", old, new, "--json", self.path("o.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        row = read_json(self.path("o.json"))["rows"][0]
        self.assertEqual((row["old"], row["new"], row["verdict"]), ("1/3 failed", "ok", "improved"))


class CompareBadInput(TempDirCase):
    def check_exit_2(self, *args, expect):
        r = run_tool("compare", *args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(expect, r.stderr)
        self.assertTrue(r.stderr.startswith("compare: "))

    def test_missing_file(self):
        self.check_exit_2(os.path.join(DATA, "demo.json"), self.path("nope.json"), expect="no such file")

    def test_invalid_json(self):
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write('{"benchmarks": [')
        self.check_exit_2(bad, os.path.join(DATA, "demo.json"), expect="not valid JSON")

    def test_not_a_results_file(self):
        other = save({"context": {}, "results": []}, self.path("other.json"))
        self.check_exit_2(os.path.join(DATA, "demo.json"), other, expect='no "benchmarks" list')

    def test_no_common_points(self):
        doc = load("gbench_micro.json")
        for e in doc["benchmarks"]:
            e["name"] = e["run_name"] = "BM_Other_" + e["name"]
        self.check_exit_2(os.path.join(DATA, "gbench_micro.json"), save(doc, self.path("other.json")),
                          expect="no common points")

    def test_rdmasweep_against_plain_google_benchmark_is_refused(self):
        demo, micro = os.path.join(DATA, "demo.json"), os.path.join(DATA, "gbench_micro.json")
        self.check_exit_2(demo, micro, expect="is an rdmasweep results file but")
        self.check_exit_2(micro, demo, expect="is a plain Google Benchmark file but")
        # with points in common too: not silently judged on real_time and cpu_time
        doc = load("demo.json")
        doc["context"] = {}
        doc["benchmarks"].append(dict(doc["benchmarks"][0], name="BM_Other", run_name="BM_Other"))
        self.check_exit_2(demo, save(doc, self.path("plain.json")), expect="compare two files of the same kind")

    def test_bad_options(self):
        demo = os.path.join(DATA, "demo.json")
        self.check_exit_2(demo, demo, "--threshold", "lat_p99_us=x", expect="--threshold")
        self.check_exit_2(demo, demo, "--metrics", "bogus", expect="unknown metric 'bogus'")
        self.check_exit_2(demo, demo, "--alpha", "2", expect="alpha")


class ComparePlainGoogleBenchmark(TempDirCase):
    """gbench_micro.json is real output of build/bench/rdmasweep_micro, 5 repetitions."""

    def setUp(self):
        super().setUp()
        self.doc = load("gbench_micro.json")
        self.old = os.path.join(DATA, "gbench_micro.json")

    def test_identical(self):
        r = run_tool("compare", self.old, self.old)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("real_time", r.stdout)
        self.assertIn("cpu_time", r.stdout)
        self.assertNotIn("lat_p99_us", r.stdout)

    def test_slower_real_time_is_a_regression(self):
        doc = copy.deepcopy(self.doc)
        for e in doc["benchmarks"]:
            if e["run_name"] == "BM_HistogramRecord":
                e["real_time"] *= 2
                e["cpu_time"] *= 2
        r = run_tool("compare", self.old, save(doc, self.path("new.json")))
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("BM_HistogramRecord (real_time, cpu_time", r.stderr)

    def test_time_units_are_normalised(self):
        doc = copy.deepcopy(self.doc)
        for e in doc["benchmarks"]:  # same times, expressed in microseconds
            if "real_time" in e and e.get("time_unit") == "ns":
                e["real_time"] /= 1000
                e["cpu_time"] /= 1000
                e["time_unit"] = "us"
        r = run_tool("compare", self.old, save(doc, self.path("new.json")), "--metrics", "real_time,cpu_time")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"\b0 regressed, 0 improved, 0 noise")


class MannWhitney(TempDirCase):
    def setUp(self):
        super().setUp()
        self.cmp = tool_script("compare")

    def test_p_values(self):
        mw = self.cmp.mann_whitney
        # two-sided: exact without ties (1..5 vs 6..10: 2 orderings of C(10,5) = 252 as
        # extreme), normal approximation with continuity correction with ties
        self.assertAlmostEqual(mw([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 2 / 252, places=12)
        self.assertAlmostEqual(mw([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]), 0.6904761904761905, places=12)
        self.assertAlmostEqual(mw([1, 2, 3], [4, 5, 6]), 0.1, places=12)
        self.assertAlmostEqual(mw([1, 2, 2, 3, 4], [3, 4, 5, 5, 6]), 0.03445, places=4)  # ties
        self.assertEqual(mw([5, 5, 5], [5, 5, 5]), 1.0)

    def write_pair(self, old_vals, new_vals):
        demo = load("demo.json")
        tmpl = next(e for e in demo["benchmarks"] if e["name"] == BW_POINT)
        docs = []
        for vals in (old_vals, new_vals):
            d = copy.deepcopy(demo)
            d["benchmarks"] = with_reps(tmpl, BW_POINT, {"bytes_per_second": vals})
            docs.append(d)
        return (save(docs[0], self.path("old.json")), save(docs[1], self.path("new.json")))

    def test_noisy_repetitions_are_not_a_regression(self):
        # medians 100 -> 90 (-10%, beyond the 5% threshold) but the runs overlap
        old, new = self.write_pair([100, 130, 80, 120, 95], [90, 125, 70, 110, 85])
        r = run_tool("compare", old, new, "--metrics", "bytes_per_second", "--json", self.path("o.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        row = read_json(self.path("o.json"))["rows"][0]
        self.assertEqual(row["verdict"], "noise")
        self.assertLess(row["change_pct"], -5)
        self.assertGreater(row["p_value"], 0.05)

    def test_clear_shift_is_a_regression(self):
        old, new = self.write_pair([100, 101, 99, 100, 102], [80, 81, 79, 80, 82])
        r = run_tool("compare", old, new, "--metrics", "bytes_per_second", "--json", self.path("o.json"))
        self.assertEqual(r.returncode, 1, r.stdout)
        row = read_json(self.path("o.json"))["rows"][0]
        self.assertEqual(row["verdict"], "regressed")
        self.assertLess(row["p_value"], 0.05)

    def test_three_runs_fall_back_to_overlap(self):
        # 3 vs 3 cannot reach p < 0.05, so separation of the ranges decides
        old, new = self.write_pair([100, 102, 98], [80, 105, 79])
        self.assertEqual(run_tool("compare", old, new, "--metrics", "bytes_per_second").returncode, 0)
        old, new = self.write_pair([100, 102, 98], [80, 81, 79])
        self.assertEqual(run_tool("compare", old, new, "--metrics", "bytes_per_second").returncode, 1)

    def test_best_statistic_ignores_a_slow_outlier_run(self):
        # one run of NEW is as fast as OLD, the others were disturbed
        old, new = self.write_pair([100, 101, 99, 100, 102], [100, 60, 55, 58, 57])
        args = ("--metrics", "bytes_per_second")
        self.assertEqual(run_tool("compare", old, new, *args).returncode, 1)
        self.assertEqual(run_tool("compare", old, new, *args, "--statistic", "best").returncode, 0)


if __name__ == "__main__":
    unittest.main()
