"""tools/check-layering on a copy of the tree: the tree as committed passes, and each
rule fails on the include that breaks it (core/'s folder order, a file pair that
depends on each other both ways, bench/ reaching into core/verbs/)."""

import os
import shutil
import subprocess
import tempfile
import unittest

from _util import ROOT

CHECK = os.path.join(ROOT, "tools", "check-layering")


class Layering(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rdmasweep-layering-")
        for d in ("core", "bench"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(self.tmp, d))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def check(self):
        return subprocess.run(["bash", CHECK, self.tmp], capture_output=True, text=True, timeout=120)

    def add_include(self, path, target):
        p = os.path.join(self.tmp, path)
        with open(p) as f:
            text = f.read()
        with open(p, "w") as f:
            f.write(f'#include "{target}"\n' + text)

    def test_tree_as_committed_passes(self):
        r = self.check()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("check-layering: ok", r.stdout)

    def test_a_folder_including_a_later_one_fails(self):
        self.add_include("core/engine/loop.hpp", "core/point/session.hpp")
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn('core/engine/loop.hpp:1: #include "core/point/session.hpp"', r.stderr)
        self.assertIn("core/engine/ comes before core/point/", r.stderr)

    def test_an_earlier_folder_may_be_included(self):
        self.add_include("core/point/lanes.hpp", "core/measure/clock.hpp")
        self.assertEqual(self.check().returncode, 0)

    def test_two_files_depending_on_each_other_fail(self):
        # session.cpp already includes side.hpp; side.cpp including session.hpp closes the loop.
        self.add_include("core/point/side.cpp", "core/point/session.hpp")
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("core/point/session <-> core/point/side", r.stderr)

    def test_a_folder_outside_the_layers_fails(self):
        os.makedirs(os.path.join(self.tmp, "core", "misc"))
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("core/misc", r.stderr)

    def test_bench_may_not_include_verbs(self):
        self.add_include("bench/server_cmd.cpp", "core/verbs/device.hpp")
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("bench/ may not include core/verbs/", r.stderr)


if __name__ == "__main__":
    unittest.main()
