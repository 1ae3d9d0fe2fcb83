"""docs/_ext/rst_roles.py: the API reference shows Sphinx roles and RST markers as Markdown."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("griffe")  # the docs extra


def _extension() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "docs" / "_ext" / "rst_roles.py"
    spec = importlib.util.spec_from_file_location("rst_roles", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_roles_become_inline_code_and_literal_blocks_lose_a_colon() -> None:
    docstring = (
        "Runs :class:`Controller`\\ s on a :class:`~kgen_runtime.controller.Manager`; see\n"
        ":meth:`~Manager.start`, :meth:`Manager.stop` and :mod:`kgen_runtime.log`::\n"
        "\n"
        "    manager.start(stop)  # ::x stays\n"
        "\n"
        "Returns:\n"
        "    ``None``: unchanged.\n"
    )
    assert _extension().markdown_of(docstring) == (
        "Runs `Controller`s on a `Manager`; see\n"
        "`start`, `Manager.stop` and `kgen_runtime.log`:\n"
        "\n"
        "    manager.start(stop)  # ::x stays\n"
        "\n"
        "Returns:\n"
        "    ``None``: unchanged.\n"
    )
