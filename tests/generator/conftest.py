"""Fixtures for generator tests: the shared CRD corpus and generate-then-import helpers."""

from __future__ import annotations

import importlib
import itertools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from kgen.generate import generate
from tests.shared import CORPUS, EXAMPLES, REPO, SHARED, requires_shared

__all__ = [
    "CORPUS",
    "EXAMPLES",
    "MYPY_CACHE",
    "REPO",
    "SHARED",
    "crd",
    "generate_package",
    "requires_corpus",
]

_counter = itertools.count()

requires_corpus = requires_shared(CORPUS)

MYPY_CACHE = REPO / ".mypy_cache" / "generated-packages"
"""One mypy cache for every test that type-checks generated code: the runtime they import
is checked once, not once per test and session (mypy's cache is safe to share)."""


def crd(
    kind: str = "Widget",
    schema: dict[str, Any] | None = None,
    *,
    group: str = "example.com",
    version: str = "v1",
    plural: str | None = None,
    scope: str = "Namespaced",
    subresources: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A minimal valid apiextensions.k8s.io/v1 CRD manifest."""
    plural = plural or f"{kind.lower()}s"
    version_doc: dict[str, Any] = {
        "name": version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema or {"type": "object"}},
    }
    if subresources is not None:
        version_doc["subresources"] = subresources
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural},
            "scope": scope,
            "versions": [version_doc],
        },
    }


GeneratePackage = Callable[..., ModuleType]


@pytest.fixture
def generate_package(tmp_path: Path) -> Iterator[GeneratePackage]:
    """Generate a package from CRD dicts (written as one multi-document YAML) and import it.

    Returns the imported group/version module of the first CRD's first version, with
    ``.models`` reachable as an attribute; each call gets a fresh package name.
    """
    added: list[str] = []

    def run(*crds: dict[str, Any]) -> ModuleType:
        name = f"kgen_test_pkg_{os.getpid()}_{next(_counter)}"
        source = tmp_path / f"{name}.yaml"
        source.write_text(yaml.safe_dump_all(crds, sort_keys=False))
        result = generate([source], tmp_path / name, name)
        added.append(name)
        if str(tmp_path) not in sys.path:
            sys.path.insert(0, str(tmp_path))
        gv = result.package.group_versions[0]
        module = importlib.import_module(f"{name}.{'.'.join(gv.module)}")
        importlib.import_module(f"{name}.{'.'.join(gv.module)}.models")
        return module

    yield run
    for name in added:
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))
