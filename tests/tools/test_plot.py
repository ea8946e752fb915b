"""tools/plot on real result files: every chart is written and valid."""

import os
import unittest
import xml.etree.ElementTree as ET

from _util import DATA, PNG_SIGNATURE, TempDirCase, colour_stats, load, read_image, run_tool, save

SINGLE = ["bandwidth", "message_rate", "latency", "latency_hist", "latency_cdf"]
RATIOS = ["bandwidth_ratio", "message_rate_ratio", "latency_ratio"]


class PlotCase(TempDirCase):
    def assert_charts(self, out, names):
        for name in names:
            png, svg = os.path.join(out, name + ".png"), os.path.join(out, name + ".svg")
            self.assertTrue(os.path.isfile(png), f"{png} missing")
            self.assertTrue(os.path.isfile(svg), f"{svg} missing")
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), PNG_SIGNATURE, png)
            height, width = read_image(png).shape[:2]
            self.assertGreater(width * height, 200 * 200, png)
            # Drawn on: lines, text and anti-aliasing give many colours, a blank figure one.
            colours, not_background = colour_stats(png)
            self.assertGreater(colours, 100, f"{png} looks blank")
            self.assertGreater(not_background, 0.03, f"{png} is almost all background")
            root = ET.parse(svg).getroot()
            self.assertTrue(root.tag.endswith("svg"), svg)

    def assert_has(self, needle, text, what):
        self.assertTrue(needle in text, f"{needle!r} not in {what}")

    def svg_text(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def plot(self, *args):
        return run_tool("plot", *args, "--out", self.path("charts"))


class PlotSingleFile(PlotCase):
    def test_rich_sweep_all_charts(self):
        """Real 96-point sweep with a CQ depth axis and 3 repetitions."""
        rich = self.unpack_rich()
        r = self.plot(rich)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.path("charts")
        self.assert_charts(out, SINGLE + ["cq_depth"])
        for name in RATIOS:  # one file: nothing to divide by
            self.assertFalse(os.path.exists(os.path.join(out, name + ".png")))
        printed = r.stdout.split()
        self.assertIn(os.path.join(out, "cq_depth.svg"), printed)
        # axes carry units, sizes are on a log2 axis labelled 64..64K
        bw = self.svg_text(os.path.join(out, "bandwidth.svg"))
        for text in ("bandwidth (Gb/s)", "message size (bytes, log2)", "64K", "16 QPs"):
            self.assert_has(text, bw, "svg")
        cq = self.svg_text(os.path.join(out, "cq_depth.svg"))
        self.assert_has("CQ depth 64", cq, "svg")
        self.assert_has("CQ depth 1024", cq, "svg")
        lat = self.svg_text(os.path.join(out, "latency.svg"))
        for text in ("p50", "p99", "p99.9", "latency (µs, log)"):
            self.assert_has(text, lat, "svg")

    def test_demo_without_cq_axis_says_so(self):
        demo = self.copy_demo()
        r = self.plot(demo)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_charts(self.path("charts"), SINGLE)
        self.assertFalse(os.path.exists(self.path("charts/cq_depth.png")))
        self.assertIn("cq_depth", r.stderr)
        self.assertIn("single CQ depth", r.stderr)

    def test_port_counters_are_charted_per_point(self):
        doc = load("demo.json")
        for i, e in enumerate(doc["benchmarks"]):
            if not e.get("error_occurred"):
                e["retransmits"] = i  # a different count per point
        src = save(doc, self.path("counters.json"))
        r = self.plot(src)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_charts(self.path("charts"), ["counters"])
        self.assert_has("per 1,000 messages", self.svg_text(self.path("charts/counters.svg")), "counters.svg")
        r = self.plot(os.path.join(DATA, "demo.json"))
        self.assert_has("chart skipped: counters", r.stderr, "stderr without counters")

    def test_points_regex_selects_distribution_points(self):
        demo = self.copy_demo()
        r = self.plot(demo, "--points", "^read/lat/qps:1/")
        self.assertEqual(r.returncode, 0, r.stderr)
        hist = self.svg_text(self.path("charts/latency_hist.svg"))
        self.assert_has("read/lat/qps:1/size:64/cq:128", hist, "svg")
        self.assert_has("read/lat/qps:1/size:4096/cq:128", hist, "svg")
        self.assertFalse("send/lat/" in hist, "send/lat/ in latency_hist.svg")
        r = self.plot(demo, "--points", "^nothing")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("matches --points", r.stderr)

    def test_without_hist_file_skips_distributions(self):
        doc = load("demo.json")
        path = save(doc, self.path("nohist.json"))
        r = self.plot(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no nohist.hist.json", r.stderr)
        self.assertFalse(os.path.exists(self.path("charts/latency_hist.png")))
        self.assert_charts(self.path("charts"), ["bandwidth", "latency"])

    def test_failed_points_are_left_out_and_reported(self):
        doc = load("demo.json")
        for e in doc["benchmarks"]:
            if e["name"] == "write/bw/qps:4/size:4096/cq:16":
                e.update(error_occurred=True, error_message="timeout")
        r = self.plot(save(doc, self.path("failed.json")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 failed point(s) left out: write/bw/qps:4/size:4096/cq:16", r.stderr)


class PlotOverlay(PlotCase):
    def test_two_files_overlay_with_labels_and_ratios(self):
        a, b = self.copy_demo("a"), self.unpack_rich()
        r = self.plot(a, b, "--label", "quick run", "--label", "rich run")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.path("charts")
        self.assert_charts(out, SINGLE + ["bandwidth_ratio", "message_rate_ratio", "latency_ratio"])
        for name in ("bandwidth", "latency_cdf"):
            text = self.svg_text(os.path.join(out, name + ".svg"))
            self.assert_has("quick run", text, "svg")
            self.assert_has("rich run", text, "svg")
        self.assert_has("ratio to quick run", self.svg_text(os.path.join(out, "bandwidth_ratio.svg")), "svg")

    def test_default_labels_are_the_fabric(self):
        a, b = self.copy_demo("a"), self.copy_demo("b")
        r = self.plot(a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = self.svg_text(self.path("charts/bandwidth.svg"))
        self.assert_has("rxe0 (Ethernet) [a.json]", text, "svg")
        self.assert_has("rxe0 (Ethernet) [b.json]", text, "svg")


class PlotBadInput(PlotCase):
    def check_exit_2(self, *args, expect):
        r = self.plot(*args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(expect, r.stderr)

    def test_errors(self):
        demo = os.path.join(DATA, "demo.json")
        self.check_exit_2(self.path("missing.json"), expect="no such file")
        self.check_exit_2(os.path.join(DATA, "gbench_micro.json"), expect="no rdmasweep points")
        self.check_exit_2(demo, "--label", "a", "--label", "b", expect="2 --label options for 1 file(s)")
        self.check_exit_2(demo, "--points", "(", expect="bad regular expression")


if __name__ == "__main__":
    unittest.main()
