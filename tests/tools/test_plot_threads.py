"""tools/plot on a real --threads sweep: message rate against threads, each thread's
own rate as bars, and the loader's per-thread rates read from FILE.hist.json."""

import json
import os

from _util import tools_module
from test_plot import PlotCase

rr = tools_module("results")


class ThreadCharts(PlotCase):
    def test_rate_vs_threads_and_thread_bars(self):
        path = self.unpack_threads()
        r = self.plot(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.path("charts")
        self.assert_charts(out, ["threads", "thread-bars"])
        svg = self.svg_text(os.path.join(out, "threads.svg"))
        for text in ("Message rate vs threads", "threads (each with its own QPs)", "1 QP/thread · 64 · one CQ",
                     "4 QPs/thread · 4K", "SEND", "WRITE"):
            self.assert_has(text, svg, "threads.svg")
        bars = self.svg_text(os.path.join(out, "thread-bars.svg"))
        for text in ("thread 0", "thread 1", "Jain", "write/bw/qps:1/size:64/cq:4/threads:2"):
            self.assert_has(text, bars, "thread-bars.svg")
        self.assertIn("thread-bars: 10 more point(s) with several threads left out", r.stderr)
        # --points chooses the bars' points
        r = self.plot(path, "--points", "^send/.*cq_scope:process")
        self.assertEqual(r.returncode, 0, r.stderr)
        bars = self.svg_text(os.path.join(out, "thread-bars.svg"))
        self.assert_has("send/bw/qps:4/size:4096/cq:4128/threads:2/cq_scope:process", bars, "thread-bars.svg")
        self.assertNotIn("write/bw", bars)

    def test_per_thread_rates_are_messages_over_each_threads_window(self):
        path = self.unpack_threads()
        rf = rr.load(path)
        with open(self.path("threads.hist.json")) as f:
            rec = json.load(f)["points"]["write/bw/qps:1/size:64/cq:4/threads:2"]["per_thread"][0]
        rates = rf.per_thread_rates("write/bw/qps:1/size:64/cq:4/threads:2")
        self.assertEqual(len(rates), 2)
        for t in range(2):
            self.assertAlmostEqual(rates[t], rec["messages"][t] / rec["seconds"][t])
        self.assertIsNone(rf.per_thread_rates("write/bw/qps:1/size:64/cq:4"))  # one thread: no record
        p = rf.points["write/bw/qps:1/size:64/cq:8/threads:2/cq_scope:process"]
        self.assertEqual(p.params["knobs"], {"threads": 2, "cq_scope": "process"})

    def test_one_thread_count_draws_no_threads_chart(self):
        r = self.plot(self.unpack_qp_scaling())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("chart skipped: threads: no bw points at two or more thread counts", r.stderr)
        self.assertFalse(os.path.exists(self.path("charts/threads.png")))
        self.assertFalse(os.path.exists(self.path("charts/thread-bars.png")))
