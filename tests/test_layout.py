"""The runtime's layout (issue 20): no import cycles between its modules, every public name
the controller kit exported before the split still resolves, and the kit is no flat room.

The import graph is read with :mod:`ast`, not by importing: module-level imports only. Those
under ``if TYPE_CHECKING:`` and those inside functions (late imports, run when called) are
left out; ``from package import name`` is an edge to ``package.name`` when that is a module,
else to the package. Importing ``a.b.c`` also runs ``a`` and ``a.b``'s ``__init__``; those
implicit edges are left out too, as import checkers do (otherwise every module under a
facade package would form a cycle with it).
"""

from __future__ import annotations

import ast
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


def test_find_cycle_reports_the_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_import_graph_reads_module_level_imports_only() -> None:
    graph = import_graph()
    builder = graph["kgen_runtime.controller._builder.builder"]
    manager = graph["kgen_runtime.controller._manager.manager"]
    assert "kgen_runtime.controller._manager.manager" in builder
    assert not any(m.startswith("kgen_runtime.controller._builder") for m in manager)


def test_runtime_modules_import_without_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_public_name_of_the_controller_kit_resolves_by_its_old_path() -> None:
    from kgen_runtime import controller, events, leaderelection

    unresolved = [name for name in sorted(API) if getattr(controller, name, None) is None]
    assert unresolved == []
    # The names that moved out are the same objects by both paths.
    for package in (events, leaderelection):
        for name in set(package.__all__) & API:
            assert getattr(package, name) is getattr(controller, name), name


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
        "_clientset.py", "_core.py", "_fake.py", "_fake_aio.py", "_process.py",
        "_resources.py", "_server.py", "_sharding.py", "_status.py", "_tracker.py",
        "pytest_plugin.py",
    ]
    emulator = testing / "apiserver"
    packages = sorted(p.name for p in emulator.iterdir() if (p / "__init__.py").is_file())
    assert packages == [
        "admission", "discovery", "encoding", "fieldmanager", "openapi", "patch", "reviews",
        "storage", "subresources", "tables", "validation",
    ]
    assert not [p.name for p in emulator.glob("*.py") if p.name != "__init__.py"]
