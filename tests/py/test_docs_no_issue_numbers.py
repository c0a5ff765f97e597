"""The docs speak to users: no "issue N" citations in README.md, docs/*.md or docs/lab/*
(an issue number means nothing to a reader of the docs; the sentence says what it meant).
Fails naming each file:line that cites one; the pattern is checked on made-up lines first."""
import glob
import os
import re
import sys

from common import Checks

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
CITE = re.compile(r"\bissues?[ -]#?\d+|\bissue \d+'s|\bissue #\d+", re.I)


def main():
    t = Checks()
    hits = [s for s in ("see issue 42", "(Issue 13.10)", "the issue-28 round", "issue #7") if CITE.search(s)]
    t.check(len(hits) == 4 and not CITE.search("the kernel issues two loads"),
            "the pattern finds citations and leaves the verb alone: %s" % hits)
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + sorted(
        p for p in glob.glob(os.path.join(ROOT, "docs", "lab", "*")) if p.endswith((".md", ".py", ".sh", ".txt")))
    found = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if CITE.search(line):
                    found.append("%s:%d: %s" % (os.path.relpath(path, ROOT), n, line.strip()[:100]))
    t.check(len(files) > 10, "%d doc files read" % len(files))
    t.check(not found, "no issue numbers in the docs%s" % ("" if not found else ":\n    " + "\n    ".join(found)))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
