"""tools/plot's load_latency chart: --rate series (points that differ only in their
rate), their knee from the results' `knees`, and the closed-loop p50 reference of a
latency point of the same op, size and QP count."""

import copy
import os

from _util import DATA, TempDirCase, load, run_tool, save, tools_module

lc = tools_module("load_charts")
rr = tools_module("results")

SKIP = "chart skipped: load_latency: no --rate series of two or more loads"
A = "write/bw/qps:1/size:64/cq:128"     # 1..4 Mmsg/s offered; p99 over 2 x 10 µs at 3 Mmsg/s
B = "write/bw/qps:1/size:4096/cq:128"   # 1 and 2 Mmsg/s offered; no knee


def entry(name, cfg, **metrics):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
            "iterations": 1, "real_time": 1.0, "time_unit": "s", "config": cfg, **metrics}


def paced(series, rate, offered, achieved, p50, p99, p999):
    op, _mode, qps, size, _cq = series.split("/")
    cfg = {"op": op, "mode": "bw", "qps": int(qps[4:]), "size": int(size[5:]), "cq_depth": 0, "rate": rate}
    return entry(f"{series}/rate:{rate}", cfg, offered_items_per_second=offered, items_per_second=achieved,
                 lat_p50_us=p50, lat_p99_us=p99, lat_p999_us=p999)


def closed(op, qps, size, cq, p50):
    cfg = {"op": op, "mode": "lat", "qps": qps, "size": size, "cq_depth": 0}
    return entry(f"{op}/lat/qps:{qps}/size:{size}/cq:{cq}", cfg, lat_p50_us=p50, lat_p99_us=p50 * 2,
                 lat_p999_us=p50 * 3, label="one-way (round trip / 2)")


def knee(series, lowest, p99_low, knee_offered=None, knee_p99=None):
    return {"series": series, "loads": 2, "knee_factor": 2.0, "lowest_offered_items_per_second": lowest,
            "lowest_lat_p99_us": p99_low, "highest_offered_items_per_second": 4e6,
            "knee_offered_items_per_second": knee_offered, "knee_lat_p99_us": knee_p99}


def synthetic():
    """Two series of WRITE (64 B at four loads, a knee at 3 Mmsg/s offered where only
    2.7 were achieved; 4 KiB at two, no knee) and closed-loop latency points: WRITE 64 B
    1 QP (the 64 B series' reference), WRITE 4 KiB at 4 QPs and READ 4 KiB (neither the
    4 KiB series'), and a single paced READ point (a series of one load)."""
    b = [paced(A, "1mpps", 1e6, 0.99e6, 2.0, 10.0, 14.0), paced(A, "2mpps", 2e6, 1.98e6, 2.4, 12.0, 30.0),
         paced(A, "3mpps", 3e6, 2.7e6, 6.0, 25.0, 90.0), paced(A, "4mpps", 4e6, 3.1e6, 40.0, 80.0, 300.0),
         paced(B, "1mpps", 1e6, 1e6, 5.0, 9.0, 11.0), paced(B, "2mpps", 2e6, 1.9e6, 5.5, 10.0, 12.0),
         paced("read/bw/qps:1/size:64/cq:128", "1mpps", 1e6, 1e6, 3.0, 6.0, 9.0),
         closed("write", 1, 64, 4, 2.5), closed("write", 4, 4096, 16, 9.0), closed("read", 1, 4096, 128, 5.0)]
    return {"context": {"tool": "rdmasweep", "schema_version": 1, "device": "null0", "transport": "RoCE"},
            "benchmarks": b, "knees": [knee(A, 1e6, 10.0, 3e6, 25.0), knee(B, 1e6, 9.0)]}


