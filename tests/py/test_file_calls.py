"""No two source files call each other (docs/architecture.md: rooms call only downwards).

Reads the symbols each object file defines and needs (`nm`) for the library, the lab
and the tool, and fails on any pair of files where each needs a symbol the other
defines. A pair like that means neither can be read without the other; the shared
piece belongs in a file below both."""
import glob
import os
import subprocess
import sys

from common import Checks

BUILD = os.environ.get("POSENC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "../../build"))
TARGETS = {"library": "posenc_objects.dir", "lab": "posenc_lab.dir", "tool": "posenc_cli.dir"}


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRBC":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            needed.add(parts[1])
    return defined, needed


def main():
    t = Checks()
    for name, folder in TARGETS.items():
        objs = sorted(glob.glob(os.path.join(BUILD, "**", folder, "**", "*.o"), recursive=True))
        if not t.check(len(objs) >= 5, f"{name}: {len(objs)} object files under {BUILD}/**/{folder}"):
            continue
        table = {o.split(folder + "/", 1)[1][:-2]: symbols(o) for o in objs}
        pairs = []
        files = sorted(table)
        for i, a in enumerate(files):
            for b in files[i + 1:]:
                ab = table[a][1] & table[b][0]
                ba = table[b][1] & table[a][0]
                if ab and ba:
                    pairs.append(f"{a} <-> {b} ({sorted(ab)[0]} / {sorted(ba)[0]})")
        t.check(not pairs, f"{name}: no two of {len(files)} files call each other" +
                ("" if not pairs else ": " + "; ".join(pairs)))
    t.finish()


if __name__ == "__main__":
    sys.exit(main())
