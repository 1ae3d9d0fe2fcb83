"""A scaffolded project works on a machine that never had this kgen checkout: nothing in it
names a path of the machine that made it, and a copy of it in a folder of its own passes
``make ci`` and its Dockerfile's install in a shell whose PATH, Python path and virtual
environments hold nothing of this checkout (kgen comes from the project's ``wheels/``).

There is no container daemon here, so the Dockerfile's build stage is played on the host:
its COPY lines copy from the build context that ``.dockerignore`` leaves, its ENV and RUN
lines run with the image's absolute paths moved under a temporary root and the image's
``python`` being the host's ``python3``; the final stage's entry point then runs from the
copied virtual environment.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kgen.scaffold import create_api, init_project
from tests._fresh import clean_environment, run

from .conftest import REPO


def _scaffold(parent: Path) -> Path:
    """``kgen init`` and a cluster-scoped kind from ``kgen create api``."""
    project = parent / "widget-operator"
    init_project(project, group="example.com", kind="Widget", version="v1alpha1")
    create_api(project, group="infra.example.com", version="v1", kind="Policy", namespaced=False)
    return project


def _texts(project: Path) -> dict[str, str]:
    """Every file of the project as text, and every member of its wheels."""
    texts = {}
    for path in sorted(p for p in project.rglob("*") if p.is_file()):
        relative = path.relative_to(project).as_posix()
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as wheel:
                for name in wheel.namelist():
                    texts[f"{relative}!{name}"] = wheel.read(name).decode("utf-8", "replace")
        else:
            texts[relative] = path.read_text("utf-8", "replace")
    return texts


@pytest.mark.slow  # ~4-11 s: CI runs it in the slow pass; the default run stays under 5 min
def test_nothing_scaffolded_names_a_path_of_the_machine_that_made_it(tmp_path: Path) -> None:
    project = _scaffold(tmp_path)
    texts = _texts(project)
    assert "Makefile" in texts and "wheels/kgen_runtime" in "\n".join(texts)
    machine_paths = {str(p) for p in (REPO, REPO.resolve(), tmp_path, Path(sys.prefix))}
    found = {
        (name, path) for name, text in texts.items() for path in machine_paths if path in text
    }
    assert found == set()


def _dockerignored(project: Path) -> list[tuple[bool, str]]:
    """(included, pattern) of each ``.dockerignore`` rule, in order."""
    rules = []
    for line in (project / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            rules.append((line.startswith("!"), line.removeprefix("!").rstrip("/")))
    return rules


def _build_context(project: Path, context: Path) -> None:
    """Copy what docker sends as the build context: the files no ``.dockerignore`` rule
    excludes (the last matching rule wins; a rule matching a folder covers its files)."""
    rules = _dockerignored(project)
    for path in sorted(p for p in project.rglob("*") if p.is_file()):
        relative = path.relative_to(project)
        candidates = [relative.as_posix(), *(p.as_posix() for p in relative.parents if p.parts)]
        included = True
        for include, pattern in rules:
            if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
                included = include
        if included:
            (context / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, context / relative)


class HostImage:
    """The Dockerfile's instructions played on this host under ``root`` (no daemon)."""

    def __init__(self, root: Path, context: Path) -> None:
        self.root, self.context = root, context
        self.workdir = root  # docker's default WORKDIR, /
        root.mkdir()
        self.env = clean_environment()
        self.shims = root.parent / "image-bin"  # the image's `python`: the host's python3
        self.shims.mkdir()
        python3 = shutil.which("python3", path=self.env["PATH"])
        assert python3 is not None
        (self.shims / "python").symlink_to(python3)
        self.env["PATH"] = f"{self.shims}:{self.env['PATH']}"

    def host(self, text: str) -> str:
        """``text`` with the image's absolute paths moved under ``root``."""
        return re.sub(r"(?<![\w$.])/(?=[\w.])", f"{self.root}/", text)

    def apply(self, instruction: str, argument: str) -> None:
        if instruction == "WORKDIR":
            self.workdir = Path(self.host(argument))
            self.workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "ENV":
            for assignment in shlex.split(argument):
                name, value = assignment.split("=", 1)
                self.env[name] = self.host(value).replace("$PATH", self.env["PATH"])
        elif instruction == "COPY":
            source, target = argument.split()
            destination = self.workdir / target
            if (self.context / source).is_dir():
                shutil.copytree(self.context / source, destination, dirs_exist_ok=True)
            else:
                destination.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.context / source, destination)
        elif instruction == "RUN":
            completed = subprocess.run(
                ["/bin/sh", "-ec", self.host(argument)],
                cwd=self.workdir,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            output = completed.stdout + completed.stderr
            assert completed.returncode == 0, f"RUN {argument}\n{output[-4000:]}"
        else:
            raise AssertionError(f"the build stage has {instruction}, which is not played here")


def _stages(dockerfile: str) -> list[list[tuple[str, str]]]:
    """The Dockerfile's stages, each a list of (instruction, argument) after its FROM."""
    stages: list[list[tuple[str, str]]] = []
    for line in dockerfile.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        instruction, argument = line.split(None, 1)
        if instruction == "FROM":
            stages.append([])
        else:
            stages[-1].append((instruction, argument))
    return stages


@pytest.mark.slow  # pip installs the project's dependencies twice (~1-2 minutes)
def test_a_copy_elsewhere_passes_make_ci_and_the_dockerfile_install(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    (tmp_path / "made").mkdir()
    project = tmp_path / "elsewhere" / "widget-operator"
    shutil.copytree(_scaffold(tmp_path / "made"), project)
    shutil.rmtree(tmp_path / "made")

    output = run(["make", "ci"], cwd=project, timeout=1800)
    assert re.search(r"^\d+ passed in ", output, re.M), output[-2000:]
    probe = "import kgen, kgen_runtime; print(kgen.__file__); print(kgen_runtime.__file__)"
    installed = run([".venv/bin/python", "-I", "-c", probe], cwd=project).split()
    assert [Path(p).is_relative_to(project / ".venv") for p in installed] == [True, True]

    context = tmp_path / "context"
    _build_context(project, context)
    assert not (context / "tests").exists() and not (context / ".venv").exists()
    build, final = _stages((project / "Dockerfile").read_text())
    image = HostImage(tmp_path / "image", context)
    for instruction, argument in build:
        image.apply(instruction, argument)
    assert ("COPY", "--from=build /opt/venv /opt/venv") in final
    python = image.root / "opt" / "venv" / "bin" / "python"
    probe = "import kgen_runtime, widget_operator_api; import importlib.util as u; " + (
        "print(u.find_spec('kgen') is None)"
    )
    assert run([python, "-I", "-c", probe], cwd=tmp_path).split() == ["True"]  # no generator
    entry = run([python, "-I", "-m", "widget_operator", "--help"], cwd=tmp_path)
    assert "--leader-elect" in entry
