"""tools/plot: per-QP charts (--qp-bars), fairness vs QP count, CPU cost, and SRQ /
knob-suffix points kept apart, on a real QP-scaling sweep."""

import os
import unittest

from _util import TempDirCase, load, save, tools_module
from test_plot import PlotCase

rr = tools_module("results")
try:
    charts = tools_module("charts")  # needs matplotlib (run the tests with /usr/bin/python3)
except ImportError:  # pragma: no cover
    charts = None

BARS_64 = "qp-bars-send_bw_qps64_size64_cq16640_tx64_rx256_signal16"
BARS_64_SRQ = "qp-bars-send_bw_qps64_size64_cq512_tx64_rx256_signal16_srq"
BARS_1024 = "qp-bars-send_bw_qps1024_size64_cq20480_tx64_rx16_signal16"


class ParseNames(unittest.TestCase):
    def test_srq_and_knob_suffixes(self):
        p = rr.parse_name("send/bw/qps:1024/size:64/cq:20480/tx:64/rx:16/signal:16/srq")
        self.assertEqual(p["qps"], 1024)
        self.assertTrue(p["srq"])
        self.assertEqual(p["knobs"], {"tx": 64, "rx": 16, "signal": 16})
        self.assertFalse(rr.parse_name("write/bw/qps:1/size:64/cq:4/poll:1")["srq"])
        self.assertIsNone(rr.parse_name("send/bw/qps:1/size:64/cq:4/srq/tx:4"))  # flags come last
        p = rr.parse_name("send/bw/qps:4/size:64/cq:16/poll:1/srq/events")  # another on/off flag
        self.assertTrue(p["srq"])
        self.assertEqual(p["knobs"], {"poll": 1, "events": True})

    def test_knob_diff_uses_defaults(self):
        self.assertEqual(rr.knob_diff({"tx": 64, "rx": 16}, {"tx": 64, "rx": 256}), "rx:16")
        self.assertEqual(rr.knob_diff({}, {"poll": 1}), "poll:16")
        self.assertEqual(rr.knob_diff({"tx": 128}, {}), "")
        self.assertEqual(rr.knob_diff({"events": True}, {}), "events")
        self.assertEqual(rr.knob_diff({}, {"events": True}), "no events")

    def test_jain(self):
        self.assertEqual(rr.jain([5, 5, 5]), 1.0)
        self.assertAlmostEqual(rr.jain([1, 0, 0, 0]), 0.25)
        self.assertIsNone(rr.jain([0, 0]))


@unittest.skipIf(charts is None, "needs matplotlib")
class Grouping(TempDirCase):
    def test_srq_points_are_their_own_series(self):
        rf = rr.load(self.unpack_qp_scaling())
        s = charts.Series(rf, "rxe")
        self.assertEqual(s.hidden, 0)
        self.assertEqual(s.variants, {})
        for qps in (1, 4, 16, 64, 256, 1024):
            plain = s.main[charts.Key("send", "bw", qps, 64, False)]
            srq = s.main[charts.Key("send", "bw", qps, 64, True)]
            self.assertNotEqual(plain.name, srq.name)
            self.assertTrue(srq.name.endswith("/srq"), srq.name)
            self.assertFalse(plain.name.endswith("/srq"), plain.name)
        # queues shrunk by --cq-policy cap: on the line, labelled with what differs
        self.assertEqual(s.adjusted, {charts.Key("send", "bw", 256, 64, False): "rx:64",
                                      charts.Key("send", "bw", 1024, 64, False): "rx:16"})
        self.assertNotEqual(charts.series_label("64 B", False), charts.series_label("64 B", True))
        self.assertEqual(charts.series_label("4 QPs", True, "poll:1"), "4 QPs SRQ · poll:1")

    def test_knob_variants_do_not_collapse(self):
        doc = load("demo.json")
        extra = []
        for e in doc["benchmarks"]:
            if e["run_name"].startswith("write/bw/"):
                v = dict(e, name=e["name"] + "/poll:1", run_name=e["run_name"] + "/poll:1")
                v["items_per_second"] = e["items_per_second"] / 2
                extra.append(v)
        doc["benchmarks"] += extra
        rf = rr.load(save(doc, self.path("knobs.json")), with_hist=False)
        s = charts.Series(rf, "x")
        key = charts.Key("write", "bw", 4, 64, False)
        self.assertEqual(s.main[key].name, "write/bw/qps:4/size:64/cq:16")
        self.assertEqual([(v, p.name) for v, p in s.variants[key]], [("poll:1", "write/bw/qps:4/size:64/cq:16/poll:1")])
        drawn = [(k, v) for k, _p, v, _a in s.plotted()]
        self.assertEqual(len(drawn), len(set(drawn)))
        self.assertEqual(s.hidden, 0)


