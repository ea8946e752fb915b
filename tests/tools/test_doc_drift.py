"""The lists in docs that name the code's parts (knobs, sweep files, installed commands)
against the code itself, so a knob, a sweep file or a tool added later cannot be left
out of them unnoticed."""

import json
import os
import re
import subprocess
import unittest

from _util import ROOT, NeedsBinary


def read(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return f.read()


def knob_keys():
    return [k["key"] for k in json.loads(read("tools", "rdmasweep_py", "knobs.json"))]


def installed_tools():
    """The Python tools packaging/CMakeLists.txt installs as bin/rdmasweep-TOOL."""
    m = re.search(r"foreach\(tool ([a-z ]+)\)", read("packaging", "CMakeLists.txt"))
    return m.group(1).split()


def backticked(text):
    return set(re.findall(r"`([a-z_]+)`", text))


class DocDrift(unittest.TestCase):
    def test_usage_lists_every_sweep_file_key(self):
        m = re.search(r"Keys, one per knob of the table.*?`description`", read("docs", "usage.md"), re.S)
        self.assertIsNotNone(m, "docs/usage.md lost its sweep-file keys paragraph")
        missing = set(knob_keys()) - backticked(m.group(0))
        self.assertFalse(missing, f"docs/usage.md's sweep-file keys leave out {sorted(missing)}")

    def test_results_config_field_lists_every_knob(self):
        m = re.search(r"## The `config` field\n(.*?)\n\n", read("docs", "results.md"), re.S)
        missing = set(knob_keys()) - backticked(m.group(1))
        self.assertFalse(missing, f"docs/results.md's `config` keys leave out {sorted(missing)}")

    def test_usage_describes_every_shipped_sweep_truly(self):
        doc = read("docs", "usage.md")
        section = doc[doc.index("## Sweep files"):]
        for name in sorted(os.listdir(os.path.join(ROOT, "configs"))):
            with self.subTest(sweep=name):
                m = re.search(r"`configs/%s`\s+\(([^)]*)" % re.escape(name), section)
                self.assertIsNotNone(m, f"docs/usage.md's sweep files do not describe configs/{name}")
                ops = json.loads(read("configs", name)).get("op", ["send"])
                if "every operation" in m.group(1):
                    self.assertEqual(set(ops), {"send", "write", "read", "cas", "faa"},
                                     f"configs/{name} is called 'every operation' but has {ops}")

    def test_install_lists_every_installed_tool(self):
        doc = read("docs", "install.md")
        for tool in installed_tools():
            with self.subTest(tool=tool):
                self.assertIn(f"bin/rdmasweep-{tool}", doc)


class PerftestClaims(unittest.TestCase):
    """perftest changes (upstream added --data_validation after Debian 12's 4.5): a
    sentence saying perftest lacks something names the version it was checked on."""

    def test_what_perftest_lacks_names_its_version(self):
        texts = {"README.md": read("README.md"), "core/config/knob_table.hpp": read("core", "config", "knob_table.hpp")}
        for name in os.listdir(os.path.join(ROOT, "docs")):
            if name.endswith(".md"):
                texts["docs/" + name] = read("docs", name)
        claim = re.compile(r"perftest\b([^.;|()]{0,25}?)\b(has no|checks no|has none|lacks)\b", re.I)
        for name, text in texts.items():
            for m in claim.finditer(text):
                with self.subTest(file=name, claim=m.group(0)):
                    self.assertRegex(m.group(1), r"\d\.\d", f"{name}: '{m.group(0)}' names no perftest version")


class ManualDrift(NeedsBinary):

    def man(self):
        r = subprocess.run([self.binary, "help", "--man"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def long_options(self, command):
        r = subprocess.run([self.binary, command, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return set(re.findall(r"^\s+(?:-\w \[ )?(--[a-z][a-z-]*)", r.stdout, re.M))

    def test_usage_documents_every_client_and_server_option(self):
        doc = read("docs", "usage.md")
        client = doc[doc.index("## The client and its options"):doc.index("## perftest's flags")]
        server = doc[doc.index("## The server"):doc.index("## Checking a host")]
        for command, section in (("client", client), ("server", server)):
            options = self.long_options(command)
            self.assertGreater(len(options), 5 if command == "server" else 30)
            for o in sorted(options - {"--help"}):
                with self.subTest(command=command, option=o):
                    self.assertTrue(re.search(r"`[^`]*%s\b" % re.escape(o), section),
                                    f"docs/usage.md does not describe {command}'s {o}")

    def test_usage_says_which_client_options_take_a_list(self):
        r = subprocess.run([self.binary, "client", "--help"], capture_output=True, text=True, timeout=60)
        valued = set(re.findall(r"^\s+(?:-\w \[ )?(--[a-z-]+)(?: \])? (?:\[=)?arg", r.stdout, re.M))
        knobs = {k["flag"] for k in json.loads(read("tools", "rdmasweep_py", "knobs.json"))}
        lists = knobs | {"--iters", "--duration", "--warmup", "--repetitions", "--atomic-type", "--connection"}
        self.assertLessEqual(lists, valued | {"--size"})
        doc = read("docs", "usage.md")
        m = re.search(r"The other options take one\s+value: (.*?)\.\n", doc, re.S)
        self.assertIsNotNone(m, "docs/usage.md no longer says which options take one value")
        self.assertEqual(set(re.findall(r"`(--[a-z-]+)`", m.group(1))), valued - lists,
                         "docs/usage.md's options that take one value are not the client's valued non-sweep options")

    def test_see_also_names_every_installed_tool(self):
        see_also = self.man().split(".SH SEE ALSO", 1)[1]
        for tool in installed_tools():
            with self.subTest(tool=tool):
                self.assertIn(f"rdmasweep\\-{tool}", see_also)

    def test_description_names_every_operation_and_the_cq_per_thread(self):
        desc = self.man().split(".SH DESCRIPTION", 1)[1].split(".SH", 1)[0]
        for words in ("SEND", "WRITE", "READ", "compare-and-swap", "fetch-and-add", "per thread", "UD"):
            with self.subTest(words=words):
                self.assertIn(words, desc)


if __name__ == "__main__":
    unittest.main()
