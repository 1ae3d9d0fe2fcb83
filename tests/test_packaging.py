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
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import kgen
import kgen_runtime
from tests._fresh import run

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "foo-crd"
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


@pytest.mark.slow  # ~4-11 s: CI runs it in the slow pass; the default run stays under 5 min
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


DISTRIBUTIONS = ("kgen-runtime", "kgen-generator")
SOURCE = {"kgen-runtime": Path("runtime"), "kgen-generator": Path(".")}
PACKAGE = {"kgen-runtime": "kgen_runtime", "kgen-generator": "kgen"}
# The dist-info a setuptools wheel holds, and what an sdist holds besides the package.
DIST_INFO = {
    "kgen-runtime": ["METADATA", "RECORD", "WHEEL", "top_level.txt"],
    "kgen-generator": ["METADATA", "RECORD", "WHEEL", "entry_points.txt", "top_level.txt"],
}
SDIST_EXTRAS = {
    "kgen-runtime": ["PKG-INFO", "README.md", "pyproject.toml", "setup.cfg"],
    "kgen-generator": ["MANIFEST.in", "PKG-INFO", "README.md", "pyproject.toml", "setup.cfg"],
}
# What a fresh clone lacks: version control, environments, caches, earlier builds.
_NOT_IN_A_CLONE = shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "build", "dist")


@dataclass(frozen=True)
class Built:
    """One distribution as ``python -m build`` makes it: an sdist, and the wheel built from
    that sdist (so a file the sdist lacks is missing from the wheel too)."""

    sdist: Path
    wheel: Path

    def wheel_files(self) -> list[str]:
        with zipfile.ZipFile(self.wheel) as wheel:
            return sorted(wheel.namelist())

    def sdist_files(self) -> list[str]:
        with tarfile.open(self.sdist) as sdist:
            return sorted(m.name.split("/", 1)[1] for m in sdist.getmembers() if m.isfile())

    def metadata(self) -> str:
        (name,) = [n for n in self.wheel_files() if n.endswith(".dist-info/METADATA")]
        with zipfile.ZipFile(self.wheel) as wheel:
            return wheel.read(name).decode()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    """Both distributions, built from a copy of the repository as a fresh clone has it,
    offline with this venv's setuptools (``--no-isolation``)."""
    scratch = tmp_path_factory.mktemp("dist")
    clone = scratch / "clone"
    shutil.copytree(REPO, clone, symlinks=True, ignore=_NOT_IN_A_CLONE)
    result = {}
    for dist in DISTRIBUTIONS:
        out = scratch / dist
        subprocess.run(
            [sys.executable, "-m", "build", "--no-isolation", "-o", str(out), clone / SOURCE[dist]],
            check=True,
            capture_output=True,
            timeout=600,
        )
        (sdist,) = out.glob("*.tar.gz")
        (wheel,) = out.glob("*.whl")
        result[dist] = Built(sdist, wheel)
    return result


def _package_files(dist: str) -> list[str]:
    """Every file of ``dist``'s package in this checkout, following kgen/templates' link to
    the top-level templates/, as the wheel names them."""
    root = REPO / SOURCE[dist]
    found = []
    for folder, directories, names in os.walk(root / PACKAGE[dist], followlinks=True):
        directories[:] = [d for d in directories if d != "__pycache__"]
        found += [(Path(folder) / name).relative_to(root).as_posix() for name in names]
    return sorted(found)


def _requires(metadata: str) -> set[str]:
    """The names a wheel's METADATA requires to run (not those of its extras)."""
    return {
        _name(line.split(":", 1)[1].strip())
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    }


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_each_wheel_holds_its_package_and_nothing_else(built: dict[str, Built], dist: str) -> None:
    """Pinned by rule: the package's whole source tree (templates, py.typed markers, the
    bundled OpenAPI documents) and the dist-info; no tests, caches or the other half."""
    info = f"{dist.replace('-', '_')}-{kgen.__version__}.dist-info/"
    files = built[dist].wheel_files()
    assert [f for f in files if not f.startswith(info)] == _package_files(dist)
    assert [f.removeprefix(info) for f in files if f.startswith(info)] == DIST_INFO[dist]
    assert not [f for f in files if re.search(r"(^|/)(tests?|__pycache__|\.\w+_cache)/|\.pyc$", f)]