class LoadSeries(TempDirCase):
    def write(self, doc, name="paced.json"):
        return save(doc, self.path(name))

    def series_of(self, doc):
        return {ls.key: ls for ls in lc.load_series(rr.load(self.write(doc)))}

    def test_series_key_drops_only_the_rate(self):
        self.assertEqual(lc.series_key(A + "/rate:3mpps"), A)
        self.assertEqual(lc.series_key(A + "/rate:2.5gbps/arrivals:poisson/srq"), A + "/arrivals:poisson/srq")

    def test_series_of_two_or_more_loads_by_offered_load(self):
        doc = synthetic()
        doc["benchmarks"].reverse()  # file order is not load order
        got = self.series_of(doc)
        self.assertEqual(sorted(got), sorted([A, B]))  # the one-load READ point is no series
        self.assertEqual([ld.offered for ld in got[A].loads], [1e6, 2e6, 3e6, 4e6])
        self.assertEqual([ld.achieved for ld in got[A].loads], [0.99e6, 1.98e6, 2.7e6, 3.1e6])
        self.assertEqual(got[A].loads[2].lat, {"p50": 6.0, "p99": 25.0, "p99.9": 90.0})
        self.assertEqual(got[A].label, "64 B · 1 QP")
        self.assertEqual(got[B].label, "4K B · 1 QP")

    def test_knee_sits_at_the_achieved_load_of_the_knees_offered_load(self):
        got = self.series_of(synthetic())
        self.assertEqual(got[A].knee, (2.7e6, 25.0, 3e6))
        self.assertIsNone(got[B].knee)

    def test_knee_is_the_files_own(self):
        doc = synthetic()
        doc["knees"][0].update(knee_offered_items_per_second=4e6, knee_lat_p99_us=80.0)
        self.assertEqual(self.series_of(doc)[A].knee, (3.1e6, 80.0, 4e6))

    def test_knee_found_again_in_a_file_without_knees(self):
        doc = synthetic()
        del doc["knees"]
        got = self.series_of(doc)
        self.assertEqual(got[A].knee, (2.7e6, 25.0, 3e6))
        self.assertIsNone(got[B].knee)  # 10 µs is not over twice 9
        doc["benchmarks"][2]["lat_p99_us"] = 20.0  # exactly twice the lowest load's: not over it
        self.assertEqual(self.series_of(doc)[A].knee, (3.1e6, 80.0, 4e6))

    def test_closed_loop_reference_matches_op_size_and_qps(self):
        got = self.series_of(synthetic())
        self.assertEqual(got[A].closed.name, "write/lat/qps:1/size:64/cq:4")
        self.assertEqual(got[A].closed.value("lat_p50_us"), 2.5)
        # 4 KiB has closed-loop points at 4 QPs (WRITE) and of READ, neither at 1 QP of WRITE
        self.assertIsNone(got[B].closed)
        doc = synthetic()
        doc["benchmarks"].append(closed("write", 1, 256, 4, 3.0))  # another size: still not B's
        self.assertIsNone(self.series_of(doc)[B].closed)

    def test_arrivals_make_series_of_their_own(self):
        doc = synthetic()
        for e in [copy.deepcopy(e) for e in doc["benchmarks"][:2]]:
            e["name"] = e["run_name"] = e["name"] + "/arrivals:poisson"
            e["config"]["arrivals"] = "poisson"
            doc["benchmarks"].append(e)
        got = self.series_of(doc)
        self.assertEqual(got[A + "/arrivals:poisson"].label, "64 B · 1 QP · arrivals:poisson")
        self.assertEqual(got[A + "/arrivals:poisson"].closed.name, "write/lat/qps:1/size:64/cq:4")

    def test_shares_of_the_flat_out_rate_beside_their_twin(self):
        """--rate 25%:75%:+25%: the flat-out twin (rate none, a row before them) is no load;
        names alone (files without `config`) parse too."""
        doc = synthetic()
        twin = entry(A, {"op": "write", "mode": "bw", "qps": 1, "size": 64, "cq_depth": 0, "rate": "none"},
                     items_per_second=4e6)
        doc["benchmarks"] = [twin] + [paced(A, f"{p}%", p * 4e4, p * 3.9e4, 2.0, 10.0 + p, 20.0 + p)
                                      for p in (25, 50, 75)]
        doc["knees"] = [knee(A, 1e6, 35.0, 3e6, 85.0)]
        got = self.series_of(doc)
        self.assertEqual(list(got), [A])
        self.assertEqual([ld.name[-7:] for ld in got[A].loads], ["ate:25%", "ate:50%", "ate:75%"])
        self.assertEqual(got[A].knee, (75 * 3.9e4, 85.0, 3e6))
        for e in doc["benchmarks"]:
            del e["config"]
        self.assertEqual(rr.parse_name(A + "/rate:12.5%")["knobs"], {"rate": "12.5%"})
        self.assertEqual(len(self.series_of(doc)[A].loads), 3)

    def test_real_sample_from_the_null_device(self):
        """tests/tools/data/rate-series.json: a real run on the verbs stand-in's null0
        (WRITE, 1 QP, 64 B and 4 KiB, --rate 100kpps:400kpps:+100kpps, -n 20000) on the
        2-core build machine while tests ran beside it: its 4 KiB knee (at 0.2 Mmsg/s
        offered, 0.027 achieved) is the busy machine's stalls, not the device's."""
        rf = rr.load(os.path.join(DATA, "rate-series.json"))
        got = {ls.key: ls for ls in lc.load_series(rf)}
        want = {k["series"]: k for k in load("rate-series.json")["knees"]}
        self.assertEqual(sorted(got), sorted(want))
        for key, k in want.items():
            self.assertEqual(len(got[key].loads), k["loads"])
            offered = k["knee_offered_items_per_second"]
            self.assertEqual(got[key].knee[2] if got[key].knee else None, offered)
            if offered:
                at = next(ld for ld in got[key].loads if ld.offered == offered)
                self.assertEqual(got[key].knee[:2], (at.achieved, k["knee_lat_p99_us"]))


