"""What the tool scripts (tools/plot, tools/compare, tools/vs-perftest) share: the
one-line error exit, argparse with one-line errors, and re-running a script under
a Python that can import what it needs. Stdlib only and imports nothing else of
the package, so a script can use it before matplotlib or scipy is importable."""

import argparse
import importlib
import os
import shutil
import subprocess
import sys

# Modules a script was already re-run for (comma-separated): never loop between interpreters.
REEXEC_ENV = "RDMASWEEP_TOOLS_REEXEC"
# Where to look for a Python with the module: Debian's own first (a python3 first on
# PATH, e.g. a venv or pyenv's, often cannot see Debian's python3-matplotlib or
# python3-scipy), then the one on PATH.
INTERPRETERS = ("/usr/bin/python3", "python3")


def fail(prog, msg, status=2):
    """Prints "PROG: MSG" on stderr and exits with status (2: bad input or setup)."""
    print(f"{prog}: {msg}", file=sys.stderr)
    sys.exit(status)


class ArgParser(argparse.ArgumentParser):
    """argparse with one-line errors ("tools/x: message", exit 2) instead of usage dumps."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _can_import(exe, module):
    return subprocess.run([exe, "-c", f"import {module}"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def ensure_module(module, apt_package, prog):
    """Returns when this interpreter can import module; else re-runs the script
    (sys.argv, as it was invoked, so a symlink's name stays the program's name)
    under the first of INTERPRETERS that can, once; else fails with one line
    naming the Debian package to install."""
    try:
        importlib.import_module(module)
        return
    except ImportError:
        pass
    done = [m for m in os.environ.get(REEXEC_ENV, "").split(",") if m]
    if module not in done:
        me = os.path.realpath(sys.executable)
        for cand in INTERPRETERS:
            exe = shutil.which(cand)
            if not exe or os.path.realpath(exe) == me or not _can_import(exe, module):
                continue
            os.environ[REEXEC_ENV] = ",".join(done + [module])
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(exe, [exe, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    fail(prog, f"needs {module}: apt-get install {apt_package}")
