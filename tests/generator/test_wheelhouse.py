"""``kgen wheels`` (``kgen.wheelhouse``): the wheels of the installed kgen, built from the
source an editable install names (and cached), or packed back from an installed wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgen import __version__
from kgen.cli import main

NAMES = [f"kgen_{half}-{__version__}-py3-none-any.whl" for half in ("generator", "runtime")]


def _contents(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An empty kgen cache for this module's tests (they share its builds)."""
    path = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KGEN_CACHE_DIR", str(path))
        yield path


@pytest.mark.slow  # ~4-11 s: CI runs it in the slow pass; the default run stays under 5 min
def test_the_editable_install_is_built_once_and_other_versions_are_replaced(
    tmp_path: Path, cache: Path
) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "kgen_runtime-0.0.1-py3-none-any.whl").write_bytes(b"an older release")
    (wheels / "other-1.0-py3-none-any.whl").write_bytes(b"not kgen's")
    result = CliRunner().invoke(main, ["wheels", str(wheels)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in wheels.iterdir()) == [*NAMES, "other-1.0-py3-none-any.whl"]
    assert result.output.splitlines() == [str(wheels / NAMES[1]), str(wheels / NAMES[0])]
    built = {name: _contents(wheels / name) for name in NAMES}
    assert "kgen/templates/scaffold/Makefile.jinja" in built[NAMES[0]]
    assert "kgen_runtime/py.typed" in built[NAMES[1]]
    assert sorted(p.name for p in cache.rglob("*.whl")) == NAMES

    again = CliRunner().invoke(main, ["wheels", str(tmp_path / "again")])
    assert again.exit_code == 0, again.output
    assert {name: _contents(tmp_path / "again" / name) for name in NAMES} == built
    assert len(list(cache.rglob("*.whl"))) == 2  # taken from the cache, not built again


def test_an_installed_wheel_is_packed_back_into_the_same_files(
    tmp_path: Path, cache: Path
) -> None:
    """Both wheels installed (``pip install --target``) and put first on the path: what
    ``kgen wheels`` writes from that install holds the installed wheels' files, byte for
    byte (RECORD: the same rows)."""
    built = tmp_path / "built"
    assert CliRunner().invoke(main, ["wheels", str(built)]).exit_code == 0
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site)]
        + [str(built / name) for name in NAMES],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "from kgen.cli import main; main()"
    probe = "import kgen, pathlib; print(pathlib.Path(kgen.__file__).parent.parent)"
    where = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()) == site  # the installed copy, not this checkout
    subprocess.run(
        [sys.executable, "-c", code, "wheels", str(tmp_path / "repacked")],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    for name in NAMES:
        original, repacked = _contents(built / name), _contents(tmp_path / "repacked" / name)
        assert sorted(repacked) == sorted(original)
        for member, data in original.items():
            if member.endswith("/RECORD"):
                assert sorted(repacked[member].split()) == sorted(data.split())
            else:
                assert repacked[member] == data, member


@pytest.mark.slow  # ~4-11 s: CI runs it in the slow pass; the default run stays under 5 min
def test_a_cache_that_cannot_be_written_costs_only_speed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("KGEN_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    result = CliRunner().invoke(main, ["wheels", str(tmp_path / "wheels")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "wheels").iterdir()) == NAMES
