"""No C header includes itself back, through any chain (docs/architecture.md: nothing in a loop).

Reads every `#include "..."` line of the C sources and headers under include/, src/, base/,
render/, cli/ and lab/, resolves each the way the compiler does for quoted includes (beside
the including file first, then the rooms' include folders: include/, base/, render/, lab/,
cli/), and fails on any cycle, naming its files in order. A quoted include that resolves to
no file also fails (but the headers the build writes) (a renamed header would otherwise hide its edges). The finder itself is
checked first on a made-up graph holding a loop, so this test can fail. Reads the sources
only; needs no build."""
import os
import re
import sys

from common import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
ROOMS = ["include", "src", "base", "render", "cli", "lab"]
SEARCH = ["include", "base", "render", "lab", "cli"]  # the targets' include folders
# headers the build writes (leaves: they include nothing of ours)
GENERATED = {"report_assets.h"}  # render/report.js and report.css as C strings (render/CMakeLists.txt)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    for room in ROOMS:
        for folder, _, names in os.walk(os.path.join(ROOT, room)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.join(folder, name)


def resolve(including, name):
    for base in [os.path.dirname(including)] + [os.path.join(ROOT, d) for d in SEARCH]:
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return path
    return None


def graph():
    """file -> set of files it includes (quoted includes), and the includes that resolve to nothing."""
    edges, missing = {}, []
    for path in sources():
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        edges[path] = set()
        for name in INCLUDE.findall(text):
            target = resolve(path, name)
            if target is None and name in GENERATED:
                continue
            if target is None:
                missing.append("%s: %s" % (os.path.relpath(path, ROOT), name))
            else:
                edges[path].add(target)
    return edges, missing


def find_cycle(edges):
    """One cycle as a list of nodes (first repeated at the end), or None. Depth-first, iterative."""
    state = {}  # 1 on the stack, 2 done
    for start in sorted(edges):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(edges.get(start, ()))))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(sorted(edges.get(child, ())))))
                path.append(child)
    return None


def main():
    t = Checks()
    loop = find_cycle({"a.h": {"b.h"}, "b.h": {"c.h"}, "c.h": {"a.h"}, "d.c": {"a.h"}})
    t.check(loop is not None and loop[0] == loop[-1] and set(loop) == {"a.h", "b.h", "c.h"},
            "the finder sees a made-up loop a.h -> b.h -> c.h -> a.h: %s" % loop)
    t.check(find_cycle({"a.h": {"b.h"}, "b.h": set(), "c.c": {"a.h", "b.h"}}) is None,
            "and no loop where there is none")
    edges, missing = graph()
    n = sum(len(v) for v in edges.values())
    t.check(len(edges) > 150 and n > 190, "%d files, %d quoted includes read" % (len(edges), n))
    t.check(not missing, "every quoted include resolves to a file: %s" % missing[:5])
    loop = find_cycle(edges)
    t.check(loop is None, "no include loop%s" % (
        "" if loop is None else ": " + " -> ".join(os.path.relpath(p, ROOT) for p in loop)))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
