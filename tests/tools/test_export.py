"""tools/export: CSV and markdown tables of real results files, a row per repetition."""

import copy
import csv
import io
import json
import os
import re
import shutil
import subprocess
import unittest

from _util import DATA, PACKAGE, ROOT, TOOLS, TempDirCase, load, run_tool, save

FABRIC = os.path.join(ROOT, "reports", "fabric", "rxe0.json")  # 24 points x 3 repetitions, with aggregates
DEMO = os.path.join(DATA, "demo.json")  # written before entries carried a config
POINT = "write/lat/qps:1/size:64/cq:4"
# The documented order of the figures that lead (docs/results.md).
HEADLINE = ["bytes_per_second", "items_per_second", "lat_min_us", "lat_p50_us", "lat_p90_us", "lat_p99_us",
            "lat_p999_us", "lat_p9999_us", "lat_max_us", "lat_mean_us", "cpu_seconds", "server_cpu_seconds",
            "messages", "bytes", "seconds", "real_time", "cpu_time", "time_unit"]
# A message a CSV must quote and a markdown cell escape.
MESSAGE = 'work completion error "retry exceeded", QP 0 | status 12'


def knob_table():
    with open(os.path.join(PACKAGE, "knobs.json"), encoding="utf-8") as f:
        return [k["key"] for k in json.load(f)]


def read_csv(text):
    return list(csv.reader(io.StringIO(text, newline="")))


def cell(v):
    """The CSV cell a JSON value should become."""
    return "" if v is None else ("true" if v else "false") if isinstance(v, bool) else repr(v) if isinstance(v, float) else str(v)


