"""tools/plot's hunt chart on a real `rdmasweep hunt` (Soft-RoCE, seed 2, 60 s budget:
73 runs, one beside an aggressor, two anomalies).

The data: data/hunt.json.gz (the hunt's points.json), data/hunt.hist.json.gz and
data/hunt.anomalies.json. The chart finds anomalies.json in the folder of the
points file, as hunt writes them, so unpack_hunt() lays them out under those names.
"""

import json
import os
import shutil

from _util import DATA, gunzip, load, save, tools_module
from test_plot import PlotCase

charts = tools_module("charts")
hc = tools_module("hunt_charts")
rr = tools_module("results")


class HuntChart(PlotCase):
    def unpack_hunt(self):
        """points.json, points.hist.json and anomalies.json in the temp dir."""
        out = self.path("points.json")
        for src, dst in (("hunt.json.gz", out), ("hunt.hist.json.gz", self.path("points.hist.json"))):
            gunzip(src, dst)
        shutil.copy(os.path.join(DATA, "hunt.anomalies.json"), self.path("anomalies.json"))
        return out

    def series(self, *paths):
        return [charts.Series(rr.load(p), os.path.basename(p)) for p in paths]

    def raw(self, path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def test_hunt_chart_is_written_with_the_anomalies_marked(self):
        r = self.plot(self.unpack_hunt())
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.path("charts")
        self.assert_charts(out, ["hunt"])
        self.assertIn(os.path.join(out, "hunt.png"), r.stdout.split())
        svg = self.svg_text(os.path.join(out, "hunt.svg"))
        for text in ("Hunt: the explored space (73 runs", "Bandwidth", "Latency p99", "bandwidth (Gb/s)",
                     "latency p99 (µs)", "message size (bytes, log2)", "SEND", "WRITE", "READ",
                     "#1 first seen", "#2 first seen", ">#1<", ">#2<"):
            self.assert_has(text, svg, "hunt.svg")
        self.assertNotIn("hunt:", r.stderr)  # anomalies.json was found

    def test_drawn_runs_are_the_successful_point_runs(self):
        path = self.unpack_hunt()
        entries = self.raw(path)["benchmarks"]
        want = [i for i, e in enumerate(entries) if not e.get("error_occurred") and e["hunt"]["role"] == "point"]
        self.assertEqual(len(want), 73)  # 75 runs less the one beside an aggressor and the aggressor
        got = hc.drawn_runs(entries)
        self.assertEqual([id(e) for e in got], [id(entries[i]) for i in want])
        self.assertFalse(any(e["name"].endswith(("/beside_aggressor", "/aggressor")) for e in got))
        # a failed run is left out
        entries[want[0]].update(error_occurred=True, error_message="boom")
        got = hc.drawn_runs(entries)
        self.assertEqual(len(got), 72)
        self.assertNotIn(id(entries[want[0]]), [id(e) for e in got])

    def test_highlights_are_the_minimal_and_first_seen_points(self):
        path = self.unpack_hunt()
        doc = self.raw(self.path("anomalies.json"))
        want = {a[k]["point"] for a in doc["anomalies"] for k in ("minimal", "first_seen")}
        self.assertEqual(len(want), 4)
        anomalies, note = hc.load_anomalies(path)
        self.assertEqual(note, "")
        marks = hc.highlights(anomalies)
        self.assertEqual(set(marks), want)
        a1 = doc["anomalies"][0]
        self.assertEqual(marks[a1["minimal"]["point"]], ["#1"])
        self.assertEqual(marks[a1["first_seen"]["point"]], ["#1 first seen"])
        # every highlighted point was measured on its own, so the chart can ring it
        drawn = {e["name"] for e in hc.drawn_runs(self.raw(path)["benchmarks"])}
        self.assertLessEqual(want, drawn)

    def test_without_anomalies_json_nothing_is_ringed(self):
        path = self.unpack_hunt()
        os.remove(self.path("anomalies.json"))
        self.assertEqual(hc.load_anomalies(path)[0], [])
        made, notes = hc.hunt(self.series(path), self.tmp)
        self.assertEqual([c.name for c in made], ["hunt"])
        self.assertTrue(any("no anomaly highlighted" in n for n in notes), notes)
        svg = self.svg_text(self.path("hunt.svg"))
        for text in (">#1<", "first seen", "anomaly trigger"):
            self.assertFalse(text in svg, f"{text!r} in hunt.svg")

    def test_other_charts_survive_a_hunt_file(self):
        path = self.unpack_hunt()
        r = self.plot(path, "--report", self.path("report.html"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        # drawn, if not all legibly (a hunt's points share few axes): the hunt chart is the one for that
        for name in ("bandwidth", "message_rate", "latency", "latency_hist", "latency_cdf", "counters", "threads",
                     "hunt"):
            for ext in (".png", ".svg"):
                self.assertIn(self.path(f"charts/{name}{ext}"), r.stdout.split())
                self.assertGreater(os.path.getsize(self.path(f"charts/{name}{ext}")), 5000, name + ext)
        self.assertTrue("hunt.png" in self.svg_text(self.path("report.html")), "hunt chart not in the report")
        # the loader folds a name's runs into repetitions, suffixed runs being points of their own
        rf = rr.load(path)
        self.assertEqual(sum(len(p.runs) for p in rf.points.values()), 75)
        self.assertIn("write/lat/qps:16/size:65536/cq:64/tx:64/rx:64/poll:1/threads:2/cq_scope:process"
                      "/beside_aggressor", rf.points)

    def test_not_a_hunt_file_draws_no_hunt_chart(self):
        r = self.plot(self.copy_demo())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(self.path("charts/hunt.png")))
        self.assertFalse(os.path.exists(self.path("charts/hunt.svg")))
        self.assertNotIn("hunt", r.stdout + r.stderr)
        # nor does a hunt-like file without "command": "hunt" in its context
        doc = load("demo.json")
        for e in doc["benchmarks"]:
            e["hunt"] = {"run": 0, "phase": "explore", "role": "point"}
        src = save(doc, self.path("nothunt.json"))
        self.assertEqual(hc.hunt(self.series(src), self.tmp), ([], []))

    def test_two_hunt_files_get_a_chart_each(self):
        path = self.unpack_hunt()
        made, _notes = hc.hunt(self.series(path, self.copy_demo(), path), self.tmp)
        self.assertEqual([c.name for c in made], ["hunt-1", "hunt-3"])
        self.assert_charts(self.tmp, ["hunt-1", "hunt-3"])
        self.assertFalse(os.path.exists(self.path("hunt.png")))
