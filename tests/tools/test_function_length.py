"""No Python function in tools/ or tests/tools/ is over 60 lines (its def to its last
line, docstring and comments included): a reader holds each in their head."""

import ast
import os
import unittest

from _util import ROOT

LIMIT = 60


def python_files():
    for top in ("tools", os.path.join("tests", "tools")):
        for d, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [x for x in dirs if x not in ("__pycache__", "data")]
            for f in sorted(files):
                path = os.path.join(d, f)
                if f.endswith(".py"):
                    yield path
                elif "." not in f:
                    with open(path, "rb") as fh:
                        first = fh.readline()
                    if first.startswith(b"#!") and b"python" in first:
                        yield path


def long_functions(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > LIMIT]


class FunctionLength(unittest.TestCase):
    def test_no_python_function_is_over_the_limit(self):
        found = [f"{os.path.relpath(p, ROOT)}: {name} ({n} lines)" for p in python_files() for name, n in long_functions(p)]
        self.assertEqual(found, [], f"split these into functions of at most {LIMIT} lines")

    def test_the_tools_are_found(self):
        names = {os.path.relpath(p, ROOT) for p in python_files()}
        for expected in ("tools/plot", "tools/check-layering", "tools/rdmasweep_py/charts.py",
                         "tests/tools/test_function_length.py"):
            self.assertIn(expected, names)


if __name__ == "__main__":
    unittest.main()
