"""The runtime's layout (issue 20): no import cycles between its modules, every public name
the controller kit exported before the split still resolves, and the kit is no flat room.

The import graph is read with :mod:`ast`, not by importing: module-level imports only. Those
under ``if TYPE_CHECKING:`` and those inside functions (late imports, run when called) are
left out; ``from package import name`` is an edge to ``package.name`` when that is a module,
else to the package. Importing ``a.b.c`` also runs ``a`` and ``a.b``'s ``__init__``; those
implicit edges are left out too, as import checkers do (otherwise every module under a
facade package would form a cycle with it).

The same graph, read one package at a time, keeps the packages layered: between the children
of any package (its modules and subpackages, each subpackage standing for everything under
it) imports run one way too.
"""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from tests.controller.test_public_api import API

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"
PACKAGE = RUNTIME / "kgen_runtime"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(RUNTIME).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports that run when the module is imported (not under TYPE_CHECKING, not in a
    function or class body)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                pending.extend(node.body)
            pending.extend(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                pending.extend(block)
            for handler in node.handlers:
                pending.extend(handler.body)
        elif isinstance(node, ast.With):
            pending.extend(node.body)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each runtime module and the runtime modules it imports at import time."""
    sources = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in sources.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _module_level_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in sources)
                continue
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in sources:
                    edges.add(target)
                elif base in sources:
                    edges.add(base)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or ``None`` when the graph is acyclic."""
    done: set[str] = set()
    for root in sorted(graph):
        if root in done:
            continue
        path: list[str] = [root]
        on_path = {root}
        stack = [iter(sorted(graph[root]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def children_graph(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The import graph between the children of ``package``: an edge a -> b when a module in
    child a (the child itself, or any module under it) imports one in child b. The package's
    own ``__init__`` is no child: its re-exports point down into every child."""
    prefix = package + "."

    def child(module: str) -> str | None:
        return module[len(prefix):].split(".", 1)[0] if module.startswith(prefix) else None

    children: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = child(module)
        if source is None:
            continue
        edges = children.setdefault(source, set())
        for target in map(child, targets):
            if target is not None and target != source:
                edges.add(target)
                children.setdefault(target, set())
    return children


def package_cycles(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each package whose children import each other in a cycle, with one such cycle."""
    packages = sorted({m.rsplit(".", 1)[0] for m in graph if "." in m})
    found = {p: find_cycle(children_graph(graph, p)) for p in packages}
    return {package: cycle for package, cycle in found.items() if cycle is not None}


def test_find_cycle_reports_the_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_package_cycles_are_found_where_modules_have_none() -> None:
    """Two packages that use each other through different modules: no module cycle, but a
    package cycle, reported in the package that holds both; a facade importing its children
    is none."""
    graph = {
        "p": {"p.a.x", "p.b.y"},
        "p.a.x": {"p.b.y"},
        "p.b.y": {"p.a.z"},
        "p.a.z": {"p.c"},
        "p.c": set(),
    }
    assert find_cycle(graph) is None
    assert children_graph(graph, "p") == {"a": {"b", "c"}, "b": {"a"}, "c": set()}
    assert children_graph(graph, "p.a") == {"x": set(), "z": set()}
    assert package_cycles(graph) == {"p": ["a", "b", "a"]}
    del graph["p.b.y"]
    assert package_cycles(graph) == {}


def test_import_graph_reads_module_level_imports_only() -> None:
    graph = import_graph()
    builder = graph["kgen_runtime.controller._builder.builder"]
    manager = graph["kgen_runtime.controller._manager.manager"]
    assert "kgen_runtime.controller._manager.manager" in builder
    assert not any(m.startswith("kgen_runtime.controller._builder") for m in manager)


def test_runtime_modules_import_without_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_runtime_packages_import_without_cycles() -> None:
    """Every package of the runtime is layered: its subpackages and modules import each other
    one way (``docs/architecture.md`` draws the layers)."""
    cycles = package_cycles(import_graph())
    assert cycles == {}, "package import cycles:\n" + "\n".join(
        f"{package}: " + " -> ".join(cycle) for package, cycle in cycles.items())


ARCHITECTURE = RUNTIME.parent / "docs" / "architecture.md"


def documented_layers(after: str) -> list[set[str]]:
    """The packages of each row of the first table after the line starting with ``after`` in
    ``docs/architecture.md``, bottom up: the backquoted names in its ``Package`` or
    ``Packages`` column."""
    lines = ARCHITECTURE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after))
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("|"))
    table = list(itertools.takewhile(lambda line: line.startswith("|"), lines[first:]))
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    column = next(i for i, cell in enumerate(header) if cell in ("Package", "Packages"))
    return [set(row.strip("|").split("|")[column].split("`")[1::2]) for row in table[2:]]


def assert_layered(graph: dict[str, set[str]], layers: list[set[str]]) -> None:
    row = {name: i for i, names in enumerate(layers) for name in names}
    linked = sorted({a for a, bs in graph.items() if bs} | {b for bs in graph.values() for b in bs})
    assert [name for name in linked if name not in row] == []
    downward = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs if row[b] > row[a])
    assert downward == []


@pytest.mark.parametrize(
    ("package", "table"),
    [
        ("kgen_runtime", "## Runtime packages"),
        ("kgen_runtime.testing.apiserver", "Inside `testing/apiserver/`"),
    ],
)
def test_imports_follow_the_layers_the_architecture_page_draws(package: str, table: str) -> None:
    assert_layered(children_graph(import_graph(), package), documented_layers(table))


def test_a_layering_check_fails_on_an_import_down_the_table() -> None:
    with pytest.raises(AssertionError):
        assert_layered({"low": {"high"}, "high": set()}, [{"low"}, {"high"}])
    with pytest.raises(AssertionError):
        assert_layered({"low": set(), "unlisted": {"low"}}, [{"low"}])
    assert_layered({"low": set(), "high": {"low"}}, [{"low"}, {"high"}])


def test_every_public_name_of_the_controller_kit_resolves_by_its_old_path() -> None:
    from kgen_runtime import controller, events, leaderelection

    unresolved = [name for name in sorted(API) if getattr(controller, name, None) is None]
    assert unresolved == []
    # The names that moved out are the same objects by both paths.
    for package in (events, leaderelection):
        for name in set(package.__all__) & API:
            assert getattr(package, name) is getattr(controller, name), name


def test_the_sharding_package_reexports_the_shard_selector_vocabulary() -> None:
    """``kgen_runtime.shardranges`` sits below ``testing`` (the server parses shard
    selectors), ``kgen_runtime.sharding`` above ``api`` (its members hold Leases): the names
    that moved down are the same objects by their old path."""
    from kgen_runtime import sharding, shardranges

    assert set(shardranges.__all__) <= set(sharding.__all__)
    for name in shardranges.__all__:
        assert getattr(sharding, name) is getattr(shardranges, name), name


@pytest.mark.parametrize(
    "module",
    [
        "kgen_runtime.events",
        "kgen_runtime.leaderelection",
        "kgen_runtime.controller._builder.builder",
        "kgen_runtime.controller._manager.manager_aio",
    ],
)
def test_each_package_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """Import order cannot break a package: each imports on its own, and a manager imported
    by its module path still knows its builder."""
    code = (
        f"import {module}\n"
        "from kgen_runtime.controller import AsyncManager, Manager\n"
        "assert Manager.builder_type.__name__ == 'Builder'\n"
        "assert AsyncManager.builder_type.__name__ == 'AsyncBuilder'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_controller_kit_is_no_flat_room() -> None:
    """At most a dozen modules beside the facade; the rest live in packages by concern."""
    kit = PACKAGE / "controller"
    modules = sorted(p.name for p in kit.glob("*.py") if p.name != "__init__.py")
    packages = sorted(p.name for p in kit.iterdir() if (p / "__init__.py").is_file())
    assert len(modules) <= 12, modules
    assert packages == ["_builder", "_cluster", "_controllerutil", "_handler", "_manager"]


def test_only_the_testing_package_imports_the_api_server_emulator() -> None:
    """``kgen_runtime.testing.apiserver`` is the emulator behind the public
    ``kgen_runtime.testing`` names: code outside ``testing/`` (the runtime, the generator,
    the example) imports those names, never the emulator's modules. Tests may."""
    emulator = "kgen_runtime.testing.apiserver"
    root = RUNTIME.parent
    testing = PACKAGE / "testing"
    sources = [
        *(p for p in PACKAGE.rglob("*.py") if testing not in p.parents),
        *(root / "kgen").rglob("*.py"),
        *(root / "examples").rglob("*.py"),
    ]
    offenders = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            )
            if any(n == emulator or n.startswith(emulator + ".") for n in names):
                offenders.append(str(path.relative_to(root)))
    assert offenders == []


def test_the_testing_package_keeps_only_its_user_facing_modules_on_top() -> None:
    """``testing/`` holds the public fakes and server beside the facade; the API-server
    emulator lives in ``testing/apiserver/``, in packages by concern."""
    testing = PACKAGE / "testing"
    modules = sorted(p.name for p in testing.glob("*.py") if p.name != "__init__.py")
    assert modules == [
        "_clientset.py", "_core.py", "_fake.py", "_fake_aio.py", "_process.py", "_server.py",
        "_sharding.py", "_status.py", "_tracker.py", "pytest_plugin.py",
    ]
    emulator = testing / "apiserver"
    packages = sorted(p.name for p in emulator.iterdir() if (p / "__init__.py").is_file())
    assert packages == [
        "admission", "discovery", "encoding", "endpoints", "fieldmanager", "openapi", "patch",
        "reviews", "storage", "subresources", "tables", "validation",
    ]
    assert not [p.name for p in emulator.glob("*.py") if p.name != "__init__.py"]
