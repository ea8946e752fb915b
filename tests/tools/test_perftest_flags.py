"""perftest's short flags in rdmasweep: every letter of perftest 4.5's ib_* tools (their
--help, committed in data/perftest-4.5-help/) either means the same in rdmasweep or is
not defined and ends the run in one line naming rdmasweep's spelling; docs/usage.md's
flag and default tables are the binary's; perftest's defaults there are its --help's.

Needs the built binary (see _util.find_binary); skipped without one outside CI."""

import glob
import os
import re
import subprocess
import tempfile
import unittest

from _util import DATA, ROOT, NeedsBinary

HELP_DIR = os.path.join(DATA, "perftest-4.5-help")

# perftest's long option -> rdmasweep's long option of the same meaning (written here,
# not read from the binary, so a letter moved to another meaning fails).
SAME = {"--all": "--all", "--atomic_type": "--atomic-type", "--bidirectional": "--bidir",
        "--connection": "--connection", "--ib-dev": "--device", "--duration": "--duration", "--events": "--events",
        "--CPU-freq": "--cpu-freq", "--help": "--help", "--ib-port": "--ib-port", "--inline_size": "--inline-size",
        "--post_list": "--post-list", "--mtu": "--mtu", "--iters": "--iters", "--outs": "--outs", "--port": "--port",
        "--qp": "--qps", "--cq-mod": "--signal-every", "--rx-depth": "--rx-depth", "--rdma_cm": "--cm",
        "--size": "--size", "--sl": "--sl", "--tx-depth": "--tx-depth", "--tos": "--tclass",
        "--qp-timeout": "--qp-timeout", "--gid-index": "--gid-index"}


def perftest_flags():
    """{letter: perftest's long option} over every committed --help."""
    flags = {}
    for path in sorted(glob.glob(os.path.join(HELP_DIR, "*.help"))):
        with open(path, encoding="utf-8") as f:
            for m in re.finditer(r"^\s+-([A-Za-z]), (--[A-Za-z_-]+)", f.read(), re.M):
                flags.setdefault(m.group(1), m.group(2))
    return flags


def help_defaults():
    """{(tool, letter): the "default N" its --help gives} for the flags that say one."""
    out = {}
    for path in glob.glob(os.path.join(HELP_DIR, "*.help")):
        tool = os.path.basename(path)[:-len(".help")]
        with open(path, encoding="utf-8") as f:
            for m in re.finditer(r"^\s+-([A-Za-z]), .*?[Dd]efault:? ?(\d+)", f.read(), re.M):
                out[(tool, m.group(1))] = int(m.group(2))
    return out


