"""tools/plot's isolation chart: each point of a `client --beside` run alone and beside
its background, from tests/tools/data/beside.json (a real run: Soft-RoCE in one lab VM,
64 B WRITE latency and bandwidth, each beside 8 QPs of 64 KiB WRITE, 3 repetitions)."""

import os

from _util import DATA, TempDirCase, load, run_tool, save, tools_module

rr = tools_module("results")
SAMPLE = os.path.join(DATA, "beside.json")
SKIP = "chart skipped: isolation: no point ran --beside a background"


class IsolationPairs(TempDirCase):
    def test_each_point_pairs_with_its_beside_row_which_other_charts_leave_out(self):
        rf = rr.load(SAMPLE)
        pairs = rf.isolation_pairs()
        self.assertEqual([(a.name, b.name) for a, b in pairs],
                         [("write/lat/qps:1/size:64/cq:4", "write/lat/qps:1/size:64/cq:4/beside"),
                          ("write/bw/qps:1/size:64/cq:4", "write/bw/qps:1/size:64/cq:4/beside")])
        for _a, b in pairs:
            self.assertEqual(b.background, "write/bw/qps:8/size:65536/cq:32")
        self.assertEqual(sorted(p.name for p in rf.ok_points()), sorted(a.name for a, _b in pairs))

    def test_a_failed_beside_row_or_point_makes_no_pair(self):
        data = load("beside.json")
        for e in data["benchmarks"]:
            if e["name"].startswith("write/bw/qps:1/size:64/cq:4/beside"):
                e.clear()
                e.update({"name": "write/bw/qps:1/size:64/cq:4/beside", "run_name": "write/bw/qps:1/size:64/cq:4/beside",
                          "run_type": "iteration", "error_occurred": True, "error_message": "background failed",
                          "background": "write/bw/qps:8/size:65536/cq:32"})
        rf = rr.load(save(data, self.path("failed.json")))
        self.assertEqual([a.name for a, _b in rf.isolation_pairs()], ["write/lat/qps:1/size:64/cq:4"])


class IsolationChart(TempDirCase):
    def test_drawn_with_each_ratio_over_its_bar(self):
        r = run_tool("plot", SAMPLE, "--out", self.path("charts"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(SKIP, r.stderr)
        with open(self.path("charts/isolation.svg"), encoding="utf-8") as f:
            text = f.read()
        for needle in ("latency points", "bandwidth points", "WRITE 64 B · 1 QP", "p50 alone", "p99 beside",
                       "message rate beside", "write/bw/qps:8/size:65536/cq:32"):
            self.assertTrue(needle in text, needle)
        rf = rr.load(SAMPLE)
        for alone, beside in rf.isolation_pairs():
            for metric in ("lat_p50_us", "lat_p99_us") if alone.params["mode"] == "lat" else ("items_per_second",):
                ratio = f"{beside.value(metric) / alone.value(metric):.2f}x"
                self.assertTrue(ratio in text, f"{metric} {ratio}")

    def test_skipped_without_beside_rows_and_in_the_report_with_them(self):
        r = run_tool("plot", os.path.join(DATA, "demo.json"), "--out", self.path("none"))
        self.assertIn(SKIP, r.stderr)
        self.assertFalse(os.path.exists(self.path("none/isolation.png")))
        html = self.path("report/index.html")
        r = run_tool("plot", SAMPLE, "--out", self.path("charts"), "--report", html)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(html, encoding="utf-8") as f:
            self.assertIn("<code>isolation.png</code>", f.read())
        self.assert_renders(html)


class MeshVictim(TempDirCase):
    """tests/tools/data/mesh-victim.json: a real `mesh --pattern victim` run (3 ranks in
    the rxe lab VM, 64 B WRITE latency and bandwidth from rank 1 to 0, beside rank 2's
    8 QPs of 64 KiB WRITE onto rank 0, 3 repetitions)."""

    def test_its_heatmaps_and_the_isolation_chart_of_the_victims_two_entries(self):
        path = os.path.join(DATA, "mesh-victim.json")
        rf = rr.load(path)
        self.assertEqual([(a.name, b.name) for a, b in rf.isolation_pairs()],
                         [("mesh/victim/write/lat/qps:1/size:64/cq:4/src:1/dst:0",
                           "mesh/victim/write/lat/qps:1/size:64/cq:4/src:1/dst:0/beside"),
                          ("mesh/victim/write/bw/qps:1/size:64/cq:4/src:1/dst:0",
                           "mesh/victim/write/bw/qps:1/size:64/cq:4/src:1/dst:0/beside")])
        r = run_tool("plot", path, "--out", self.path("charts"))
        self.assertEqual(r.returncode, 0, r.stderr)
        made = r.stdout.split()
        self.assertIn(self.path("charts/isolation.png"), made)
        self.assertIn(self.path("charts/mesh-write_lat_qps1_size64_cq4_beside.png"), made)
        with open(self.path("charts/isolation.svg"), encoding="utf-8") as f:
            text = f.read()
        alone, beside = rf.isolation_pairs()[0]
        ratio = f"{beside.value('lat_p99_us') / alone.value('lat_p99_us'):.2f}x"
        self.assertTrue(ratio in text, ratio)
