"""A shell as a new user has it, for tests that install and run kgen outside this checkout:
no virtual environment active and none of this test run's Python path settings."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["clean_environment", "run"]


def clean_environment() -> dict[str, str]:
    """The environment minus any activated virtual environment (its variables and its
    ``bin/`` on PATH) and the Python path settings of this test run."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "MYPYPATH")
    }
    env["PATH"] = os.pathsep.join(
        entry
        for entry in env.get("PATH", "").split(os.pathsep)
        if entry and not (Path(entry).parent / "pyvenv.cfg").exists()
    )
    return env


def run(command: list[str | Path], cwd: Path, timeout: float = 900) -> str:
    """Run ``command`` in ``cwd`` in :func:`clean_environment`; its standard output, or a
    failure carrying the end of its output."""
    completed = subprocess.run(
        command,
        cwd=cwd,
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"{command}: exit {completed.returncode}\n{output[-4000:]}"
    return completed.stdout
