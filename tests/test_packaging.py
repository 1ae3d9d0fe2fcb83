"""The package list in pyproject.toml covers every package directory of the repository."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _package_dirs() -> set[str]:
    found = {"kgen.templates"}
    for root, prefix in (
        (REPO / "kgen", "kgen"),
        (REPO / "runtime" / "kgen_runtime", "kgen_runtime"),
    ):
        for init in root.rglob("__init__.py"):
            relative = init.parent.relative_to(root).parts
            found.add(".".join((prefix, *relative)))
    return found


def test_every_package_is_listed() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert listed == _package_dirs()
