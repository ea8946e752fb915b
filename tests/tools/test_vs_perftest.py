"""tools/vs-perftest passes both tools the same parameters (its --dry-run lines), and a
round that never ends is killed and said so."""

import importlib.util
import io
import math
import sys
import time
import unittest
from unittest import mock

from _util import run_tool, tool_script, tools_module

# perftest flag -> rdmasweep flag with the same meaning.
SAME = {"-d": "-d", "-x": "-x", "-s": "-s", "-n": "-n", "-q": "-q", "-t": "-t", "-Q": "-Q", "-r": "-r",
        "-I": "-I", "-o": "--outs"}


def flags(argv):
    """{flag: value} of an argv's "-f VALUE" pairs (flags without a value map to True)."""
    out, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            out[a] = argv[i + 1]
            i += 2
        else:
            out[a] = True
            i += 1
    return out


def dry_run(*args):
    p = run_tool("vs-perftest", "--dry-run", *args)
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    lines = {}
    for line in p.stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in ("server:", "client:"):
            lines.setdefault(parts[0], []).append((parts[1], parts[2][:-1], parts[3].split()))
    return p.stdout, lines


class VsPerftest(unittest.TestCase):
    def test_same_parameters_on_both_sides(self):
        out, lines = dry_run("--table", "same", "--outs", "16", "--perftest-inline", "0")
        self.assertIn("max_qp_rd_atom 16", out)
        self.assertGreaterEqual(len(lines), 8)
        for point, cmds in lines.items():
            with self.subTest(point=point):
                by = {(tool, side): argv for tool, side, argv in cmds}
                pc, sc = flags(by[("perftest", "client")]), flags(by[("rdmasweep", "client")])
                pc.setdefault("-q", "1")  # perftest's latency tests run one QP
                for pf, sf in SAME.items():
                    self.assertEqual(pc.get(pf), sc.get(sf), f"{pf} vs {sf}")
                # No warm-up on either side, the same clock (perftest always reads the TSC).
                self.assertNotIn("--perform_warm_up", pc)
                self.assertEqual(sc.get("--warmup"), "0")
                self.assertEqual(sc.get("--clock"), "tsc")
                op, mode = point.split("/")[:2]
                if op in ("read", "faa") and mode == "bw":  # READs or atomics in flight
                    self.assertEqual(pc.get("-o"), "16")
                if op not in ("read", "faa"):  # perftest turns inline off on this device: so does rdmasweep
                    self.assertEqual(sc.get("-I"), "0")
                # Atomics: perftest's ib_atomic_* with the same operation, 8 bytes on both sides.
                self.assertEqual(pc.get("-A") == "FETCH_AND_ADD", op == "faa")
                self.assertEqual(by[("perftest", "client")][3], f"ib_atomic_{mode}" if op == "faa" else f"ib_{op}_{mode}")
                self.assertEqual(sc.get("--op"), op)
                # Both directions: perftest -b and rdmasweep --bidir, or neither.
                self.assertEqual("-b" in pc, point.endswith("/bidir"))
                self.assertEqual("--bidir" in sc, point.endswith("/bidir"))
                # UD: perftest -c UD and rdmasweep --transport ud, or neither.
                self.assertEqual(pc.get("-c") == "UD", point.endswith("/ud"))
                self.assertEqual(sc.get("--transport") == "ud", point.endswith("/ud"))
                # Both tools' servers and clients pinned alike.
                for side in ("server", "client"):
                    self.assertEqual(by[("perftest", side)][:3], by[("rdmasweep", side)][:3])
                self.assertEqual(by[("perftest", "server")][:3], ["taskset", "-c", "0"])
                self.assertEqual(by[("perftest", "client")][:3], ["taskset", "-c", "1"])

    def test_on_iwarp_rdmasweeps_target_spins_as_perftests_server_does(self):
        # perftest -R waits for its closing message by polling a CQ: its server never
        # sleeps, so in the same-parameters table rdmasweep's passive target must not either.
        vs = tool_script("vs-perftest")
        point = ("read", "lat", 1, 64, 3000, "")
        siw = vs.Device("siw0", 0, 16, 0, iwarp=True, addr="10.0.2.15")
        rxe = vs.Device("rxe0", 1, 16, 0)
        self.assertIn("-R", vs.commands(siw, point, True, True, 18515, "/tmp/o.json")["perftest"][0])
        self.assertIn("--target-spin", vs.rdmasweep_args(siw, point, True, "/tmp/o.json"))
        self.assertNotIn("--target-spin", vs.rdmasweep_args(siw, point, False, "/tmp/o.json"))  # defaults: as is
        self.assertNotIn("--target-spin", vs.rdmasweep_args(rxe, point, True, "/tmp/o.json"))  # no -R: it sleeps

    def test_send_latency_has_two_receives_on_both_sides(self):
        # ib_send_lat reposts a receive only while rcnt + rx_depth <= iters (over UD its
        # rx_depth would be the iteration count: no repost at all); rdmasweep reposts
        # after every receive. Two receives make perftest repost as rdmasweep does.
        _, lines = dry_run("--table", "same", "--perftest-inline", "0")
        for point in ("send/lat/qps:1/size:64", "send/lat/qps:1/size:64/ud"):
            by = {(t, s): flags(a) for t, s, a in lines[point]}
            for side in ("server", "client"):
                self.assertEqual(by[("perftest", side)].get("-r"), "2", point)
            self.assertEqual(by[("rdmasweep", "client")].get("-r"), "2", point)
        by = {(t, s): flags(a) for t, s, a in lines["write/lat/qps:1/size:64"]}
        self.assertNotIn("-r", by[("perftest", "client")])  # no receives

    def test_inline_follows_what_perftest_really_uses(self):
        _, lines = dry_run("--table", "same", "--perftest-inline", "236")
        by = {(t, s): a for t, s, a in lines["send/lat/qps:1/size:64"]}
        self.assertEqual(flags(by[("perftest", "client")]).get("-I"), "64")
        self.assertEqual(flags(by[("rdmasweep", "client")]).get("-I"), "64")
        by = {(t, s): a for t, s, a in lines["send/bw/qps:4/size:4096"]}
        self.assertEqual(flags(by[("rdmasweep", "client")]).get("-I"), "0")  # over perftest's inline

    def test_defaults_table_passes_only_the_point(self):
        _, lines = dry_run("--table", "defaults")
        for point, cmds in lines.items():
            by = {(t, s): flags(a) for t, s, a in cmds}
            for f in ("-t", "-Q", "-I", "-o", "-r"):
                self.assertNotIn(f, by[("perftest", "client")], point)
            for f in ("--warmup", "-I", "--outs", "-t", "-Q"):
                self.assertNotIn(f, by[("rdmasweep", "client")], point)


