"""The package's modules import one way (configs <- rotation <- torch glue <- HF glue): no two
modules import each other, directly or through others, counting imports inside functions
(a function-level import that hides a loop is still a loop). Parsed with ast, so nothing is
imported or run to find them."""
import ast
import os

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "posenc")


def _module_names():
    return sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py"))


def imports_of(source, name, known):
    """The package modules a module's source imports, anywhere in it (top level, functions,
    classes, try blocks; `if TYPE_CHECKING:` blocks too, as a type checker follows them)."""
    out = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from . import x / from .x import y
                if node.module is None:
                    out.update(a.name for a in node.names if a.name in known)
                else:
                    head = node.module.split(".")[0]
                    if head in known:
                        out.add(head)
            elif node.level == 0 and node.module and node.module.split(".")[0] == "posenc":
                parts = node.module.split(".")
                if len(parts) > 1 and parts[1] in known:
                    out.add(parts[1])
                else:
                    out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "posenc" and len(parts) > 1 and parts[1] in known:
                    out.add(parts[1])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) \
                == "import_module" and node.args and isinstance(node.args[0], ast.Constant):
            target = str(node.args[0].value).lstrip(".").replace("posenc.", "", 1).split(".")[0]
            if target in known:
                out.add(target)
    out.discard(name)
    return out


def import_graph():
    known = set(_module_names())
    graph = {}
    for name in known:
        with open(os.path.join(PACKAGE, name + ".py")) as f:
            graph[name] = imports_of(f.read(), name, known - {"__init__"})
    return graph


def find_cycle(graph):
    """One import loop as a list of modules [a, b, ..., a], or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == "open":
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = "done"
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_no_module_imports_back():
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import loop: %s" % " -> ".join(cycle)


def test_the_layers_run_one_way():
    """The one job of each: config (what the positions are) imports no rotation, torch or HF
    module; rope (rotation) no torch or HF; torch no HF."""
    graph = import_graph()

    def reach(n, seen=None):
        seen = set() if seen is None else seen
        for m in graph[n]:
            if m not in seen:
                seen.add(m)
                reach(m, seen)
        return seen

    assert not reach("config") & {"rope", "torch", "hf", "identify", "analysis"}, reach("config")
    assert not reach("rope") & {"torch", "hf"}, reach("rope")
    assert "hf" not in reach("torch"), reach("torch")


def test_the_checker_finds_loops():
    """The checker itself: the loops this package had (config <-> rope through a function-level
    import, torch -> hf inside a module __getattr__) are found, and a one-way chain is not."""
    known = {"config", "rope", "torch", "hf"}
    old_rope = "from .config import Model\n"
    old_config = "def f():\n    from .rope import RopeParams\n"
    graph = {"rope": imports_of(old_rope, "rope", known), "config": imports_of(old_config, "config", known)}
    assert find_cycle(graph) in (["config", "rope", "config"], ["rope", "config", "rope"])
    old_torch = "def __getattr__(name):\n    from . import hf\n    return getattr(hf, name)\n"
    old_hf = "from . import torch as _pt\nfrom .torch import RotaryEmbedding\n"
    graph = {"torch": imports_of(old_torch, "torch", known), "hf": imports_of(old_hf, "hf", known)}
    assert find_cycle(graph) is not None
    graph = {"a": {"b"}, "b": {"c"}, "c": set()}
    assert find_cycle(graph) is None
    assert imports_of("import posenc.torch as pt\nfrom posenc import hf\n", "x", known) == {"torch", "hf"}
