"""``kgen init``, then the scaffolded README's commands, as a user runs them: in a shell with
no virtual environment active, the project making its own. Slow (a full ``pip install``)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._fresh import clean_environment


def _readme_commands(readme: str) -> list[str]:
    """The commands of the README's set-up block that needs no make."""
    block = re.search(r"Without make, the same steps:\n\n```bash\n(.*?)```", readme, re.S)
    assert block is not None, "the README has no set-up commands without make"
    return [line for line in block.group(1).splitlines() if line.strip()]


@pytest.mark.slow
def test_init_then_the_readme_commands_pass_in_a_fresh_venv(
    tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    env = clean_environment()
    kgen = Path(sys.executable).parent / "kgen"  # README command 1 installed it there
    started = time.monotonic()
    subprocess.run(
        [str(kgen), "init", "widget-operator", "--group", "example.com", "--kind", "Widget"],
        cwd=tmp_path, env=env, check=True, capture_output=True, timeout=120,
    )
    initialized = time.monotonic()
    project = tmp_path / "widget-operator"
    setup, *rest = _readme_commands((project / "README.md").read_text())
    assert setup.startswith("python3 -m venv .venv && .venv/bin/pip install")
    subprocess.run(["bash", "-ec", setup], cwd=project, env=env, check=True,
                   capture_output=True, timeout=900)
    installed = time.monotonic()
    assert rest == [".venv/bin/python -m pytest -q"]
    completed = subprocess.run(["bash", "-ec", rest[0]], cwd=project, env=env, text=True,
                               capture_output=True, timeout=300, check=False)
    finished = time.monotonic()
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert re.search(r"^11 passed in ", completed.stdout, re.M), completed.stdout[-2000:]
    timings = {
        "init_s": round(initialized - started, 1),
        "pip_install_s": round(installed - initialized, 1),
        "tests_s": round(finished - installed, 1),
    }
    for name, seconds in timings.items():
        record_property(name, seconds)
    print(f"kgen init → green tests in a fresh venv: {timings}")
