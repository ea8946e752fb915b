"""tools/plot --report: a self-contained HTML page that renders in headless Chromium."""

import re
import unittest

from _util import TempDirCase, run_tool


class Report(TempDirCase):
    def make_report(self):
        demo, rich = self.copy_demo(), self.unpack_rich()
        html = self.path("report/index.html")
        r = run_tool("plot", demo, rich, "--out", self.path("charts"), "--report", html)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(html, r.stdout.split())
        with open(html, encoding="utf-8") as f:
            return html, f.read()

    def test_html_is_self_contained_with_context_and_tables(self):
        _html, text = self.make_report()
        self.assertGreaterEqual(text.count('src="data:image/png;base64,'), 8)
        self.assertIsNone(re.search(r'(src|href)="(https?:|//|file:)', text), "external resource in report")
        self.assertNotIn("<script", text)
        for needle in ("rxe0", "Linux 6.1.0-56-amd64", "configs/quick.json", "incomplete",
                       "write/bw/qps:16/size:65536/cq:1024", "p99 µs", "firmware"):
            self.assertIn(needle, text)

    def test_renders_in_headless_chromium(self):
        html, _text = self.make_report()
        self.assert_renders(html)

if __name__ == "__main__":
    unittest.main()