class TwoHosts(unittest.TestCase):
    """--server-host: both tools' servers on the other host over ssh, the same arguments."""

    def test_servers_run_over_ssh_with_the_local_arguments_and_clients_connect_there(self):
        _, local = dry_run("--table", "pacing", "--only", "write", "--shares", "50", "--no-pin", "--timeout", "77")
        _, remote = dry_run("--table", "pacing", "--only", "write", "--shares", "50", "--server-host", "rxe-a",
                            "--timeout", "77")
        self.assertEqual(sorted(local), sorted(remote))
        for name in remote:
            with self.subTest(point=name):
                here = {(t, s): a for t, s, a in local[name]}
                for tool, side, argv in remote[name]:
                    if side == "server":
                        self.assertEqual(argv[:6], ["ssh", "rxe-a", "exec", "timeout", "-k", "5"])
                        self.assertEqual(argv[6], "77")  # ends by itself within the round's --timeout
                        want = [a for a in here[(tool, side)] if a not in ("--bind", "127.0.0.1")]
                        self.assertEqual(argv[7:], want)  # rdmasweep's server listens on every address there
                    else:
                        self.assertNotIn("taskset", argv)
                        self.assertIn("rxe-a", argv)
                        self.assertNotIn("127.0.0.1", argv)


class Pacing(unittest.TestCase):
    """--table pacing: both tools asked for the same offered rate on the same point."""

    def test_both_tools_paced_at_the_same_share_of_the_flat_out_rate(self):
        _, lines = dry_run("--table", "pacing", "--shares", "5,90", "--flat-out", "200000", "--pacing-seconds", "2")
        paced = {name: cmds for name, cmds in lines.items() if "/rate:" in name}
        self.assertEqual(sorted({n.split("/")[0] for n in paced}), ["read", "send", "write"])
        self.assertEqual(len(paced), 3 * 2 * 2)  # ops x shares x arrivals
        for name, cmds in paced.items():
            with self.subTest(point=name):
                by = {(t, s): flags(a) for t, s, a in cmds}
                share = float(name.split("/rate:")[1].split("%")[0])
                pps = round(200000 * share / 100)
                sc = by[("rdmasweep", "client")]
                self.assertEqual(sc["--rate"], f"{pps}pps")
                self.assertEqual(sc["-Q"], "1")
                self.assertEqual(sc["-n"], str(max(1000, 2 * pps)))  # about --pacing-seconds at the rate
                if name.endswith("/poisson"):  # perftest has no random arrivals: rdmasweep alone
                    self.assertEqual(sc["--arrivals"], "poisson")
                    self.assertNotIn(("perftest", "client"), by)
                    continue
                self.assertEqual(sc["--arrivals"], "constant")
                argv = {(t, s): a for t, s, a in cmds}
                for side in ("server", "client"):
                    pc = by[("perftest", side)]
                    for f in (f"--rate_limit={pps}", "--rate_units=p", "--rate_limit_type=SW", "--burst_size=1"):
                        self.assertIn(f, argv[("perftest", side)], side)
                    for f in ("-n", "-Q", "-s", "-q", "-t"):
                        self.assertEqual(pc.get(f), sc.get(f), f"{side} {f}")

    def test_the_flat_out_rate_is_measured_signaling_every_message_on_both(self):
        _, lines = dry_run("--table", "pacing", "--only", "read")
        flat = {(t, s): flags(a) for t, s, a in lines["read/bw/qps:1/size:64/flat-out"]}
        self.assertEqual(flat[("perftest", "client")]["-Q"], "1")
        self.assertEqual(flat[("rdmasweep", "client")]["-Q"], "1")
        self.assertNotIn("--rate", flat[("rdmasweep", "client")])
        self.assertFalse(any(k.startswith("--rate_limit") for k in flat[("perftest", "client")]))
        self.assertFalse(any(n.startswith(("write", "send")) for n in lines))  # --only

    def test_a_share_outside_0_to_100_is_refused_in_one_line(self):
        for bad in ("0", "150", "5,-1", "half"):
            p = run_tool("vs-perftest", "--dry-run", "--table", "pacing", "--shares", bad)
            self.assertNotEqual(p.returncode, 0, bad)
            self.assertIn("percentages above 0 and at most 100", p.stderr)

    def test_the_error_is_each_tools_achieved_rate_against_the_offered_one(self):
        pv = tools_module("pacing_vs")
        runs = {"perftest": [{"Mmsg/s": 0.0925}, {"Mmsg/s": 0.0930}, {"Mmsg/s": 0.0920}],
                "rdmasweep": [{"Mmsg/s": 0.0999}, {"Mmsg/s": 0.1001}, {"Mmsg/s": 0.0980}]}
        r = pv.row("write/bw/qps:1/size:64", 50, 100000, "constant", runs)
        self.assertAlmostEqual(r["perftest_error_pct"], -7.5)
        self.assertAlmostEqual(r["rdmasweep_error_pct"], -0.1)
        self.assertTrue(r["rdmasweep_within"])
        r = pv.row("write/bw/qps:1/size:64", 50, 100000, "constant", {"rdmasweep": runs["perftest"]})
        self.assertFalse(r["rdmasweep_within"])  # 7.5 % short
        self.assertNotIn("perftest_error_pct", r)  # Poisson rows: rdmasweep alone
        # Poisson: a run's error is against what its own schedule offered (its gaps' mean),
        # which rdmasweep's results say; perftest's and constant runs are against the rate asked.
        r = pv.row("write/bw/qps:1/size:64", 5, 1894, "poisson", {"rdmasweep": [{"Mmsg/s": 0.001525, "offered/s": 1530}]})
        self.assertAlmostEqual(r["rdmasweep_error_pct"], (1525 / 1530 - 1) * 100)
        self.assertEqual(r["rdmasweep_offered_rounds"], [1530])

    def test_the_row_says_how_many_posts_were_late_and_how_many_a_full_qp_held(self):
        pv = tools_module("pacing_vs")
        rounds = [{"Mmsg/s": 0.0990, "late": 5, "late-qp-full": 0},     # -1.0 %: the median round
                  {"Mmsg/s": 0.0900, "late": 900, "late-qp-full": 880},  # -10 %: the device behind
                  {"Mmsg/s": 0.0995, "late": 3, "late-qp-full": 0}]
        r = pv.row("read/bw/qps:1/size:64", 90, 100000, "constant", {"rdmasweep": rounds})
        self.assertEqual(r["rdmasweep_late_rounds"], [5, 900, 3])
        self.assertEqual(r["rdmasweep_late_qp_full_rounds"], [0, 880, 0])
        with mock.patch("sys.stdout", new_callable=io.StringIO) as out:
            pv.print_rows([r])
        line = out.getvalue().strip().splitlines()[-1]
        self.assertTrue(line.startswith("read/bw/qps:1/size:64"), line)
        self.assertEqual(line.split()[-2:], ["5", "0"])  # the median round's, not the worst one's