def md_cells(line):
    """A markdown table line's cells (an escaped \\| stays in its cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


class Export(TempDirCase):
    def export(self, *args):
        r = run_tool("export", *args)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        return r.stdout

    def with_failures(self):
        """rxe0.json with POINT's repetition 1 failed (its figures gone, as in a failed
        entry) and its aggregates left out (there is no longer a median of 3)."""
        doc = load_fabric()
        out = []
        for e in doc["benchmarks"]:
            if e["run_name"] == POINT and e["run_type"] == "aggregate":
                continue
            if e["run_name"] == POINT and e["repetition_index"] == 1:
                e = {k: v for k, v in e.items() if k in ("name", "run_name", "run_type", "repetition_index",
                                                         "repetitions", "family_index", "per_family_instance_index",
                                                         "threads", "config")}
                e.update(error_occurred=True, error_message=MESSAGE, iterations=0, real_time=0.0, cpu_time=0.0,
                         time_unit="ms")
            out.append(e)
        self.assertEqual(len(out), len(doc["benchmarks"]) - 4, "POINT is not in rxe0.json")
        doc["benchmarks"] = out
        return save(doc, self.path("failed.json")), doc

    def test_header_is_name_repetition_knobs_figures_error(self):
        header = read_csv(self.export(FABRIC))[0]
        cfg = load_fabric()["benchmarks"][0]["config"]
        knobs = [k for k in knob_table() if k in cfg] + ["iters", "duration", "warmup"]
        self.assertEqual(len(knobs), len(cfg))
        self.assertEqual(header[:2], ["name", "repetition"])
        self.assertEqual(header[2:2 + len(knobs)], knobs)
        figures = header[2 + len(knobs):-1]
        self.assertEqual(figures[:len(HEADLINE)], HEADLINE)
        rest = figures[len(HEADLINE):]
        self.assertEqual(rest[-1], "anomalies")
        self.assertEqual(rest[:-1], sorted(rest[:-1]))
        self.assertEqual(header[-1], "error")
        self.assertEqual(len(header), len(set(header)))
        # the figures the device resolved for a knob keep their own column
        self.assertIn("inline_size_resolved", rest)
        self.assertIn("outs_resolved", rest)
        self.assertNotIn("run_type", header)
        self.assertNotIn("aggregate", header)

    def test_a_row_per_repetition_with_the_json_values(self):
        rows = read_csv(self.export(FABRIC))
        header, rows = rows[0], rows[1:]
        runs = [e for e in load_fabric()["benchmarks"] if e["run_type"] == "iteration"]
        self.assertEqual(len(runs), 72)
        self.assertEqual(len(rows), len(runs))  # the 96 aggregates are left out
        by_key = {(r[0], r[1]): dict(zip(header, r)) for r in rows}
        self.assertEqual(len(by_key), len(rows))
        checked = 0
        for e in runs:
            row = by_key[(e["run_name"], str(e["repetition_index"]))]
            for k, v in e["config"].items():
                self.assertEqual(row[k], cell(v), k)
            for k, v in e.items():
                if isinstance(v, (int, float)) and k not in ("threads", "repetition_index", "repetitions",
                                                             "family_index", "per_family_instance_index"):
                    col = k + "_resolved" if k in e["config"] else k
                    self.assertEqual(float(row[col]), v, (e["name"], k))
                    checked += 1
            self.assertEqual(row["error"], "")
        self.assertGreater(checked, 72 * 20)

    def test_failed_repetition_is_a_row_with_its_error(self):
        path, doc = self.with_failures()
        out = self.path("out.csv")
        self.export(path, "--csv", out)
        with open(out, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r["name"] == POINT]
        self.assertEqual([r["repetition"] for r in rows], ["0", "1", "2"])
        failed = rows[1]
        self.assertEqual(failed["error"], MESSAGE)
        self.assertEqual(failed["lat_p50_us"], "")
        self.assertEqual((failed["op"], failed["mode"], failed["size"]), ("write", "lat", "64"))
        self.assertEqual([rows[0]["error"], rows[2]["error"]], ["", ""])
        self.assertNotEqual(rows[0]["lat_p50_us"], "")

    def test_csv_reads_back_with_dictreader(self):
        path, _ = self.with_failures()
        out = self.path("out.csv")
        self.export(path, "--csv", out)
        with open(out, "rb") as f:
            raw = f.read()
        with open(out, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = reader.fieldnames
        self.assertEqual(len(rows), 72)
        self.assertEqual(raw.count(b"\r\n"), len(rows) + 1)  # RFC 4180 line ends, one line per row
        for r in rows:
            self.assertEqual(list(r), header)
            self.assertNotIn(None, r)  # no row longer than the header
            self.assertNotIn(None, r.values())  # nor shorter
        self.assertEqual(len([r for r in rows if r["error"]]), 1)
        # the same table on stdout (read back in text mode: CRLF as \n)
        self.assertEqual(self.export(path, "--csv", "-"), raw.decode().replace("\r\n", "\n"))

    def test_markdown_table_has_the_csv_columns_and_rows(self):
        path, _ = self.with_failures()
        header = read_csv(self.export(path))[0]
        lines = self.export(path, "--markdown").splitlines()
        self.assertEqual(len(lines), 2 + 72)
        self.assertEqual(md_cells(lines[0]), header)
        self.assertEqual(lines[1], "|" + "---|" * len(header))
        for line in lines[2:]:
            self.assertEqual(len(md_cells(line)), len(header), line)
        failed = [dict(zip(header, md_cells(l))) for l in lines[2:] if MESSAGE.split(",")[0] in l]
        self.assertEqual(len(failed), 1)
        self.assertEqual(failed[0]["error"], MESSAGE.replace("|", "\\|"))
        first = dict(zip(header, md_cells(lines[2])))
        bw = load_fabric()["benchmarks"][0]["bytes_per_second"]
        self.assertEqual(first["bytes_per_second"], f"{bw:.0f}")  # 2605020: for reading, not every digit
        # to a file (then nothing on stdout: CSV is the default only when neither is asked for)
        md = self.path("t.md")
        self.assertEqual(self.export(path, "--markdown", md), "")
        with open(md, encoding="utf-8") as f:
            self.assertEqual(f.read().splitlines(), lines)

    def test_several_files_add_a_file_column(self):
        rows = read_csv(self.export(DEMO, FABRIC))
        header, rows = rows[0], rows[1:]
        self.assertEqual(header[:3], ["file", "name", "repetition"])
        self.assertEqual([r[0] for r in rows], [DEMO] * 24 + [FABRIC] * 72)
        self.assertEqual({len(r) for r in rows}, {len(header)})
        # demo's rows have no iters (its entries carry no config): empty cells
        it = header.index("iters")
        self.assertEqual({r[it] for r in rows[:24]}, {""})
        self.assertEqual({r[it] for r in rows[24:]}, {"200"})

    def test_knobs_from_the_name_in_files_without_config(self):
        header, *rows = read_csv(self.export(DEMO))
        self.assertEqual(len(rows), 24)
        self.assertEqual(header[:7], ["name", "repetition", "op", "mode", "qps", "size", "cq_depth"])
        row = dict(zip(header, rows[0]))
        self.assertEqual(row["name"], "send/bw/qps:1/size:64/cq:516")
        self.assertEqual((row["op"], row["qps"], row["size"], row["cq_depth"]), ("send", "1", "64", "516"))
        self.assertEqual(row["srq"], "false")
        # a number the name leaves out was at that version's default: not guessed
        self.assertNotIn("tx_depth", header)
        self.assertNotIn("inline_size", header)

    def test_a_plain_google_benchmark_file_and_one_with_aggregates_only(self):
        header, *rows = read_csv(self.export(os.path.join(DATA, "gbench_micro.json")))
        self.assertEqual(len(rows), 30)
        self.assertEqual(header[:3], ["name", "repetition", "items_per_second"])
        doc = load("gbench_micro.json")
        doc["benchmarks"] = [e for e in doc["benchmarks"] if e["run_type"] == "aggregate"]
        header, *rows = read_csv(self.export(save(doc, self.path("agg.json"))))
        self.assertEqual(header[:3], ["name", "repetition", "aggregate"])
        self.assertEqual(len(rows), 24)
        self.assertEqual([r[2] for r in rows[:4]], ["mean", "median", "stddev", "cv"])
        self.assertEqual(rows[0][1], "")
        mean = doc["benchmarks"][0]
        self.assertEqual(float(rows[0][header.index("real_time")]), mean["real_time"])

    def test_bad_input_is_one_line_and_exit_2(self):
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        thresholds = os.path.join(ROOT, "reports", "baseline", "thresholds.json")
        out = self.path("out.csv")
        for args, start in (((self.path("missing.json"),), f"export: {self.path('missing.json')}: no such file"),
                            ((bad,), f"export: {bad}: not valid JSON: "),
                            ((thresholds,), f"export: {thresholds}: not a benchmark results file"),
                            ((FABRIC, self.path("missing.json"), "--csv", out), "export: "),
                            ((FABRIC, "--csv", "-", "--markdown"), "export: --csv - and --markdown both write to stdout"),
                            ((FABRIC, "--csv", self.path("nodir/out.csv")), "export: "),
                            (("--bogus", FABRIC), "export: unrecognized arguments: --bogus")):
            with self.subTest(args=args):
                r = run_tool("export", *args)
                self.assertEqual(r.returncode, 2)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertTrue(r.stderr.startswith(start), r.stderr)
        self.assertFalse(os.path.exists(out))  # nothing written when the second file fails

    def test_markdown_never_takes_a_results_file_as_its_output(self):
        a = shutil.copy(DEMO, self.path("a.json"))
        with open(a, "rb") as f:
            before = f.read()
        r = run_tool("export", "--markdown", a, FABRIC)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--markdown's FILE is optional", r.stderr)
        with open(a, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_runs_under_every_python3_here_without_matplotlib(self):
        # python3 on PATH may be another Python than Debian's, without matplotlib or scipy;
        # these stand-ins, first on the module path, fail any import of them
        fake = self.path("no-plotting")
        os.makedirs(fake)
        for m in ("matplotlib", "scipy", "numpy"):
            with open(os.path.join(fake, m + ".py"), "w") as f:
                f.write(f"raise ImportError('export must not need {m}')\n")
        for exe in sorted({shutil.which("python3"), "/usr/bin/python3"} - {None}):
            if not os.path.exists(exe):
                continue
            with self.subTest(python=exe):
                r = subprocess.run([exe, os.path.join(TOOLS, "export"), DEMO], capture_output=True, text=True,
                                   timeout=120, env=dict(os.environ, PYTHONPATH=fake))
                self.assertEqual((r.returncode, r.stderr), (0, ""))
                self.assertEqual(len(read_csv(r.stdout)), 25)


def load_fabric():
    with open(FABRIC, encoding="utf-8") as f:
        return copy.deepcopy(json.load(f))


if __name__ == "__main__":
    unittest.main()
