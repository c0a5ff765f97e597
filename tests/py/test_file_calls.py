"""No two source files call each other, and the tool's rooms call only downwards
(docs/architecture.md).

1. Pairs: reads the symbols each object file defines and needs (`nm`) for the library,
   the lab and the tool (base/, render/ and cli/ together, so a pair across two rooms is
   seen too), and fails on any pair of files where each needs a symbol the other
   defines. A pair like that means neither can be read without the other; the shared
   piece belongs in a file below both.
2. Rooms of the tool: base/ <- render/ <- cli/. A render/ object needs no symbol that a
   cli/ object defines, and a base/ object none that render/ or cli/ defines (`nm`,
   whatever the symbols are named: the rooms keep the tool's cli_ prefix).
3. Headers: render/ and base/ include no cli/ header, base/ no render/ header, and cli/
   includes render/ only through its public header render.h (never report_assets.h or
   another render/ file), base/ only through base.h."""
import functools
import glob
import os
import re
import subprocess
import sys

from common import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
BUILD = os.environ.get("POSENC_BUILD_DIR", os.path.join(ROOT, "build"))
# the object folders of each room (CMake target names); the tool's main.c is posenc.dir
TOOL_ROOMS = {"base": ["posenc_base.dir"], "render": ["posenc_render.dir"], "cli": ["posenc_cli.dir", "posenc.dir"]}
TARGETS = {"library": ["posenc_objects.dir"], "lab": ["posenc_lab.dir"],
           "tool": [f for folders in TOOL_ROOMS.values() for f in folders]}


@functools.lru_cache(maxsize=None)
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


def source_of(obj, folder):
    """The source an object was built from: build/SUB/CMakeFiles/T.dir/REL.o -> ROOT/SUB/REL."""
    head, rel = obj.split(os.sep + folder + os.sep, 1)
    sub = os.path.relpath(os.path.dirname(head), BUILD)  # head ends in .../CMakeFiles
    return os.path.normpath(os.path.join(ROOT, "" if sub == "." else sub, rel[:-2]))


def objects(folders):
    """{'room/path/file.c': (defined, needed)} for the objects of these target folders. An
    object whose source is gone (a file moved since this build folder was made) is left out:
    CMake does not delete it, and it is no longer linked."""
    table = {}
    for folder in folders:
        for o in sorted(glob.glob(os.path.join(BUILD, "**", folder, "**", "*.o"), recursive=True)):
            source = source_of(o, folder)
            if os.path.exists(source):
                table[os.path.relpath(source, ROOT)] = symbols(o)
    return table


def check_pairs(t, name, table):
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


def check_rooms(t):
    rooms = {room: objects(folders) for room, folders in TOOL_ROOMS.items()}
    for room, table in rooms.items():
        if not t.check(len(table) >= 5, f"{room}/: {len(table)} object files under {BUILD}"):
            return
    defined = {room: {s: f for f, (d, _) in table.items() for s in d} for room, table in rooms.items()}
    for room, above in (("render", ["cli"]), ("base", ["render", "cli"])):
        upward = [f"{f} needs {s} ({defined[a][s]})" for f, (_, needed) in sorted(rooms[room].items())
                  for a in above for s in sorted(needed) if s in defined[a]]
        t.check(not upward, f"{room}/ calls nothing in {' or '.join(a + '/' for a in above)}" +
                ("" if not upward else ": " + "; ".join(upward[:8])))


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_includes(t):
    names = {room: {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, room, "**", "*.h"), recursive=True)}
             for room in ("base", "render", "cli")}
    names["render"].add("report_assets.h")  # generated from render/report.js and report.css
    public = {"base": "base.h", "render": "render.h"}
    forbidden = {"base": names["render"] | names["cli"], "render": names["cli"],
                 "cli": (names["render"] - {public["render"]}) | (names["base"] - {public["base"]})}
    for room, bad in forbidden.items():
        files = sorted(glob.glob(os.path.join(ROOT, room, "**", "*.[ch]"), recursive=True))
        wrong = [f"{os.path.relpath(f, ROOT)} includes {inc}" for f in files
                 for inc in INCLUDE.findall(open(f, encoding="utf-8").read())
                 if os.path.basename(inc) in bad or ".." in inc]
        t.check(len(files) >= 3 and not wrong,
                f"{room}/: {len(files)} files include only what the room may see" +
                ("" if not wrong else ": " + "; ".join(wrong)))


def main():
    t = Checks()
    for name, folders in TARGETS.items():
        table = objects(folders)
        if t.check(len(table) >= 5, f"{name}: {len(table)} object files under {BUILD}/**/{'|'.join(folders)}"):
            check_pairs(t, name, table)
    check_rooms(t)
    check_includes(t)
    t.finish()


if __name__ == "__main__":
    sys.exit(main())
