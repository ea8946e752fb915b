"""tools/plot on `rdmasweep mesh` results: a rank x rank heatmap per point."""

import os
import xml.etree.ElementTree as ET

from _png import read_png
from _util import TempDirCase, load, run_tool, save

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class MeshHeatmap(TempDirCase):
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
        self.assertNotEqual(read_png(os.path.join(first, name))[3], read_png(os.path.join(second, name))[3])

    def test_failed_flows_only_is_an_error(self):
        doc = load("mesh-pairs.json")
        for b in doc["benchmarks"]:
            b["error_occurred"] = True
        r = run_tool("plot", save(doc, os.path.join(self.tmp, "m.json")), "--out", os.path.join(self.tmp, "o"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no successful flows", r.stderr)
