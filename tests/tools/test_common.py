"""tools/rdmasweep_py/common.py: the error exit, re-running under a Python that has
a module, and the scripts found and named through a symlink (as installed)."""

import os
import shutil
import subprocess
import sys

from _util import DATA, TOOLS, TempDirCase


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)


def with_package(code):
    """Runs CODE with this interpreter, the tools' package importable."""
    return run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=TOOLS))


def python_without(module):
    """A Python 3 on PATH or in /usr/bin that cannot import module, or None."""
    seen = set()
    for cand in ("python3", "/usr/bin/python3", "python3.11", "python3.12"):
        exe = shutil.which(cand)
        if not exe or os.path.realpath(exe) in seen:
            continue
        seen.add(os.path.realpath(exe))
        if run([exe, "-c", f"import {module}"]).returncode != 0:
            return exe
    return None


class Common(TempDirCase):
    def test_fail_is_one_line_and_the_status(self):
        r = with_package("from rdmasweep_py import common; common.fail('x', 'bad thing')")
        self.assertEqual((r.returncode, r.stderr, r.stdout), (2, "x: bad thing\n", ""))
        r = with_package("from rdmasweep_py import common; common.fail('y', 'gone', status=1)")
        self.assertEqual((r.returncode, r.stderr), (1, "y: gone\n"))

    def test_a_module_no_python_has_is_one_line_naming_the_package(self):
        r = with_package("from rdmasweep_py import common\n"
                             "common.ensure_module('no_such_module_rdmasweep', 'python3-nothing', 'prog')\n"
                             "print('not reached')")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr, "prog: needs no_such_module_rdmasweep: apt-get install python3-nothing\n")
        self.assertEqual(r.stdout, "")

    def test_a_module_this_python_has_returns(self):
        r = with_package("from rdmasweep_py import common\n"
                             "common.ensure_module('json', 'python3', 'prog')\nprint('ok')")
        self.assertEqual((r.returncode, r.stdout), (0, "ok\n"), r.stderr)

    def check_rerun(self, tool, module, apt_package):
        exe = python_without(module)
        if exe is None:
            self.skipTest(f"every Python here has {module}: nothing to re-run from")
        r = run([exe, os.path.join(TOOLS, tool), "--help"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"usage: tools/{tool}", r.stdout)
        # Told it already re-ran once for the module: fails with one line instead.
        r = run([exe, os.path.join(TOOLS, tool), "--help"], env=dict(os.environ, RDMASWEEP_TOOLS_REEXEC=module))
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, f"{tool}: needs {module}: apt-get install {apt_package}\n")

    def test_plot_reruns_under_a_python_with_matplotlib(self):
        self.check_rerun("plot", "matplotlib", "python3-matplotlib")

    def test_compare_reruns_under_a_python_with_scipy(self):
        self.check_rerun("compare", "scipy", "python3-scipy")

    def test_symlinked_scripts_find_their_package_and_keep_their_name(self):
        # As installed: bin/rdmasweep-plot -> ../share/rdmasweep/tools/plot, in a tree of its own.
        tools = os.path.join(self.tmp, "share", "rdmasweep", "tools")
        os.makedirs(tools)
        for f in ("plot", "compare"):
            shutil.copy(os.path.join(TOOLS, f), tools)
        shutil.copytree(os.path.join(TOOLS, "rdmasweep_py"), os.path.join(tools, "rdmasweep_py"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        os.makedirs(self.path("bin"))
        for f in ("plot", "compare"):
            os.symlink(os.path.join(os.pardir, "share", "rdmasweep", "tools", f), self.path("bin/rdmasweep-" + f))
        demo = os.path.join(DATA, "demo.json")
        r = run([self.path("bin/rdmasweep-compare"), demo, demo], cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 regressed", r.stdout)
        r = run([self.path("bin/rdmasweep-compare"), demo, self.path("missing.json")], cwd=self.tmp)
        self.assertEqual((r.returncode, r.stderr), (2, f"rdmasweep-compare: {self.path('missing.json')}: no such file\n"))
        r = run([self.path("bin/rdmasweep-plot"), self.path("missing.json")], cwd=self.tmp)
        self.assertEqual((r.returncode, r.stderr), (2, f"rdmasweep-plot: {self.path('missing.json')}: no such file\n"))
        r = run([self.path("bin/rdmasweep-plot"), "--help"], cwd=self.tmp)
        self.assertIn("usage: rdmasweep-plot", r.stdout)
