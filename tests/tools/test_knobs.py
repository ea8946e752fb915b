"""The loader knows every knob of the built rdmasweep (`rdmasweep help --knobs`): its
`config` key, its tag in point names and its default. It reads them from
tools/rdmasweep_py/knobs.json, which must be exactly the binary's `help --knobs`: a knob added
to core/config/knob_table.hpp fails here until that file is written again.

The binary: $RDMASWEEP_BIN, else bench/rdmasweep in $RDMASWEEP_BUILD_DIR, in the
repository's build/, or in a build/ beside the repository. Without one the tests
skip, except under CI (CI set) or with RDMASWEEP_BIN set, where they fail."""

import json
import os
import subprocess
import unittest

from _util import ROOT, NeedsBinary, tools_module

rr = tools_module("results")



class KnobTable(NeedsBinary):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.knobs = None
        if cls.binary:
            r = subprocess.run([cls.binary, "help", "--knobs"], capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                raise AssertionError(f"{cls.binary} help --knobs: exit {r.returncode}: {r.stderr}")
            cls.knobs = json.loads(r.stdout)

    def test_the_loaders_table_is_the_binarys(self):
        with open(os.path.join(ROOT, "tools", "rdmasweep_py", "knobs.json"), encoding="utf-8") as f:
            committed = json.load(f)
        self.assertEqual(committed, self.knobs,
                         "tools/rdmasweep_py/knobs.json differs from the binary's knob table: write it again with "
                         "build/bench/rdmasweep help --knobs > tools/rdmasweep_py/knobs.json")

    def test_every_knob_is_known_to_the_loader(self):
        self.assertGreater(len(self.knobs), 10)
        for k in self.knobs:
            with self.subTest(knob=k["key"]):
                self.assertEqual(set(k), {"key", "tag", "flag", "default", "help"})
                self.assertIn(k["key"], rr.KNOBS, f"{k['key']} ({k['flag']}) is missing from results.KNOBS")
                tag, default = rr.KNOBS[k["key"]]
                self.assertEqual(tag, k["tag"])
                self.assertEqual(default, k["default"])
                self.assertIs(type(default), type(k["default"]))  # False is not 0

    def test_the_loader_knows_no_other_knob(self):
        self.assertEqual(set(rr.KNOBS), {k["key"] for k in self.knobs})
        self.assertTrue(set(rr.RUN_KEYS).isdisjoint(rr.KNOBS))

    def test_name_tags_are_in_the_binary_order(self):
        tags = [k["tag"] for k in self.knobs if k["tag"] and k["tag"] != "srq"]
        self.assertEqual(list(rr.KNOB_NAMES), tags)

    def test_each_knob_off_its_default_reads_as_its_name_does(self):
        # A config with one knob off its default gives the parameters of the name
        # rdmasweep gives that point (the tag appended, ":value" unless a flag).
        base = {k["key"]: k["default"] for k in self.knobs}
        head = "send/bw/qps:1/size:65536/cq:64"
        for k in self.knobs:
            if not k["tag"]:
                continue
            d = k["default"]
            # off the default: a flag on, inline 64, a name kind's other name, a count + 1
            others = {"thread": "process", "process": "thread", "rc": "ud", "none": "1.5mpps", "constant": "poisson"}
            v = True if isinstance(d, bool) else 64 if d == "auto" else others[d] if isinstance(d, str) else d + 1
            with self.subTest(knob=k["key"], value=v):
                cfg = dict(base, **{k["key"]: v, "cq_depth": 64})
                name = head + "/" + k["tag"] + ("" if v is True else f":{v}")
                params = rr.params_from_config(cfg, name)
                self.assertIsNotNone(params)
                self.assertEqual(params, rr.parse_name(name))
                self.assertEqual(params, rr.params_from_config(dict(cfg, cq_depth=0), name))
        self.assertEqual(rr.params_from_config(dict(base, cq_depth=0), head), rr.parse_name(head))


if __name__ == "__main__":
    unittest.main()
