"""``kgen init``: the scaffolded operator project passes its own tests, types and lint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgen.cli import main

from .conftest import MYPY_CACHE, REPO


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("init") / "widget-operator"
    result = CliRunner().invoke(
        main, ["init", str(root), "--group", "example.com", "--kind", "Widget"]
    )
    assert result.exit_code == 0, result.output
    return root


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(REPO / "runtime"), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_layout(project: Path) -> None:
    files = {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()}
    assert {
        "pyproject.toml",
        "README.md",
        "crds/widgets.yaml",
        "widget_operator/__init__.py",
        "widget_operator/controller.py",
        "widget_operator/__main__.py",
        "tests/test_widget_operator.py",
        "widget_api/fake.py",
        "widget_api/example/v1alpha1/models.py",
    } <= files


def test_scaffolded_tests_pass(project: Path) -> None:
    completed = _run(project, "pytest", "-q", "-p", "no:cacheprovider")
    assert completed.returncode == 0, completed.stdout[-3000:]
    assert "2 passed" in completed.stdout


def test_scaffolded_code_is_typed_and_lint_clean(project: Path) -> None:
    typed = _run(
        project, "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), "widget_operator", "tests"
    )
    assert typed.returncode == 0, typed.stdout[-3000:]
    lint = _run(
        project, "ruff", "check", "--no-cache", "--isolated", "--select", "E,F,W,I,B,UP,RUF", "."
    )
    assert lint.returncode == 0, lint.stdout[-3000:]


def test_the_entry_point_parses_its_flags(project: Path) -> None:
    completed = _run(project, "widget_operator", "--help")
    assert completed.returncode == 0
    assert "--kubeconfig" in completed.stdout and "--workers" in completed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--group", "example", "--kind", "Widget"], "'example' is not a DNS subdomain"),
        (["--group", "example.com", "--kind", "widget"], "'widget' is not UpperCamelCase"),
        (["--group", "example.com", "--kind", "Widget", "--version", "1"], "'1' is not v1"),
    ],
)
def test_bad_names_write_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    target = tmp_path / "op"
    result = CliRunner().invoke(main, ["init", str(target), *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not target.exists()


def test_a_non_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "keep.txt").write_text("mine")
    result = CliRunner().invoke(
        main, ["init", str(tmp_path / "op"), "--group", "example.com", "--kind", "Widget"]
    )
    assert result.exit_code == 2
    assert "exists and is not an empty directory" in result.output
    assert [p.name for p in (tmp_path / "op").iterdir()] == ["keep.txt"]
