"""docs/layout.md lists the tree: every source file of core/ and bench/ is named in its
folder's part of the layout (as `name.*`, `name.cpp`, or by its name), and every folder
there is one of the tree's."""

import os
import re
import unittest

from _util import ROOT

SOURCE = (".cpp", ".hpp", ".in")


def layout_block():
    with open(os.path.join(ROOT, "docs", "layout.md"), encoding="utf-8") as f:
        text = f.read()
    return text.split("```", 2)[1].splitlines()


def section(lines, folders):
    """The lines of the layout under folders[0]/, then within it folders[1]/, ...: a
    folder's part runs from its line to the next line indented no deeper than it."""
    for name in folders:
        start = next((i for i, l in enumerate(lines) if l.strip().split(" ")[0] == name + "/"), None)
        if start is None:
            return None
        depth = len(lines[start]) - len(lines[start].lstrip())
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > depth
                                    or lines[end].lstrip()[0] not in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"):
            end += 1
        lines = lines[start:end]
    return lines


def source_files(top):
    for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
        for f in sorted(files):
            if f.endswith(SOURCE):
                yield os.path.relpath(os.path.join(dirpath, f), ROOT)


class LayoutDoc(unittest.TestCase):
    def test_every_source_file_is_in_its_folders_part(self):
        lines = layout_block()
        for top in ("core", "bench"):
            for path in source_files(top):
                with self.subTest(path=path):
                    folders = os.path.dirname(path).split(os.sep)
                    part = section(lines, folders)
                    self.assertIsNotNone(part, f"docs/layout.md has no part for {'/'.join(folders)}/")
                    stem = os.path.basename(path).split(".")[0]
                    self.assertRegex("\n".join(part), r"(?<![\w/])" + re.escape(stem) + r"(?![\w])",
                                     f"{path} is not named in docs/layout.md under {'/'.join(folders)}/")

    def test_every_folder_in_the_layout_exists(self):
        lines = layout_block()
        stack = []
        for l in lines:
            word = l.strip().split(" ")[0] if l.strip() else ""
            if not word.endswith("/") or "/" in word[:-1]:
                continue
            depth = (len(l) - len(l.lstrip())) // 2
            stack = stack[:depth] + [word[:-1]]
            with self.subTest(folder="/".join(stack)):
                self.assertTrue(os.path.isdir(os.path.join(ROOT, *stack)), "/".join(stack) + "/ is in docs/layout.md but not in the tree")


if __name__ == "__main__":
    unittest.main()
