"""tools/check-layering on a copy of the tree: the tree as committed passes, and each
rule fails on the include or call that breaks it (core/'s folder order, a file pair that
depends on each other both ways, bench/ reaching into core/verbs/, control/ and verbs/
reaching out, core/ reaching into bench/, the engine reaching control/ or json through
anything it includes, setup verbs and librdmacm outside verbs/)."""

import os
import re
import shutil
import subprocess
import sys
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
        return subprocess.run([sys.executable, CHECK, self.tmp], capture_output=True, text=True, timeout=120)

    def add_include(self, path, target):
        p = os.path.join(self.tmp, path)
        with open(p) as f:
            text = f.read()
        with open(p, "w") as f:
            f.write(f'#include "{target}"\n' + text)

    def assert_breaks(self, path, target, message):
        """`path` including `target` fails the check, which says `message`."""
        self.add_include(path, target)
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn(message, r.stderr)

    def test_tree_as_committed_passes(self):
        r = self.check()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("check-layering: ok", r.stdout)

    def test_a_folder_including_a_later_one_fails(self):
        self.assert_breaks("core/engine/loop.hpp", "core/point/session.hpp",
                           'core/engine/loop.hpp:1: #include "core/point/session.hpp" breaks the layering: '
                           "core/engine/ comes before core/point/")

    def test_an_earlier_folder_may_be_included(self):
        self.add_include("core/point/lanes.hpp", "core/measure/clock.hpp")
        self.assertEqual(self.check().returncode, 0)

    def test_two_files_depending_on_each_other_fail(self):
        # session.cpp already includes side.hpp; side.cpp including session.hpp closes the loop.
        self.assert_breaks("core/point/side.cpp", "core/point/session.hpp", "core/point/session <-> core/point/side")

    def test_a_folder_outside_the_layers_fails(self):
        os.makedirs(os.path.join(self.tmp, "core", "misc"))
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("core/misc", r.stderr)

    def test_bench_may_not_include_verbs(self):
        self.assert_breaks("bench/server_cmd.cpp", "core/verbs/device.hpp", "bench/ may not include core/verbs/")

    def test_control_includes_only_control_config_and_the_endpoint(self):
        self.assert_breaks("core/control/protocol.hpp", "core/setup/test_resources.hpp",
                           "core/control/ may include only core/control/, core/config/ and core/setup/endpoint.hpp")

    def test_engine_reaches_neither_control_nor_json(self):
        # Directly (a later layer; json itself) or through a header it includes: histogram.hpp
        # may include json by the layers, but loop.hpp includes it, so the chain is named.
        for path, target, message in [
            ("core/engine/loop.hpp", "core/control/protocol.hpp", "core/engine/ comes before core/control/"),
            ("core/engine/loop_bw.cpp", "nlohmann/json_fwd.hpp",
             "core/engine/loop_bw.cpp:1: core/engine/loop_bw.cpp -> nlohmann/json_fwd.hpp"),
            ("core/measure/histogram.hpp", "nlohmann/json.hpp",
             "core/engine/loop.hpp:13: core/engine/loop.hpp -> core/measure/histogram.hpp -> nlohmann/json.hpp "
             "breaks the layering: core/engine/ is only the datapath")]:
            with self.subTest(path=path, target=target):
                self.tearDown()  # a fresh copy of the tree for each
                self.setUp()
                self.assert_breaks(path, target, message)

    def test_verbs_includes_nothing_else_of_core(self):
        self.assert_breaks("core/verbs/device.hpp", "core/config/config.hpp",
                           "core/verbs/ may include nothing from core/ outside core/verbs/")

    def test_core_may_not_include_bench(self):
        self.assert_breaks("core/point/session.cpp", "bench/cli.hpp", "core/ may not include bench/")

    def test_setup_verbs_and_librdmacm_belong_to_verbs(self):
        with open(os.path.join(self.tmp, "core", "point", "side.cpp"), "a") as f:
            f.write("\nvoid f() { ibv_poll_cq(0, 0, 0); ibv_query_port(0, 0, 0); rdma_connect(0, 0); }\n")
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("call ibv_query_port() breaks the layering: only core/verbs/ calls ibv_* setup", r.stderr)
        self.assertIn("call rdma_connect() breaks the layering: only core/verbs/ calls librdmacm", r.stderr)
        self.assertNotIn("ibv_poll_cq", r.stderr)  # the fast path may be called from anywhere


class TestsLinkTheLibraries(unittest.TestCase):
    def test_no_test_target_compiles_a_source_of_core_or_bench_again(self):
        # What the tests need of core/ and bench/ comes from their libraries, as the
        # binaries link them: a source listed again would be built twice, perhaps differently.
        listed = []
        for d, _, files in os.walk(os.path.join(ROOT, "tests")):
            for f in files:
                if f == "CMakeLists.txt":
                    with open(os.path.join(d, f)) as fh:
                        listed += [f"{os.path.relpath(d, ROOT)}/{f}:{n}: {line.strip()}" for n, line in enumerate(fh, 1)
                                   if re.search(r"(SOURCE_DIR\}|\.\.)/(core|bench)/\S*\.(cpp|c)\b", line)]
        self.assertEqual(listed, [])


if __name__ == "__main__":
    unittest.main()