class PerftestFlags(NeedsBinary):

    def run_bin(self, *args, cwd=None):
        return subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=60, cwd=cwd)

    def table(self):
        """{letter: (perftest's long, rdmasweep's long or None)} from `help --perftest-md`."""
        r = self.run_bin("help", "--perftest-md")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {}
        for m in re.finditer(r"^\| `-(\w)`, `(--[\w-]+)` \| (?:`-\w`, `(--[\w-]+)`|not defined) \|", r.stdout, re.M):
            rows[m.group(1)] = (m.group(2), m.group(3))
        return rows

    def test_the_committed_help_lists_perftests_flags(self):
        flags = perftest_flags()
        self.assertGreaterEqual(len(flags), 40)
        self.assertEqual(flags["o"], "--outs")
        self.assertEqual(flags["c"], "--connection")

    def test_every_perftest_letter_is_in_the_table_and_no_other(self):
        self.assertEqual({k: v[0] for k, v in self.table().items()}, perftest_flags())

    def test_a_defined_letter_means_what_it_means_in_perftest(self):
        r = self.run_bin("client", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for letter, (theirs, ours) in self.table().items():
            if ours is None:
                continue
            with self.subTest(flag="-" + letter):
                self.assertEqual(ours, SAME.get(theirs), f"-{letter} is perftest's {theirs}")
                self.assertIn(f"-{letter} [ {ours} ]", r.stdout, f"client --help lacks -{letter} as {ours}")

    def test_every_other_letter_is_one_line_naming_rdmasweeps_spelling(self):
        undefined = [k for k, (_, ours) in self.table().items() if ours is None]
        self.assertIn("C", undefined)
        for letter in undefined:
            with self.subTest(flag="-" + letter):
                r = self.run_bin("client", "127.0.0.1", "-" + letter, "1")
                self.assertEqual(r.returncode, 2, r.stderr)
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(f"-{letter} is perftest's {perftest_flags()[letter]}: ", lines[0])
                self.assertNotIn("unrecognised", lines[0])

    def test_the_server_points_perftests_workload_flags_at_the_client(self):
        r = self.run_bin("server", "-s", "64")
        self.assertEqual(r.returncode, 2)
        self.assertIn("-s is perftest's --size: rdmasweep client's --size", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)

    def test_o_is_reads_in_flight_never_a_file(self):
        r = self.run_bin("client", "127.0.0.1", "-o", "300")
        self.assertEqual(r.returncode, 2)
        self.assertIn("outs", r.stderr)  # out of --outs' range 0..255: -o reached --outs
        with tempfile.TemporaryDirectory() as d:
            r = self.run_bin("client", "127.0.0.1", "-p", "1", "--timeout", "1", "-o", "16", "--no-progress", cwd=d)
            self.assertNotEqual(r.returncode, 0)  # nothing listens on port 1
            self.assertFalse(os.path.exists(os.path.join(d, "16")), "-o 16 wrote a file named 16")

    def test_c_a_and_A_are_their_axes(self):
        cases = [(["-c", "UD", "--transport", "rc"], "both set the transport"),
                 (["-c", "configs/quick.json"], "a sweep file is --config FILE"),
                 (["-c", "XRC"], "'XRC' is not RC or UD"),
                 (["-a", "-s", "64"], "both set the size"),
                 (["-A", "FETCH_AND_ADD", "--op", "read"], "both set the op"),
                 (["-A", "SWAP"], "'SWAP' is not CMP_AND_SWAP or FETCH_AND_ADD")]
        for args, want in cases:
            with self.subTest(args=args):
                r = self.run_bin("client", "127.0.0.1", *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(want, r.stderr)

    def section(self, name):
        with open(os.path.join(ROOT, "docs", "usage.md"), encoding="utf-8") as f:
            doc = f.read()
        m = re.search(r"<!-- %s: generated by .*? -->\n(.*?)<!-- end %s -->" % (name, name), doc, re.S)
        self.assertIsNotNone(m, f"docs/usage.md lacks the {name} markers")
        return m.group(1)

    def test_usage_md_has_the_binarys_tables(self):
        for name, flag in (("perftest-flags", "--perftest-md"), ("perftest-defaults", "--defaults-md")):
            with self.subTest(table=name):
                r = self.run_bin("help", flag)
                self.assertEqual(self.section(name), r.stdout,
                                 f"docs/usage.md's {name} table is not `rdmasweep help {flag}`: paste it between "
                                 "the markers")

    def test_perftests_defaults_are_its_help_s(self):
        text = self.run_bin("help", "--defaults-md").stdout
        d = help_defaults()
        self.assertIn(f"| `-n/--iters`, bandwidth | {d[('ib_write_bw', 'n')]} |", text)
        self.assertIn(f"(latency: {d[('ib_write_lat', 'n')]} on both)", text)
        same = re.search(r"^The same on both: (.*)$", text, re.M).group(1)
        for letter, tool in (("q", "ib_write_bw"), ("t", "ib_write_bw"), ("r", "ib_send_bw"), ("u", "ib_write_bw"),
                             ("S", "ib_write_bw"), ("s", "ib_write_bw")):
            with self.subTest(flag="-" + letter):
                self.assertIn(f"`-{letter}` {d[(tool, letter)]}", same)
        self.assertIn(f"(latency: {d[('ib_write_lat', 's')]})", same)


if __name__ == "__main__":
    unittest.main()