def test_the_wheels_carry_the_templates_and_the_openapi_documents(
    built: dict[str, Built],
) -> None:
    generator, runtime = built["kgen-generator"].wheel_files(), built["kgen-runtime"].wheel_files()
    assert {"kgen/templates/models.py.jinja", "kgen/templates/scaffold/Makefile.jinja"} <= set(
        generator
    )
    documents = [f for f in runtime if f.startswith("kgen_runtime/testing/openapi/")]
    assert "kgen_runtime/testing/openapi/api_v1.json.gz" in documents
    assert len(documents) == len(list((REPO / "runtime/kgen_runtime/testing/openapi").iterdir()))


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_each_sdist_holds_what_its_wheel_is_built_from(built: dict[str, Built], dist: str) -> None:
    egg_info = f"{dist.replace('-', '_')}.egg-info/"
    files = [f for f in built[dist].sdist_files() if not f.startswith(egg_info)]
    assert sorted(set(files) - set(_package_files(dist))) == SDIST_EXTRAS[dist]
    assert set(_package_files(dist)) <= set(files)


def test_each_wheel_requires_its_own_dependencies_only(built: dict[str, Built]) -> None:
    assert _requires(built["kgen-runtime"].metadata()) == RUNTIME_DEPENDENCIES
    generator = built["kgen-generator"].metadata()
    assert _requires(generator) == GENERATOR_DEPENDENCIES
    assert f"Requires-Dist: kgen-runtime=={kgen.__version__}" in generator.splitlines()


def test_twine_check_passes(built: dict[str, Built]) -> None:
    files = [str(path) for b in built.values() for path in (b.sdist, b.wheel)]
    completed = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.count("PASSED") == 4


@pytest.mark.slow  # a fresh venv's pip install of both wheels and their dependencies (~30 s)
def test_the_wheels_generate_import_and_run_the_demo_outside_the_repository(
    built: dict[str, Built], tmp_path: Path
) -> None:
    """Both wheels in a fresh venv, in a shell with no virtual environment active: ``kgen
    generate`` on a copy of the example's CRDs, the result imported, the example's demo run,
    all in a folder outside the repository with none of it on sys.path. (``-E -s`` rather
    than ``-I``: the demo imports the generated package from the script's folder, which
    ``-I`` takes off sys.path.) Then ``kgen wheels`` packs the installed distributions back
    into the very files that were installed."""
    venv = tmp_path / "venv"
    python, kgen_command = str(venv / "bin" / "python"), str(venv / "bin" / "kgen")
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    wheels = [str(built[dist].wheel) for dist in DISTRIBUTIONS]
    run([python, "-m", "pip", "install", "--quiet", *wheels], cwd=tmp_path)
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE / "crds", example / "crds")
    shutil.copytree(EXAMPLE / "foo_controller", example / "foo_controller", ignore=_NOT_IN_A_CLONE)
    shutil.copy(EXAMPLE / "main.py", example / "main.py")

    run([kgen_command, "generate", "crds", "-o", "foo_api"], cwd=example)
    probe = (
        "import sys, kgen, kgen_runtime, foo_api.samplecontroller.v1alpha1 as v1alpha1\n"
        "print(kgen.__file__, kgen_runtime.__file__, v1alpha1.__file__, *sys.path, sep='\\n')"
    )
    printed = run([python, "-E", "-s", "-c", probe], cwd=example)
    paths = [Path(line).resolve() for line in printed.splitlines() if line]
    assert paths[0].is_relative_to(venv.resolve()) and paths[1].is_relative_to(venv.resolve())
    assert paths[2] == (example / "foo_api/samplecontroller/v1alpha1/__init__.py").resolve()
    assert not [p for p in paths if p.is_relative_to(REPO)]
    demo = run([python, "-E", "-s", "main.py", "--demo"], cwd=example, timeout=300)
    assert "demo OK" in demo

    run([kgen_command, "wheels", "repacked"], cwd=tmp_path)
    for dist in DISTRIBUTIONS:
        repacked = tmp_path / "repacked" / built[dist].wheel.name
        with zipfile.ZipFile(built[dist].wheel) as original, zipfile.ZipFile(repacked) as copy:
            assert sorted(copy.namelist()) == sorted(original.namelist())
            for name in original.namelist():
                if name.endswith("/RECORD"):  # the same rows, in another order
                    assert sorted(copy.read(name).split()) == sorted(original.read(name).split())
                else:
                    assert copy.read(name) == original.read(name), name
