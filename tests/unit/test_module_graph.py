"""The package's modules import each other without cycles (module-level imports, as Python runs them),
and every import, a function's own included, points down the stages (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "mscodegen"

# The stages, bottom to top: a module imports from its own stage or from one below, never from a stage
# above or beside it (the stages on one line do not import each other).
LAYERS = [
    {"mscodegen"},  # the package's __init__: __version__
    {"catalog"},
    {"schema"},
    {"config", "plan"},
    {"recipes", "render"},
    {"output"},
    {"run"},
    {"cli", "tools"},
    {"__main__"},  # python -m mscodegen
]


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph(package: Path = PACKAGE, *, everywhere: bool = False) -> dict[str, set[str]]:
    """{module: the package's modules it imports}: at module level, or `everywhere` (functions too)."""
    modules = {module_name(f, package): f for f in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        own = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deps = set()
        for node in ast.walk(tree) if everywhere else tree.body:  # body: not inside functions/TYPE_CHECKING
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = own.split(".")[: len(own.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    deps.add(sub if sub in modules else target)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return path[path.index(dep) :] + [dep]
            if dep not in state and (cycle := visit(dep, [*path, dep])):
                return cycle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start, [start])):
            return cycle
    return None


def stage(module: str) -> str:
    """mscodegen.render.fmt -> render; the package itself -> mscodegen."""
    return module.split(".")[1] if "." in module else module


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a stage above or beside the importer's, as "importer -> imported"."""
    level = {name: i for i, names in enumerate(LAYERS) for name in names}
    return sorted(
        f"{module} -> {dep}"
        for module, deps in graph.items()
        for dep in deps
        if stage(dep) != stage(module) and level[stage(dep)] >= level[stage(module)]
    )


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_the_package():
    graph = module_graph()
    assert "mscodegen.plan" in graph and graph["mscodegen.output.generate"], "the graph was not read"
    assert find_cycle(graph) is None


def test_the_layer_check_finds_an_import_up_or_beside(tmp_path):
    package = tmp_path / "mscodegen"
    for folder in ("render", "output", "config", "plan"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("__version__ = '0'\n")
    # a lazy import counts: it is a dependency all the same
    (package / "render" / "explain.py").write_text("def f():\n    from mscodegen.output import write\n")
    (package / "output" / "write.py").write_text(
        "from mscodegen.render import explain\nfrom .. import __version__\n"
    )
    (package / "plan" / "data.py").write_text("import mscodegen.config\n")
    assert upward_imports(module_graph(package, everywhere=True)) == [
        "mscodegen.plan.data -> mscodegen.config",
        "mscodegen.render.explain -> mscodegen.output.write",
    ]
    assert upward_imports(module_graph(package)) == ["mscodegen.plan.data -> mscodegen.config"]


def test_every_import_points_down_the_stages():
    graph = module_graph(everywhere=True)
    assert {stage(m) for m in graph} <= set().union(*LAYERS), "a new folder: give it its place in LAYERS"
    assert upward_imports(graph) == []