class LoadLatencyChart(TempDirCase):
    def plot(self, *args, out="charts"):
        r = run_tool("plot", *args, "--out", self.path(out))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def svg(self, out="charts"):
        with open(self.path(f"{out}/load_latency.svg"), encoding="utf-8") as f:
            return f.read()

    def test_drawn_for_a_file_with_a_series(self):
        r = self.plot(save(synthetic(), self.path("paced.json")))
        self.assertNotIn("chart skipped: load_latency", r.stderr)
        for ext in ("png", "svg"):
            self.assertIn(self.path(f"charts/load_latency.{ext}"), r.stdout.split())
        text = self.svg()
        for needle in ("achieved load (Mmsg/s)", "latency from due (µs, log)", "WRITE · 64 B · 1 QP",
                       "WRITE · 4K B · 1 QP", "knee (3 Mmsg/s offered)", "no knee", "closed-loop p50", "p99.9",
                       "closed-loop WRITE: one-way (round trip / 2)"):
            self.assertIn(needle, text)
        self.assertNotIn("READ ·", text)  # its one paced load is no series

    def test_skipped_without_a_series_of_two_loads(self):
        r = self.plot(os.path.join(DATA, "demo.json"))
        self.assertIn(SKIP, r.stderr)
        self.assertFalse(os.path.exists(self.path("charts/load_latency.png")))
        doc = synthetic()
        doc["benchmarks"] = [e for e in doc["benchmarks"] if e["name"].endswith("/rate:1mpps") or "/lat/" in e["name"]]
        r = self.plot(save(doc, self.path("one-load.json")), out="one")
        self.assertIn(SKIP, r.stderr)
        self.assertFalse(os.path.exists(self.path("one/load_latency.svg")))

    def test_two_files_share_the_panels(self):
        other = synthetic()
        other["context"]["device"] = "mlx5_0"
        r = self.plot(save(synthetic(), self.path("a.json")), save(other, self.path("b.json")))
        self.assertNotIn(SKIP, r.stderr)
        text = self.svg()
        self.assertEqual(text.count("WRITE · 64 B · 1 QP"), 1)  # one panel for both files
        for needle in ("null0 (RoCE)", "mlx5_0 (RoCE)", "closed-loop p50 (mlx5_0 (RoCE))"):
            self.assertIn(needle, text)

    def test_report_includes_the_chart(self):
        html = self.path("report.html")
        r = run_tool("plot", save(synthetic(), self.path("paced.json")), "--out", self.path("charts"),
                     "--report", html)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("<code>load_latency.png</code>", text)
        self.assertIn('alt="Latency vs achieved load (--rate series)" src="data:image/png;base64,', text)
        r = run_tool("plot", os.path.join(DATA, "demo.json"), "--out", self.path("none"), "--report", html)
        with open(html, encoding="utf-8") as f:
            self.assertNotIn("load_latency.png", f.read())
        self.assertIn(SKIP, f"{r.stderr}")

    def test_report_of_the_real_sample_renders_in_headless_chromium(self):
        html = self.path("report/index.html")
        r = run_tool("plot", os.path.join(DATA, "rate-series.json"), "--out", self.path("charts"), "--report", html)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(html, encoding="utf-8") as f:
            self.assertIn("<code>load_latency.png</code>", f.read())
        self.assert_renders(html)

    def test_real_sample_is_drawn(self):
        r = self.plot(os.path.join(DATA, "rate-series.json"))
        self.assertNotIn(SKIP, r.stderr)
        self.assertIn("WRITE · 64 B · 1 QP", self.svg())
