"""Shared helpers for the tools/ tests: paths, running a tool, building result files,
reading the pictures a tool drew."""

import copy
import gzip
import importlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
TOOLS = os.path.join(ROOT, "tools")
PACKAGE = os.path.join(TOOLS, "rdmasweep_py")


def tools_module(name):
    """tools/rdmasweep_py/NAME.py (e.g. "results"), imported from its place in the
    tree: the package is registered once under its own name, so its modules'
    relative imports and a tool script's `from rdmasweep_py import ...` resolve."""
    if "rdmasweep_py" not in sys.modules:
        spec = importlib.util.spec_from_file_location("rdmasweep_py", os.path.join(PACKAGE, "__init__.py"),
                                                      submodule_search_locations=[PACKAGE])
        pkg = importlib.util.module_from_spec(spec)
        sys.modules["rdmasweep_py"] = pkg
        spec.loader.exec_module(pkg)
    return importlib.import_module("rdmasweep_py." + name)


def tool_script(name):
    """tools/NAME (a script without .py) imported as a module, e.g. to call its functions."""
    tools_module("common")  # the package the script imports
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_") + "_tool", os.path.join(TOOLS, name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def run_tool(name, *args, timeout=300):
    """Runs tools/NAME with this interpreter; returns the CompletedProcess."""
    return subprocess.run([sys.executable, os.path.join(TOOLS, name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def read_image(path):
    """A PNG's pixels as matplotlib reads it: an array of height x width x channels
    (RGB or RGBA), floats in 0..1. Imports matplotlib: only the tests that read
    pictures need it."""
    import matplotlib.image
    return matplotlib.image.imread(path)


def colour_stats(path):
    """(distinct colours, share of pixels that are not the most common colour)."""
    import numpy
    img = read_image(path)
    px = numpy.round(img * 255).astype(numpy.uint8).reshape(-1, img.shape[2] if img.ndim == 3 else 1)
    _colours, counts = numpy.unique(px, axis=0, return_counts=True)
    return len(counts), 1 - counts.max() / len(px)


def load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


def save(doc, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return path


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rdmasweep-tools-test-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assert_renders(self, html):
        """The HTML page renders in headless Chromium to something that is not blank."""
        if os.environ.get("RDMASWEEP_SKIP_BROWSER") == "1":
            self.skipTest("RDMASWEEP_SKIP_BROWSER=1")
        browser = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
        self.assertIsNotNone(browser, "no headless browser: apt-get install chromium "
                                      "(or set RDMASWEEP_SKIP_BROWSER=1 to skip this test)")
        profile = tempfile.mkdtemp(prefix="rdmasweep-chromium-")
        self.addCleanup(shutil.rmtree, profile, ignore_errors=True)
        shot = self.path("shot.png")
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1280,2000",
               "file://" + os.path.abspath(html)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        self.assertTrue(os.path.isfile(shot), f"no screenshot (exit {r.returncode}): {r.stderr[-2000:]}")
        colours, not_background = colour_stats(shot)
        # A blank or error page has a handful of colours; charts have thousands.
        self.assertGreater(colours, 500, "screenshot looks blank")
        self.assertGreater(not_background, 0.05, "screenshot is mostly one colour")

    def unpack_rich(self):
        """The real 96-point sweep (write, bw+lat, 1-16 QPs, 64 B-64 KiB, CQ depth
        64 and 1024, 3 repetitions) with its histograms, unpacked into the temp dir."""
        out = self.path("rich.json")
        for src, dst in (("rich.json.gz", out), ("rich.hist.json.gz", self.path("rich.hist.json"))):
            gunzip(src, dst)
        return out

    def unpack_threads(self):
        """A real --threads sweep on Soft-RoCE (configs/threads.json in the rxe lab: WRITE
        and SEND bw, 1 and 2 threads, CQ per thread or shared, 1 and 4 QPs per thread,
        64 B and 4 KiB, 1 s per point)."""
        out = self.path("threads.json")
        for src, dst in (("threads.json.gz", out), ("threads.hist.json.gz", self.path("threads.hist.json"))):
            gunzip(src, dst)
        return out

    def unpack_qp_scaling(self):
        """A real QP-scaling sweep on Soft-RoCE (SEND bw, 64 B, 1-1024 QPs x4, with and
        without SRQ, 1 s per point, --cq-policy cap shrank rx_depth at 256 and 1024 QPs)."""
        out = self.path("qps.json")
        for src, dst in (("qp-scaling.json.gz", out), ("qp-scaling.hist.json.gz", self.path("qps.hist.json"))):
            gunzip(src, dst)
        return out

    def copy_demo(self, name="demo"):
        """demo.json (real, quick.json on Soft-RoCE) and its .hist.json under NAME."""
        for ext in (".json", ".hist.json"):
            shutil.copy(os.path.join(DATA, "demo" + ext), self.path(name + ext))
        return self.path(name + ".json")


def gunzip(src, dst):
    """tests/tools/data/SRC (gzipped) written out to DST."""
    with gzip.open(os.path.join(DATA, src), "rb") as f, open(dst, "wb") as g:
        shutil.copyfileobj(f, g)


def with_reps(template, name, metric_values):
    """Iteration entries of point NAME, one per repetition, from a template entry;
    metric_values maps metric -> list of values (one per repetition)."""
    reps = len(next(iter(metric_values.values())))
    out = []
    for i in range(reps):
        e = copy.deepcopy(template)
        e.update(name=name, run_name=name, run_type="iteration", repetitions=reps, repetition_index=i)
        for m, vals in metric_values.items():
            e[m] = vals[i]
        out.append(e)
    return out

def find_binary():
    """(path or None, why not)."""
    if os.environ.get("RDMASWEEP_BIN"):
        b = os.environ["RDMASWEEP_BIN"]
        return (b, "") if os.path.isfile(b) and os.access(b, os.X_OK) else (None, f"RDMASWEEP_BIN={b}: not an executable")
    cands = [os.path.join(ROOT, "build", "bench", "rdmasweep"),
             os.path.join(os.path.dirname(ROOT), "build", "bench", "rdmasweep")]
    if os.environ.get("RDMASWEEP_BUILD_DIR"):
        cands.insert(0, os.path.join(os.environ["RDMASWEEP_BUILD_DIR"], "bench", "rdmasweep"))
    found = next((c for c in cands if os.path.isfile(c) and os.access(c, os.X_OK)), None)
    return found, "" if found else ("no built rdmasweep: set RDMASWEEP_BIN or build it (cmake -S . -B build && "
                                    "cmake --build build --target rdmasweep)")


class NeedsBinary(unittest.TestCase):
    """A test of the built binary (self.binary): skipped without one, except under CI
    or with RDMASWEEP_BIN set, where a missing binary fails."""

    @classmethod
    def setUpClass(cls):
        cls.binary, cls.why = find_binary()

    def setUp(self):
        if self.binary is None:
            if os.environ.get("CI") or os.environ.get("RDMASWEEP_BIN"):
                self.fail(self.why + " (CI or RDMASWEEP_BIN set: not skipped)")
            self.skipTest(self.why)
