"""The cache fingerprint covers every piece of code that shapes generated output."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from kgen import cache, ir
from kgen_runtime import resource

from .conftest import REPO


def _runtime_imports() -> set[tuple[str, str]]:
    """(module, name) of every ``from kgen_runtime... import name`` in kgen's own code, except
    the REST client ``--from-cluster`` fetches inputs with (what it fetches is in the run key,
    and it does not shape output) and ``kgen crd`` (kgen/crdgen), whose output is not cached."""
    found = set()
    crdgen = REPO / "kgen" / "crdgen"
    for path in (REPO / "kgen").rglob("*.py"):
        if crdgen in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            if module.startswith("kgen_runtime") and not module.startswith("kgen_runtime.rest"):
                found.update((module, alias.name) for alias in node.names)
    return found


def test_fingerprint_covers_the_runtime_code_the_generator_imports() -> None:
    imported = _runtime_imports()
    assert ("kgen_runtime.meta", "wire_name") in imported
    sources = set(cache.fingerprint_sources())
    for module, name in imported:
        used = getattr(importlib.import_module(module), name)
        if not (inspect.isclass(used) or inspect.isfunction(used)):
            used = type(used)  # a constant (the runtime's EACH): its class's module
        assert Path(inspect.getfile(used)).resolve() in sources, (module, name)


def test_fingerprint_covers_generator_modules_and_templates() -> None:
    sources = set(cache.fingerprint_sources())
    assert (REPO / "kgen" / "naming.py").resolve() in sources
    assert (REPO / "templates" / "models.py.jinja").resolve() in sources


def test_the_ir_uses_the_runtimes_scale_subresource_rather_than_a_twin() -> None:
    assert ir.ScaleSubresource is resource.ScaleSubresource
