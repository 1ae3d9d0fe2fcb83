"""The repository's two distributions: kgen-runtime (runtime/) and kgen-generator (the root).

Their metadata agree with each other and with the packages; each wheel holds its own half
and nothing of the other; the editable installs of the README's first command are plain
path entries that mypy follows from a project outside this repository.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

import kgen
import kgen_runtime

REPO = Path(__file__).resolve().parents[1]
RUNTIME_DEPENDENCIES = {
    "pydantic",
    "orjson",
    "pyyaml",
    "kubernetes",
    "urllib3",
    "aiohttp",
    "prometheus-client",
    "jsonpatch",
    "common-expression-language",
}
GENERATOR_DEPENDENCIES = {"kgen-runtime", "click", "jinja2", "black"}


def _project(path: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(path.read_text())["project"]
    return project


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


RUNTIME = _project(REPO / "runtime" / "pyproject.toml")
GENERATOR = _project(REPO / "pyproject.toml")


def test_versions_and_the_runtime_pin_agree() -> None:
    assert RUNTIME["name"] == "kgen-runtime"
    assert GENERATOR["name"] == "kgen-generator"
    assert RUNTIME["version"] == GENERATOR["version"] == kgen.__version__
    assert kgen_runtime.__version__ == kgen.__version__
    assert f"kgen-runtime=={kgen.__version__}" in GENERATOR["dependencies"]


def test_each_distribution_declares_only_its_own_dependencies() -> None:
    assert {_name(r) for r in RUNTIME["dependencies"]} == RUNTIME_DEPENDENCIES
    assert {_name(r) for r in GENERATOR["dependencies"]} == GENERATOR_DEPENDENCIES


def test_black_is_held_to_the_installed_major_release() -> None:
    """Generated files are compared byte for byte; a new black major restyles them."""
    major = int(importlib.metadata.version("black").split(".")[0])
    assert f"black>={major},<{major + 1}" in GENERATOR["dependencies"]


@pytest.mark.parametrize(
    ("distribution", "root"), [("kgen-runtime", "runtime"), ("kgen-generator", ".")]
)
def test_editable_installs_are_plain_path_entries(distribution: str, root: str) -> None:
    # An in-tree build also leaves an .egg-info beside the sources: look for the installed one.
    installed = [
        d
        for d in importlib.metadata.distributions(name=distribution)
        if '"editable": true' in (d.read_text("direct_url.json") or "")
    ]
    if not installed:
        pytest.skip(f"{distribution} is not installed in editable mode")
    dist = installed[0]
    pth_files = [dist.locate_file(f) for f in dist.files or () if f.suffix == ".pth"]
    assert len(pth_files) == 1, pth_files
    lines = Path(str(pth_files[0])).read_text().split()
    assert [Path(line).resolve() for line in lines] == [(REPO / root).resolve()]


def test_mypy_follows_the_editable_runtime_from_outside_the_repository(tmp_path: Path) -> None:
    """A user's controller type-checks with no MYPYPATH and none of this repository's config:
    mypy finds kgen_runtime (and its py.typed marker) through the venv's site-packages."""
    (tmp_path / "controller.py").write_text(
        '"""A user\'s controller."""\n\n'
        "import threading\n\n"
        "from kgen_runtime.api.apps.v1 import Deployment\n"
        "from kgen_runtime.controller import Controller, ReconcilerFunc, Result\n"
        "from kgen_runtime.meta import ObjectMeta\n\n\n"
        "def sync(key: str) -> Result | None:\n"
        "    deployment = Deployment(metadata=ObjectMeta(name=key))\n"
        "    name: str | None = deployment.metadata.name\n"
        "    return Result(requeue=name is None)\n\n\n"
        "def run(stop: threading.Event) -> None:\n"
        '    Controller("deployments", ReconcilerFunc(sync)).run(1, stop)\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "controller.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-3000:]
    assert completed.stdout.startswith("Success: no issues found in 1 source file")


def _build_wheel(source: Path, out: Path) -> zipfile.ZipFile:
    """Build ``source``'s wheel offline with the venv's setuptools (no build isolation)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("*.whl")
    return zipfile.ZipFile(wheel)


def _package_files(root: Path, pattern: str) -> set[str]:
    return {p.relative_to(root.parent).as_posix() for p in root.rglob(pattern)}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, zipfile.ZipFile]:
    """Both wheels, built from copies of the sources (a build writes build/ and egg-info)."""
    scratch = tmp_path_factory.mktemp("wheels")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    runtime = scratch / "runtime-src"
    shutil.copytree(REPO / "runtime", runtime, ignore=ignore)
    shutil.rmtree(runtime / "build", ignore_errors=True)  # an earlier in-tree build's
    generator = scratch / "generator-src"
    for name in ("kgen", "templates"):
        shutil.copytree(REPO / name, generator / name, symlinks=True, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, generator / name)
    return {
        "runtime": _build_wheel(runtime, scratch / "runtime-wheel"),
        "generator": _build_wheel(generator, scratch / "generator-wheel"),
    }


def test_the_runtime_wheel_holds_the_runtime_only(wheels: dict[str, zipfile.ZipFile]) -> None:
    names = set(wheels["runtime"].namelist())
    package = REPO / "runtime" / "kgen_runtime"
    assert _package_files(package, "*.py") | {"kgen_runtime/py.typed"} <= names
    assert not [n for n in names if n.startswith(("kgen/", "templates/")) or "jinja" in n]
    metadata = wheels["runtime"].read(f"kgen_runtime-{kgen.__version__}.dist-info/METADATA")
    requires = {
        _name(line.split(b":", 1)[1].decode().strip())
        for line in metadata.splitlines()
        if line.startswith(b"Requires-Dist:")
    }
    assert requires == RUNTIME_DEPENDENCIES


def test_the_generator_wheel_holds_kgen_and_its_templates(
    wheels: dict[str, zipfile.ZipFile],
) -> None:
    names = set(wheels["generator"].namelist())
    expected = _package_files(REPO / "kgen", "*.py") - {"kgen/templates/__init__.py"}
    templates = {
        f"kgen/{p}"
        for p in _package_files(REPO / "templates", "*")
        if p.endswith((".jinja", ".py"))
    }
    assert expected | templates <= names
    assert "kgen/templates/scaffold/pyproject.toml.jinja" in names
    assert not [n for n in names if n.startswith(("kgen_runtime/", "templates/"))]
    metadata = (
        wheels["generator"].read(f"kgen_generator-{kgen.__version__}.dist-info/METADATA").decode()
    )
    assert f"Requires-Dist: kgen-runtime=={kgen.__version__}" in metadata.splitlines()
