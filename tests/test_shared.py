"""Tests find ../shared one way (tests.shared), skip without it, and fail loudly in CI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.shared import REPO, requires_shared


def test_missing_shared_dir_skips_outside_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    mark = requires_shared(tmp_path / "absent")
    assert mark.name == "skipif"
    assert mark.args == (True,)
    assert requires_shared(tmp_path).args == (False,)


def test_missing_shared_dir_fails_in_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(RuntimeError, match=r"CI=true but .*absent is missing"):
        requires_shared(tmp_path / "absent")


def test_no_test_hard_codes_an_absolute_shared_path() -> None:
    """On another machine such a path silently skips its cases."""
    pattern = re.compile(r"""["']/(work|home|Users)/""")
    offenders = [
        path.relative_to(REPO).as_posix()
        for folder in (REPO / "tests", REPO / "examples" / "foo-crd" / "tests")
        for path in folder.rglob("*.py")
        if pattern.search(path.read_text())
    ]
    assert offenders == []
