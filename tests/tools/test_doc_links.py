"""README.md and docs/*.md: every relative link and image names a file that a fresh
clone has (on disk, and tracked by git when this is a git checkout, so a file that
.gitignore keeps out is caught too), and so does every kept result cited by its path
alone in backticks (`reports/...`, e.g. a lab run's log)."""

import glob
import os
import re
import subprocess
import unittest

from _util import ROOT

# [text](target) and ![alt](target); the target ends at whitespace (a "title") or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[^)]*)?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CITED = re.compile(r"`(reports/[^`\s]+)`")  # a kept result named on its own, not inside a command


def markdown_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def relative_targets(path):
    """(line number, target without #fragment) of each relative link outside code blocks."""
    out, fenced = [], False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = m.group(1).split("#", 1)[0]
                if target and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, mailto: ...
                    out.append((n, target))
            for m in CITED.finditer(line):  # relative to the repository's root, as the docs write them
                out.append((n, os.path.relpath(os.path.join(ROOT, m.group(1)), os.path.dirname(path))))
    return out


def tracked_files():
    """Paths git tracks under ROOT (relative, "/"-separated), or None outside a git checkout."""
    try:
        r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, timeout=60)
    except OSError:
        return None
    if r.returncode != 0:
        return None
    return set(p.decode() for p in r.stdout.split(b"\0") if p)


def missing_targets():
    tracked = tracked_files()
    missing = []
    for md in markdown_files():
        for n, target in relative_targets(md):
            full = os.path.normpath(os.path.join(os.path.dirname(md), target))
            rel = os.path.relpath(full, ROOT).replace(os.sep, "/")
            where = f"{os.path.relpath(md, ROOT)}:{n}: {target}"
            if not os.path.exists(full):
                missing.append(where + " (no such file)")
            elif tracked is not None and os.path.isfile(full) and rel not in tracked:
                missing.append(where + " (not in git: ignored or never added)")
            elif tracked is not None and os.path.isdir(full) and not any(t.startswith(rel + "/") for t in tracked):
                missing.append(where + " (a directory with nothing in git)")
    return missing


class DocLinks(unittest.TestCase):
    def test_parser_finds_links_and_images_and_skips_urls(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write("see [a](docs/a.md#part) and ![chart](x/y.png \"t\") and [web](https://e.org/z)\n"
                    "[anchor](#here) `[not](code.md)`\n```\n[fenced](no.md)\n```\n[last](b.txt)\n"
                    "log: `reports/x.txt`, not `tools/plot reports/y.json`\n")
        try:
            got = [(n, os.path.normpath(os.path.join(os.path.dirname(f.name), t))) for n, t in relative_targets(f.name)]
            here = os.path.dirname(f.name)
            self.assertEqual(got, [(1, os.path.join(here, "docs/a.md")), (1, os.path.join(here, "x/y.png")),
                                   (6, os.path.join(here, "b.txt")), (7, os.path.join(ROOT, "reports/x.txt"))])
        finally:
            os.unlink(f.name)

    def test_every_linked_file_is_in_a_fresh_clone(self):
        missing = missing_targets()
        self.assertEqual(missing, [], "linked from the documentation but missing from a fresh clone:\n  " +
                         "\n  ".join(missing))


if __name__ == "__main__":
    unittest.main()