class QpCharts(PlotCase):
    def test_qp_scaling_charts(self):
        qps = self.unpack_qp_scaling()
        r = self.plot(qps, "--qp-bars", r"qps:(64|1024)/")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.path("charts")
        self.assert_charts(out, ["message_rate", "bandwidth", "fairness", "cpu_cost", BARS_64, BARS_64_SRQ, BARS_1024])
        mr = self.svg_text(os.path.join(out, "message_rate.svg"))
        for text in ("64 B SRQ", "64 B", "QPs (log2)", "message rate (kmsg/s)", "1024", "rx:16", "rx:64"):
            self.assert_has(text, mr, "message_rate.svg")
        fair = self.svg_text(os.path.join(out, "fairness.svg"))
        for text in ("Jain", "max / min messages per QP", "SEND 64 B SRQ", "QPs (log2)"):
            self.assert_has(text, fair, "fairness.svg")
        self.assertNotIn("fixed-count", fair)  # a --duration run
        cpu = self.svg_text(os.path.join(out, "cpu_cost.svg"))
        self.assert_has("CPU time per message (µs)", cpu, "cpu_cost.svg")
        bars = self.svg_text(os.path.join(out, BARS_64 + ".svg"))
        for text in ("64 QPs", "min 512", "max 576", "Jain 0.9993", "QP (index in creation order)"):
            self.assert_has(text, bars, BARS_64)
        big = self.svg_text(os.path.join(out, BARS_1024 + ".svg"))
        for text in ("1024 QPs", "Jain 0.8941", "busiest first", "distribution over QPs"):
            self.assert_has(text, big, BARS_1024)

    def test_qp_bars_cap_and_no_match(self):
        qps = self.unpack_qp_scaling()
        r = self.plot(qps, "--qp-bars", "send/bw")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len([f for f in r.stdout.split() if "qp-bars-" in f and f.endswith(".png")]), 6)
        self.assertIn("6 more matching point(s) left out (at most 6)", r.stderr)
        r = self.plot(qps, "--qp-bars", "^nothing")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no point with per-QP counts matches --qp-bars", r.stderr)
        r = self.plot(qps, "--qp-bars", "(")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--qp-bars: bad regular expression", r.stderr)

    def test_per_qp_latency_panel_and_fairness_from_hist(self):
        """demo.json predates the qp_jain_index counter: fairness comes from the
        per-QP counts in its .hist.json; a lat point with per_qp_latency gets a panel."""
        demo = self.copy_demo()
        hist = load("demo.hist.json")
        name = "send/lat/qps:4/size:64/cq:2064"
        hist["points"][name]["per_qp_latency"] = [
            {"min_ns": [9000, 9100, 9200, 9300], "max_ns": [30000, 31000, 32000, 90000],
             "mean_ns": [12000, 12500, 13000, 14000]}]
        save(hist, self.path("demo.hist.json"))
        r = self.plot(demo, "--qp-bars", "^" + name + "$")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.path("charts")
        bars = "qp-bars-send_lat_qps4_size64_cq2064"
        self.assert_charts(out, ["fairness", "cpu_cost", bars])
        text = self.svg_text(os.path.join(out, bars + ".svg"))
        self.assert_has("latency per QP", text, bars)
        self.assert_has("latency (µs)", text, bars)
        self.assert_has("fixed-count runs", self.svg_text(os.path.join(out, "fairness.svg")), "fairness.svg")

    def test_report_has_the_new_charts(self):
        qps = self.unpack_qp_scaling()
        html = self.path("report.html")
        r = self.plot(qps, "--qp-bars", "qps:64/", "--report", html)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        for needle in ("fairness.png", "cpu_cost.png", BARS_64 + ".png", BARS_64_SRQ + ".png", "QP Jain",
                       "CPU µs/msg", "send/bw/qps:1024/size:64/cq:4352/tx:64/rx:256/signal:16/srq"):
            self.assertIn(needle, text)
        self.assertEqual(text.count('src="data:image/png;base64,'), 6)  # bandwidth, rate, fairness, cpu, 2 bars


if __name__ == "__main__":
    unittest.main()
