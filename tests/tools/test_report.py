"""tools/plot --report: a self-contained HTML page that renders in headless Chromium."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from _util import TempDirCase, colour_stats, run_tool

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


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
        if os.environ.get("RDMASWEEP_SKIP_BROWSER") == "1":
            self.skipTest("RDMASWEEP_SKIP_BROWSER=1")
        browser = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
        self.assertIsNotNone(browser, "no headless browser: apt-get install chromium "
                                      "(or set RDMASWEEP_SKIP_BROWSER=1 to skip this test)")
        html, _text = self.make_report()
        profile = tempfile.mkdtemp(prefix="rdmasweep-chromium-")
        self.addCleanup(shutil.rmtree, profile, ignore_errors=True)
        shot = self.path("shot.png")
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1280,2000",
               "file://" + os.path.abspath(html)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        self.assertTrue(os.path.isfile(shot), f"no screenshot (exit {r.returncode}): {r.stderr[-2000:]}")
        colours, not_background = colour_stats(shot)
        # A blank or error page has a handful of colours; charts have thousands.
        self.assertGreater(colours, 500, "screenshot looks blank")
        self.assertGreater(not_background, 0.05, "screenshot is mostly one colour")


if __name__ == "__main__":
    unittest.main()
