"""tools/plot on `rdmasweep mesh` results: a rank x rank heatmap per point."""

import os
import xml.etree.ElementTree as ET

from _util import PNG_SIGNATURE, TempDirCase, load, read_image, run_tool, save


class MeshHeatmap(TempDirCase):
    def render(self, doc, name):
        """tools/plot on `doc`: the first heatmap's file name and image."""
        out = os.path.join(self.tmp, name)
        r = run_tool("plot", save(doc, os.path.join(self.tmp, name + ".json")), "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        png = sorted(f for f in os.listdir(out) if f.endswith(".png"))[0]
        return png, read_image(os.path.join(out, png))

    def test_pairs_run_gives_one_heatmap_per_point(self):
        # tests/tools/data/mesh-pairs.json: a real 3-rank `pairs` run on rxe (2 points).
        doc = load("mesh-pairs.json")
        points = {b["point"] for b in doc["benchmarks"]}
        self.assertEqual(len(points), 2)
        out = os.path.join(self.tmp, "charts")
        r = run_tool("plot", save(doc, os.path.join(self.tmp, "m.json")), "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        pngs = sorted(f for f in os.listdir(out) if f.endswith(".png"))
        self.assertEqual(len(pngs), 2, pngs)
        for f in pngs:
            self.assertTrue(f.startswith("mesh-"), f)
            with open(os.path.join(out, f), "rb") as fh:
                data = fh.read()
            self.assertEqual(data[:8], PNG_SIGNATURE)
            ET.parse(os.path.join(out, f[:-4] + ".svg"))

    def test_a_slow_link_changes_its_cell(self):
        # The chart is drawn from the data: make one flow 100x slower and the two
        # images must differ.
        doc = load("mesh-pairs.json")
        first = os.path.join(self.tmp, "a")
        run_tool("plot", save(doc, os.path.join(self.tmp, "a.json")), "--out", first)
        doc["benchmarks"][0]["bytes_per_second"] /= 100
        second = os.path.join(self.tmp, "b")
        run_tool("plot", save(doc, os.path.join(self.tmp, "b.json")), "--out", second)
        name = sorted(f for f in os.listdir(first) if f.endswith(".png"))[0]
        a, b = read_image(os.path.join(first, name)), read_image(os.path.join(second, name))
        self.assertFalse(a.shape == b.shape and (a == b).all(), "the slower flow left the picture as it was")

    def test_a_latency_point_is_drawn_by_its_p50(self):
        # In a latency point the cell is the flow's p50: changing it changes the
        # picture, changing its Gb/s does not.
        def render(doc, name):
            png, img = self.render(doc, name)
            self.assertIn("_lat_", png)
            return img.tobytes()

        doc = load("mesh-pairs.json")
        point = doc["benchmarks"][0]["point"]
        doc["benchmarks"] = [dict(b, point=point.replace("/bw/", "/lat/"), lat_p50_us=100.0 + i)
                             for i, b in enumerate(b for b in doc["benchmarks"] if b["point"] == point)]
        base = render(doc, "base")
        doc["benchmarks"][0]["bytes_per_second"] *= 100
        self.assertEqual(render(doc, "bps"), base)
        doc["benchmarks"][0]["lat_p50_us"] = 5000.0
        self.assertNotEqual(render(doc, "p50"), base)

    def test_repetitions_are_drawn_at_their_median(self):
        # A flow with repetitions is drawn at its median: the median of its runs, or its
        # _median aggregate when there is one; the other aggregates (cv!) are not drawn.
        def render(doc, name):
            img = self.render(doc, name)[1]
            return img.shape, img.tobytes()

        def with_first_flow(entries):
            doc = load("mesh-pairs.json")
            first = doc["benchmarks"][0]
            doc["benchmarks"][0:1] = [dict(first, **e) for e in entries]
            return doc, first["bytes_per_second"]

        doc, bps = with_first_flow([{}])
        doc["benchmarks"][0]["bytes_per_second"] = 3 * bps
        at_3x = render(doc, "ref3")
        doc["benchmarks"][0]["bytes_per_second"] = 5 * bps
        at_5x = render(doc, "ref5")
        self.assertNotEqual(at_3x, at_5x)

        runs = [{"bytes_per_second": f * bps, "repetitions": 3, "repetition_index": i}
                for i, f in enumerate((1, 3, 100))]
        cv = {"run_type": "aggregate", "aggregate_name": "cv", "aggregate_unit": "percentage", "bytes_per_second": 0.5}
        doc, _ = with_first_flow(runs + [cv])
        self.assertEqual(render(doc, "runs"), at_3x)
        median = {"run_type": "aggregate", "aggregate_name": "median", "bytes_per_second": 5 * bps}
        doc, _ = with_first_flow(runs + [median, cv])
        self.assertEqual(render(doc, "agg"), at_5x)

    def test_failed_flows_only_is_an_error(self):
        doc = load("mesh-pairs.json")
        for b in doc["benchmarks"]:
            b["error_occurred"] = True
        r = run_tool("plot", save(doc, os.path.join(self.tmp, "m.json")), "--out", os.path.join(self.tmp, "o"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no successful flows", r.stderr)
