"""The loader (tools/rdmasweep_py/results.py): a point's parameters come from its
entries' `config`, and from its name only in files whose entries have none."""

import copy
import os

from _util import DATA, TempDirCase, load, run_tool, save, tools_module

rr = tools_module("results")


def with_configs(doc):
    """demo.json with every entry carrying its point's `config` as rdmasweep writes it
    now: the configuration recorded in demo.hist.json, plus the knobs added since
    (outs, events) at their defaults and inline_size "auto" (this run predates
    inline's auto default; its names carry no inline tag either way)."""
    hist = load("demo.hist.json")["points"]
    doc = copy.deepcopy(doc)
    for e in doc["benchmarks"]:
        cfg = dict(hist[e["run_name"]]["config"], outs=0, events=False, srq=False, inline_size="auto")
        e["config"] = cfg
    return doc


class ConfigFirst(TempDirCase):
    def test_config_and_name_agree_on_a_real_run(self):
        rf = rr.load(save(with_configs(load("demo.json")), self.path("c.json")), with_hist=False)
        self.assertEqual(len(rf.points), 24)
        for name, p in rf.points.items():
            with self.subTest(point=name):
                self.assertIsNotNone(p.config)
                self.assertEqual(p.config["cq_depth"], 0)  # computed: the name says what it came to
                self.assertEqual(p.params, rr.parse_name(name))

    def test_the_config_wins_over_the_name(self):
        doc = with_configs(load("demo.json"))
        for e in doc["benchmarks"]:
            if e["run_name"] == "write/bw/qps:4/size:64/cq:16":
                e["config"].update(poll_batch=1, events=True, cq_depth=64, inline_size=0)
        p = rr.load(save(doc, self.path("c.json")), with_hist=False).points["write/bw/qps:4/size:64/cq:16"]
        self.assertEqual(p.params["knobs"], {"poll": 1, "events": True, "inline": 0})
        self.assertEqual(p.params["cq"], 64)
        self.assertEqual(rr.parse_name(p.name)["knobs"], {})

    def test_without_config_the_name_is_parsed(self):
        rf = rr.load(os.path.join(DATA, "demo.json"), with_hist=False)
        for name, p in rf.points.items():
            self.assertIsNone(p.config)
            self.assertEqual(p.params, rr.parse_name(name))
            self.assertIsNotNone(p.params)

    def test_a_config_with_an_unknown_key_leaves_the_name(self):
        cfg = {"op": "send", "mode": "bw", "qps": 4, "size": 64, "cq_depth": 0, "a_future_knob": 3}
        self.assertIsNone(rr.params_from_config(cfg, "send/bw/qps:4/size:64/cq:2064"))
        for bad in ({"op": "send", "mode": "bw", "qps": 4}, {"op": "send", "mode": "bw", "qps": -1, "size": 64},
                    {"op": "send", "mode": "bw", "qps": 4, "size": 64, "tx_depth": "many"}, []):
            self.assertIsNone(rr.params_from_config(bad, "x"), bad)
        doc = load("demo.json")
        for e in doc["benchmarks"]:
            e["config"] = dict(cfg, op="read")
        rf = rr.load(save(doc, self.path("u.json")), with_hist=False)
        p = rf.points["send/bw/qps:4/size:64/cq:2064"]
        self.assertIsNone(p.config)
        self.assertEqual(p.params["op"], "send")

    def test_points_named_otherwise_are_charted_and_judged_from_their_config(self):
        # Names that are not rdmasweep point names: only the config says what a point is.
        doc = with_configs(load("demo.json"))
        for e in doc["benchmarks"]:
            c = e["config"]
            e["name"] = e["run_name"] = f"{c['op']} {c['mode']} {c['qps']}x{c['size']}"
        path = save(doc, self.path("named.json"))
        rf = rr.load(path, with_hist=False)
        self.assertTrue(all(p.params for p in rf.points.values()))
        self.assertEqual(rf.points["write bw 4x4096"].params["qps"], 4)

        r = run_tool("plot", path, "--out", self.path("charts"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("charts/bandwidth.svg"), encoding="utf-8") as f:
            svg = f.read()
        for text in ("4 QPs", "1 QP", "WRITE", "READ", "SEND"):
            self.assertIn(text, svg)
        # compare: a latency point is judged on its latencies, not on the rates that restate them.
        r = run_tool("compare", path, path)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line.split()[:4] for line in r.stdout.splitlines()]
        lat_metrics = {row[3] for row in rows if row[:3] == ["send", "lat", "1x64"]}
        bw_metrics = {row[3] for row in rows if row[:3] == ["send", "bw", "1x64"]}
        self.assertIn("lat_p99_us", lat_metrics)
        self.assertNotIn("bytes_per_second", lat_metrics)
        self.assertIn("bytes_per_second", bw_metrics)


class FabricLabel(TempDirCase):
    def test_the_label_names_the_transport_where_the_file_records_it(self):
        doc = load("demo.json")
        self.assertEqual(rr.load(save(doc, self.path("old.json")), with_hist=False).fabric(), "rxe0 (Ethernet)")
        doc["context"].update(device="siw0", transport="iWARP")
        self.assertEqual(rr.load(save(doc, self.path("new.json")), with_hist=False).fabric(), "siw0 (iWARP)")
