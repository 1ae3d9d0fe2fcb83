""".ci/run runs the default suite and the slow one, and fails when either collects nothing; it
runs the model tests again on the oldest pydantic the runtime allows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared import REPO

CI_RUN = REPO / ".ci" / "run"


def _run_pytest_function() -> str:
    """The ``run_pytest`` shell function of .ci/run, as written there."""
    lines = CI_RUN.read_text().splitlines()
    start = lines.index("run_pytest() {")
    end = lines.index("}", start)
    return "\n".join(lines[start : end + 1])


@pytest.mark.parametrize(("exit_code", "status"), [(0, 0), (1, 1), (5, 1)])
def test_a_pytest_run_that_collects_nothing_fails(
    exit_code: int, status: int, tmp_path: Path
) -> None:
    script = f"set -euo pipefail\n{_run_pytest_function()}\nrun_pytest 'exit {exit_code}'"
    completed = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert completed.returncode == status, completed.stderr
    assert ("collected no tests" in completed.stderr) == (exit_code == 5)


def test_ci_runs_the_slow_tests_the_default_run_skips() -> None:
    assert 'run_pytest ".venv/bin/python -m pytest -q -m slow"' in CI_RUN.read_text()
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    target = "tests/generator/test_determinism.py"
    default, slow = (
        subprocess.run([*collect, *args, target], capture_output=True, text=True, cwd=REPO)
        for args in ([], ["-m", "slow"])
    )
    slow_tests = {line for line in slow.stdout.splitlines() if "::" in line}
    assert any("test_render_is_independent" in test for test in slow_tests)
    assert slow_tests
    assert not slow_tests & set(default.stdout.splitlines())


def test_ci_runs_the_model_tests_on_the_oldest_pydantic_the_runtime_allows() -> None:
    """The runtime declares ``pydantic>=X.Y``; CI installs ``pydantic==X.Y.*`` in a second
    venv for the model tests, so raising the floor without CI (or the reverse) fails here."""
    runtime = (REPO / "runtime" / "pyproject.toml").read_text()
    floor = re.search(r'"pydantic>=(\d+\.\d+),<3"', runtime)
    assert floor is not None, "runtime/pyproject.toml: pydantic>=X.Y,<3"
    ci = CI_RUN.read_text()
    assert f"'pydantic=={floor.group(1)}.*'" in ci
    assert re.search(r'run_pytest "\$oldest/bin/python -m pytest .*tests/meta tests/scheme', ci)