class Rounds(unittest.TestCase):
    def test_a_client_that_never_ends_is_killed_at_the_timeout(self):
        vs = tool_script("vs-perftest")
        sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
        t0 = time.time()
        with self.assertRaises(vs.Hung) as e:
            vs.run_pair(sleeper, sleeper, timeout=1)
        self.assertLess(time.time() - t0, 20)  # both killed: neither waited out its sleep
        self.assertIn("no result within 1 s", str(e.exception))

    def test_a_round_that_printed_no_figures_is_left_out_and_said_so(self):
        vs = tool_script("vs-perftest")
        point = ("send", "bw", 1, 64, 1000, "")
        perftest = iter([{"Gb/s": 0.0, "Mmsg/s": 0.0}, {"Gb/s": 0.02, "Mmsg/s": 0.04},
                         {"Gb/s": math.inf, "Mmsg/s": 0.04}])
        args = mock.Mock(rounds=3, timeout=30)
        with mock.patch.object(vs, "run_pair", return_value=("", "")), \
                mock.patch.object(vs, "commands", return_value={"perftest": ([], []), "rdmasweep": ([], [])}), \
                mock.patch.object(vs, "perftest_result", side_effect=lambda out, p: next(perftest)), \
                mock.patch.object(vs, "rdmasweep_result", return_value={"Gb/s": 0.03, "Mmsg/s": 0.06}), \
                mock.patch("sys.stdout") as out:
            runs, _ = vs.run_rounds("rxe0", point, True, False, 18000, "r.json", args, [])
        self.assertEqual(runs["perftest"], [{"Gb/s": 0.02, "Mmsg/s": 0.04}])
        self.assertEqual(len(runs["rdmasweep"]), 3)
        said = "".join(str(c.args[0]) for c in out.write.call_args_list if c.args)
        self.assertIn("send/bw/qps:1/size:64 round 1 perftest  left out: it printed no figures (Gb/s 0", said)
        self.assertIn("round 3 perftest  left out", said)

    def test_a_client_that_fails_is_left_out_and_the_run_goes_on(self):
        vs = tool_script("vs-perftest")
        failing = [sys.executable, "-c", "import sys; print('Bad wc status -- 5 -- 5'); sys.exit(1)"]
        with self.assertRaises(vs.RoundFailed) as e:
            vs.run_pair([sys.executable, "-c", "pass"], failing, timeout=30)
        self.assertIn("Bad wc status", str(e.exception))
        point = ("write", "lat", 1, 64, 1000, "")
        pairs = iter([vs.RoundFailed("ib_write_lat failed (1)")] + [("", "")] * 5)

        def run_pair(*a, **k):
            r = next(pairs)
            if isinstance(r, Exception):
                raise r
            return r
        args, lost = mock.Mock(rounds=3, timeout=30), []
        figures = {"p50 us": 17.0, "p99 us": 40.0, "min us": 16.0}
        with mock.patch.object(vs, "run_pair", side_effect=run_pair), \
                mock.patch.object(vs, "commands", return_value={"perftest": ([], []), "rdmasweep": ([], [])}), \
                mock.patch.object(vs, "perftest_result", return_value=figures), \
                mock.patch.object(vs, "rdmasweep_result", return_value=figures), \
                mock.patch("sys.stdout") as out:
            runs, _ = vs.run_rounds("siw0", point, True, False, 18000, "r.json", args, lost)
        self.assertEqual((len(runs["perftest"]), len(runs["rdmasweep"])), (2, 3))
        self.assertEqual(lost, ["write/lat/qps:1/size:64 round 1 perftest (failed)"])
        said = "".join(str(c.args[0]) for c in out.write.call_args_list if c.args)
        self.assertIn("round 1 perftest  failed, left out: ib_write_lat failed (1)", said)

    def test_a_paced_round_with_no_late_post_counts(self):
        vs = tool_script("vs-perftest")
        paced = {"Gb/s": 0.0005, "Mmsg/s": 0.00099, "offered/s": 992, "late": 0, "late-qp-full": 0}
        self.assertTrue(vs.figures_measured(paced))
        self.assertFalse(vs.figures_measured({**paced, "Mmsg/s": 0.0}))

    def test_a_client_that_ends_returns_both_outputs(self):
        vs = tool_script("vs-perftest")
        cli, srv = vs.run_pair([sys.executable, "-c", "print('server')"], [sys.executable, "-c", "print('client')"],
                               timeout=30)
        self.assertEqual((cli.strip(), srv.strip()), ("client", "server"))


