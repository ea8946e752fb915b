"""The results context's common keys come from one builder (core/results/context.cpp):
no other source under core/ or bench/ writes one of them, so no command can build a
context of its own that drifts from the others (they did: firmware and rate_gbps only
in the client's, cq_policy missing from the multicast one). What the keys mean is
checked on every command's file in the RDMA stage (tests/rdma/context_check.hpp)."""

import os
import re
import unittest

from _util import ROOT

BUILDER = "core/results/context.cpp"
# Keys only a results context has (not the control protocol's Hello, not anomalies.json).
KEYS = ("schema_version", "git_revision", "library_build_type", "host_name", "sweep_file", "clock_choice", "cq_policy",
        "latency_note", "bytes_note")
# The histogram file (FILE.hist.json) has a schema version of its own.
OTHER_FILES = {("core/results/document.cpp", "schema_version")}
# A key written into JSON: {"key", value} in an initializer, or c["key"] = value.
WRITES = re.compile(r'(\{"(%s)"\s*,|\["(%s)"\]\s*=[^=])' % ("|".join(KEYS), "|".join(KEYS)))


def writers(root):
    """(file, line, text) of every write of a common key outside the builder."""
    out = []
    for top in ("core", "bench"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                if not f.endswith((".cpp", ".hpp")) or rel == BUILDER:
                    continue
                with open(path, errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        out += [(rel, n, line.strip()) for m in WRITES.finditer(line)
                                if (rel, m.group(2) or m.group(3)) not in OTHER_FILES]
    return out


class OneBuilder(unittest.TestCase):
    def test_no_command_writes_a_common_key_itself(self):
        self.assertEqual(writers(ROOT), [], "write these through results_context() (core/results/context.hpp)")

    def test_the_builder_writes_every_key(self):
        with open(os.path.join(ROOT, BUILDER)) as f:
            found = {m.group(2) or m.group(3) for m in WRITES.finditer(f.read())}
        self.assertEqual(found, set(KEYS))

    def test_a_hand_built_context_is_caught(self):
        line = '  return {{"host_name", me.host}, {"device", me.device}};'
        self.assertTrue(WRITES.search(line))
        self.assertTrue(WRITES.search('  c["cq_policy"] = "cap";'))
        self.assertFalse(WRITES.search('  if (c["cq_policy"] == "cap") {}'))  # a read is not a write


if __name__ == "__main__":
    unittest.main()
