"""rdmasweep client --format perftest against real perftest 4.5 output.

tests/tools/data/perftest-4.5/ holds perftest's client output from the rxe lab
(ib_*.txt, from capture.sh), a real rdmasweep sweep of the same operations on the same
device (rdmasweep.json) and what that client printed with --format perftest
(rdmasweep-client.txt). The built binary renders the results file as the client does
(`rdmasweep render`, left out of help), and a parser written for perftest's output reads
both alike: the same dashed lines, test names and column titles, rows of as many fields
with numbers where perftest has numbers, and each number the figure docs/results.md
names for its column.

The binary as test_knobs finds it: without one the tests skip, except under CI (CI
set) or with RDMASWEEP_BIN set, where they fail."""

import json
import os
import re
import subprocess
import unittest

from _util import DATA, NeedsBinary

CAPTURES = os.path.join(DATA, "perftest-4.5")
RESULTS = os.path.join(CAPTURES, "rdmasweep.json")
DASHES = re.compile(r"^-+$")
# perftest's client output of each tool: the test name its banner gives.
TOOLS = {
    "ib_write_bw.txt": "RDMA_Write BW Test",
    "ib_write_bw_sizes.txt": "RDMA_Write BW Test",
    "ib_write_bw_nopeak.txt": "RDMA_Write BW Test",
    "ib_read_bw.txt": "RDMA_Read BW Test",
    "ib_send_bw.txt": "Send BW Test",
    "ib_atomic_bw.txt": "Atomic FETCH_AND_ADD BW Test",
    "ib_write_lat.txt": "RDMA_Write Latency Test",
    "ib_send_lat.txt": "Send Latency Test",
    "ib_read_lat.txt": "RDMA_Read Latency Test",
}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def tables(text):
    """Every result table in perftest's output, as a script that parses it finds them:
    the column titles (a line starting " #bytes"), the rows under them up to the next
    dashed line, the dashed lines around them and the test name above."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        if not line.startswith(" #bytes"):
            continue
        end = next(j for j in range(i + 1, len(lines)) if DASHES.match(lines[j]))
        name = next(lines[j] for j in range(i - 1, -1, -1) if lines[j].startswith(" " * 20) and lines[j].endswith("Test"))
        found.append({"name": name, "titles": line, "above": lines[i - 1], "rows": lines[i + 1:end], "below": lines[end]})
    return found


def kind(field):
    """What a perftest row's field is: an integer, a fixed-point number, or text."""
    if re.fullmatch(r"\d+", field):
        return "integer"
    if re.fullmatch(r"\d+\.\d+", field):
        return f"{len(field.split('.')[1])} decimals"
    return "text"


class PerftestFormat(NeedsBinary):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.out = None
        if cls.binary:
            r = subprocess.run([cls.binary, "render", RESULTS, "--format", "perftest"], capture_output=True, text=True,
                               timeout=60)
            if r.returncode != 0 or r.stderr:
                raise AssertionError(f"{cls.binary} render: exit {r.returncode}: {r.stderr}")
            cls.out = r.stdout
        cls.perftest = {f: read(os.path.join(CAPTURES, f)) for f in TOOLS}
        with open(RESULTS, encoding="utf-8") as f:
            cls.entries = [b for b in json.load(f)["benchmarks"] if b.get("run_type") != "aggregate"]

    def test_the_client_printed_what_render_prints(self):
        self.assertEqual(self.out, read(os.path.join(CAPTURES, "rdmasweep-client.txt")))

    def test_each_tool_has_its_table_with_perftests_lines(self):
        ours = tables(self.out)
        for file, name in TOOLS.items():
            with self.subTest(file):
                (theirs,) = tables(self.perftest[file])
                self.assertEqual(theirs["name"], " " * 20 + name, "the capture's banner")
                same = [t for t in ours if t["name"] == theirs["name"]]
                self.assertTrue(same, f"no table named {name!r} in rdmasweep's output")
                for t in same:
                    self.assertEqual(t["titles"], theirs["titles"])
                    self.assertEqual(t["above"], theirs["above"])
                    self.assertEqual(t["below"], theirs["below"])
                    for row in t["rows"]:
                        self.assertEqual([kind(f) for f in row.split()], [kind(f) for f in theirs["rows"][0].split()],
                                         f"rdmasweep's row\n{row!r}\nperftest's\n{theirs['rows'][0]!r}")

    def test_sizes_share_a_table_as_perftest_a_prints_them(self):
        (sizes,) = tables(self.perftest["ib_write_bw_sizes.txt"])
        self.assertEqual(len(sizes["rows"]), 23, "perftest -a: 2 B to 8 MiB under one header")
        ours = [t for t in tables(self.out) if t["name"].strip() == "RDMA_Write BW Test"]
        self.assertEqual([len(t["rows"]) for t in ours], [2], "64 B and 4 KiB under one header")

    def test_perftest_prints_no_peak_as_zero(self):
        """What rdmasweep's peak column follows: perftest -N prints 0.00 there."""
        (t,) = tables(self.perftest["ib_write_bw_nopeak.txt"])
        self.assertEqual(float(t["rows"][0].split()[2]), 0.0)
        for t in tables(self.out):
            if "BW" in t["name"]:
                self.assertTrue(all(r.split()[2] == "0.00" for r in t["rows"]), t["rows"])

    def test_each_number_is_the_figure_its_column_names(self):
        rows = [r.split() for t in tables(self.out) for r in t["rows"]]
        self.assertEqual(len(rows), len(self.entries), "a row per point, in order")
        for b, f in zip(self.entries, rows):
            with self.subTest(b["name"]):
                self.assertEqual(int(f[0]), b["config"]["size"])
                self.assertEqual(int(f[1]), b["messages"])
                if b["config"]["mode"] == "bw":
                    self.assertEqual(f[3], f"{b['bytes_per_second'] / 2**20:.2f}", "MB/sec: 2^20 bytes a second")
                    self.assertEqual(f[4], f"{b['items_per_second'] / 1e6:.6f}")
                else:
                    keys = ["lat_min_us", "lat_max_us", "lat_p50_us", "lat_mean_us", "lat_stddev_us", "lat_p99_us",
                            "lat_p999_us"]
                    self.assertEqual(f[2:], [f"{b[k]:.2f}" for k in keys])

    def test_stdout_holds_the_tables_only(self):
        for line in self.out.splitlines():
            self.assertRegex(line, r"^(-+| {20}\S.* Test| rdmasweep point : \S+| #bytes .*| \d+ .*)$")


if __name__ == "__main__":
    unittest.main()