@unittest.skipUnless(importlib.util.find_spec("scipy"), "needs python3-scipy (tools/test runs these with it)")
class Summary(unittest.TestCase):
    """Each figure's row: medians, ratio, the Mann-Whitney p of the rounds and its verdict."""

    def setUp(self):
        self.vs = tool_script("vs-perftest")

    def test_rounds_apart_are_a_significant_difference_either_way(self):
        perftest, rdmasweep = [10.0 + i for i in range(10)], [30.0 + i for i in range(10)]
        r = self.vs.summary_row("write/bw", "gbps", perftest, rdmasweep, "higher")
        self.assertEqual((r["rounds"], r["perftest"], r["rdmasweep"]), ("10/10", 14.5, 34.5))
        self.assertAlmostEqual(r["ratio"], 34.5 / 14.5)
        # U = 0 of 100: scipy's normal approximation (both sides over 8 rounds), continuity corrected
        self.assertAlmostEqual(r["p"], math.erfc((50 - 0.5) / math.sqrt(10 * 10 * 21 / 12) / math.sqrt(2)), places=9)
        self.assertEqual(r["verdict"], "rdmasweep better")
        # the same rounds as latency (lower is better): worse
        self.assertEqual(self.vs.summary_row("read/lat", "p50", perftest, rdmasweep, "lower")["verdict"],
                         "rdmasweep worse")

    def test_interleaved_rounds_are_no_significant_difference(self):
        r = self.vs.summary_row("read/lat", "p99", [1, 3, 5, 7, 9], [2, 4, 6, 8, 10], "lower")
        self.assertAlmostEqual(r["p"], 0.6904761904761905, places=12)
        self.assertEqual(r["verdict"], "no significant difference")

    def test_without_scipy_the_medians_stay_and_the_row_says_why_there_is_no_p(self):
        where = sys.modules[self.vs.summary_row.__module__]  # rdmasweep_py.vs_summary
        with mock.patch.object(where, "have_scipy", lambda: False):
            r = self.vs.summary_row("send/bw", "gbps", [1, 2, 3, 4], [5, 6, 7, 8], "higher")
        self.assertEqual((r["perftest"], r["rdmasweep"], r["p"]), (2.5, 6.5, None))
        self.assertEqual(r["verdict"], "no p: needs python3-scipy")

    def test_too_few_rounds_give_no_p(self):
        r = self.vs.summary_row("send/bw", "gbps", [1, 2], [3, 4], "higher")
        self.assertIsNone(r["p"])
        self.assertEqual(r["verdict"], "too few rounds for p < 0.05")


if __name__ == "__main__":
    unittest.main()
