"""tools/mixed-test's oracle: which end refuses which point, read from the refusal's
words; and every committed NIC profile is whole (the stand-in's keys, a named source)."""

import glob
import os
import unittest

from _util import ROOT, tool_script

MT = tool_script("mixed-test")
RXE = {"rc": True, "atomics": True, "max_inline": 256, "max_qp_wr": 1048576, "max_cqe": 32767, "max_rd_atom": 128}
CX5 = dict(RXE, max_inline=220, max_qp_wr=32768, max_rd_atom=16)
EFA = dict(RXE, rc=False, atomics=False, max_inline=0, max_rd_atom=0)
NO_ATOMICS = dict(RXE, atomics=False)


class Foresee(unittest.TestCase):
    def test_a_point_within_both_ends_runs(self):
        self.assertEqual(MT.foresee(CX5, RXE, {"op": "read", "mode": "bw", "bidir": 1}), ("ran", None))

    def test_the_client_checks_its_own_limits_first(self):
        p = {"op": "read", "mode": "bw", "outs": 17}
        self.assertEqual(MT.foresee(CX5, CX5, p), ("refused", ("client", "max_qp")))
        self.assertEqual(MT.foresee(RXE, CX5, p), ("refused", ("server", "max_qp")))

    def test_a_device_without_rc_refuses_every_point_as_such(self):
        for p in MT.points_for(EFA, RXE):
            self.assertEqual(MT.foresee(EFA, RXE, p), ("refused", ("client", "rc")))
            self.assertEqual(MT.foresee(RXE, EFA, p), ("refused", ("server", "rc")))

    def test_atomics_meet_the_end_without_them(self):
        self.assertEqual(MT.foresee(RXE, NO_ATOMICS, {"op": "faa", "mode": "bw"}), ("refused", ("server", "atomic_cap")))

    def test_probes_sit_just_past_the_lower_end(self):
        probes = [p for p in MT.points_for(CX5, RXE) if {"inline", "tx", "outs"} & set(p)]
        self.assertIn({"op": "read", "mode": "bw", "outs": 17}, probes)
        self.assertIn(221, [p.get("inline") for p in probes])
        # 32769 send-queue entries cannot have their CQ within rxe's max_cqe: no probe of it
        self.assertNotIn("tx", {k for p in probes for k in p})
        self.assertEqual(len(MT.points_for(EFA, RXE)), 6)  # no probes past a refusal

    def test_two_profiles_run_what_their_ends_must_agree_on(self):
        self.assertEqual([p["op"] for p in MT.points_for(CX5, CX5, whole=False) if not {"inline", "tx", "outs"} & set(p)],
                         ["read", "faa", "read"])


class Reasons(unittest.TestCase):
    def test_a_limit_is_named_with_its_value(self):
        self.assertEqual(MT.reason_of("rdmasweep client: inline size 101 is over the device's max inline data (100): "
                                      "lower --inline-size"), "max inline data 100")
        self.assertEqual(MT.reason_of("outstanding reads 17 is over the device's max_qp_rd_atom (16): lower --outs"),
                         "max_qp_rd_atom 16")

    def test_capabilities_and_unknown_lines(self):
        self.assertEqual(MT.reason_of("--transport rc: rxe0 (other) has no reliable connected (RC) QPs (...)"), "rc")
        self.assertIsNone(MT.reason_of("work completion failed on QP 0"))

    def test_a_server_refusal_is_the_servers(self):
        results = {"benchmarks": [{"name": "p", "error_occurred": True, "error_message":
                                   "the server reported: server cannot set up p: send-queue depth 1025 is over the "
                                   "device's max_qp_wr (1024): lower --tx-depth"}]}
        self.assertEqual(MT.judge(1, "", results, None, {"op": "write", "mode": "bw", "tx": 1025}),
                         ("refused", ("server", "max_qp_wr 1024")))

    def test_a_failed_point_that_is_no_refusal_fails(self):
        results = {"benchmarks": [{"name": "p", "error_occurred": True, "error_message":
                                   "work completion failed: remote invalid request error"}]}
        self.assertEqual(MT.judge(1, "", results, None, {"op": "read", "mode": "bw"})[0], "failed")
        self.assertEqual(MT.judge(None, "", None, None, {"op": "read", "mode": "bw"})[0], "failed")


class Pairs(unittest.TestCase):
    def test_each_profile_meets_plain_rxe_both_ways_and_every_other_profile(self):
        pairs = MT.pairs_of(["a", "b", "c"])
        for n in "abc":
            self.assertIn((n, "rxe"), pairs)
            self.assertIn(("rxe", n), pairs)
        self.assertEqual({frozenset(p) for p in pairs if "rxe" not in p}, {frozenset("ab"), frozenset("ac"),
                                                                           frozenset("bc")})


class Profiles(unittest.TestCase):
    KEYS = ("name", "transport", "link_layer", "rc", "ud", "vendor_id", "vendor_part_id", "hw_ver", "fw_ver",
            "max_mr_size", "max_qp", "max_qp_wr", "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_mr", "max_pd",
            "max_qp_rd_atom", "max_qp_init_rd_atom", "max_res_rd_atom", "atomic_cap", "max_srq", "max_srq_wr",
            "max_srq_sge", "max_ah", "max_mcast_grp", "max_inline", "active_mtu", "max_mtu", "gid_tbl_len",
            "max_msg_sz", "counters")

    def test_every_profile_names_its_source_and_uses_known_keys(self):
        files = glob.glob(os.path.join(ROOT, "tests/support/verbs-profiles/*.profile"))
        self.assertGreaterEqual(len(files), 6)
        for f in files:
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            self.assertIn("# source", text, f)
            for line in text.splitlines():
                line = line.split("#", 1)[0].strip()
                if line:
                    self.assertIn(line.split("=", 1)[0].strip(), self.KEYS, f"{f}: {line}")


if __name__ == "__main__":
    unittest.main()
