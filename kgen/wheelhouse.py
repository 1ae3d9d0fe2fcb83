"""Wheels of the installed kgen (kgen-runtime and kgen-generator) for a project's wheelhouse.

Until kgen is on PyPI, a scaffolded project installs it from its own ``wheels/`` folder
(``pip install --find-links wheels``), so that its Makefile, CI and Dockerfile work on a
machine that never had kgen. The wheels come from the kgen that runs ``kgen init`` (or
``kgen wheels``), however it was installed:

- from a wheel (pip's usual install): the installed files are packed back into that wheel,
  as listed in the distribution's RECORD, without what installing added (bytecode, the
  console scripts, INSTALLER, REQUESTED, direct_url.json). Needs neither network nor a
  build backend.
- from a source directory (``pip install [-e] <dir>``, PEP 610's ``dir_info``): the
  directory is copied (without hidden, cache and build folders, so no stale ``build/lib``
  reaches the wheel) and built with ``pip wheel``. kgen's cache (``kgen.cache.cache_dir()``)
  keeps the latest build of each source directory, under a hash of the copied sources.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib.metadata import Distribution, distributions
from pathlib import Path
from urllib.parse import unquote, urlsplit

from kgen.cache import cache_dir
from kgen.diagnostics import Diagnostic, GenerateError, Location

__all__ = ["DISTRIBUTIONS", "GENERATOR_DISTRIBUTION", "RUNTIME_DISTRIBUTION", "write_wheels"]

RUNTIME_DISTRIBUTION = "kgen-runtime"
"""The distribution of ``kgen_runtime``: what an operator (and its image) installs."""
GENERATOR_DISTRIBUTION = "kgen-generator"
"""The distribution of the ``kgen`` command: a development dependency of the project."""
DISTRIBUTIONS = (RUNTIME_DISTRIBUTION, GENERATOR_DISTRIBUTION)
"""What a project installs of kgen: the runtime, and the generator as a development tool."""

# What installing a wheel adds to its dist-info (pip, PEP 376/610/627).
_INSTALL_RECORDS = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}
# What a source copy leaves out: version control, environments, caches, earlier builds.
_NOT_SOURCES = shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "build", "dist")
# Zip entries get one fixed time: the same installed files make the same wheel bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def write_wheels(directory: Path) -> list[Path]:
    """Write the wheels of the installed :data:`DISTRIBUTIONS` into ``directory`` (made if
    missing), replacing other versions of them there; return the wheels written.

    Raises:
        GenerateError: a distribution is not installed, or building it failed.
    """
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in DISTRIBUTIONS:
        dist = _installed(name)
        prefix = _wheel_prefix(dist)
        for old in directory.glob(f"{prefix.split('-')[0]}-*.whl"):
            old.unlink()
        source = _source_directory(dist)
        written.append(_build(source, name, directory) if source else _repack(dist, directory))
    return written


def _installed(name: str) -> Distribution:
    """The installed distribution ``name``: the first on ``sys.path`` that an installer
    recorded (RECORD), not the ``.egg-info`` an in-tree build leaves beside the sources."""
    for dist in distributions(name=name):
        if dist.read_text("RECORD") is not None:
            return dist
    raise GenerateError([Diagnostic(Location(name), "is not installed")])


def _wheel_prefix(dist: Distribution) -> str:
    """``<name>-<version>`` as a wheel file name spells it (PEP 427: ``-`` becomes ``_``)."""
    name = dist.metadata["Name"].replace("-", "_").replace(".", "_").lower()
    return f"{name}-{dist.version}"


def _source_directory(dist: Distribution) -> Path | None:
    """The local directory ``dist`` was installed from (PEP 610), if it was."""
    text = dist.read_text("direct_url.json")
    origin = json.loads(text) if text else {}
    url = origin.get("url", "")
    if "dir_info" not in origin or not url.startswith("file://"):
        return None
    return Path(unquote(urlsplit(url).path))


def _repack(dist: Distribution, directory: Path) -> Path:
    """Pack an installed pure-Python wheel back into ``directory``."""
    files = []
    for entry in dist.files or ():
        parts = entry.parts
        if parts[0] == ".." or "__pycache__" in parts:
            continue  # console scripts pip wrote, bytecode pip compiled
        if parts[0].endswith(".dist-info") and parts[-1] in _INSTALL_RECORDS:
            continue
        files.append((entry.as_posix(), Path(str(dist.locate_file(entry))).read_bytes()))
    dist_info = next(name for name, _ in files if name.endswith(".dist-info/METADATA"))
    dist_info = dist_info.rsplit("/", 1)[0]
    tags = [
        line.split(":", 1)[1].strip()
        for line in (dist.read_text("WHEEL") or "").splitlines()
        if line.startswith("Tag:")
    ]
    if not tags:
        message = "its dist-info has no WHEEL tag: not installed from a wheel"
        raise GenerateError([Diagnostic(Location(dist.metadata["Name"]), message)])
    # The file name's compressed tag set (PEP 425): py2-none-any, py3-none-any → py2.py3-none-any
    columns = zip(*(tag.split("-") for tag in tags), strict=True)
    tag = "-".join(".".join(dict.fromkeys(column)) for column in columns)
    target = directory / f"{_wheel_prefix(dist)}-{tag}.whl"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in sorted(files):
            wheel.writestr(zipfile.ZipInfo(name, _ZIP_TIME), data, zipfile.ZIP_DEFLATED)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            writer.writerow([name, f"sha256={digest.decode()}", len(data)])
        writer.writerow([f"{dist_info}/RECORD", "", ""])
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", _ZIP_TIME)
        wheel.writestr(info, record.getvalue(), zipfile.ZIP_DEFLATED)
    return target


def _build(source: Path, name: str, directory: Path) -> Path:
    """Write the wheel of the project in ``source`` into ``directory``: built from a copy of
    it, or taken from the cache (best effort: a cache that cannot be written is skipped)."""
    if not source.is_dir():
        message = f"installed from {source}, which is gone: reinstall it to make its wheel"
        raise GenerateError([Diagnostic(Location(name), message)])
    with tempfile.TemporaryDirectory(prefix="kgen-wheel-") as scratch:
        copy = Path(scratch) / "source"
        shutil.copytree(source, copy, symlinks=True, ignore=_NOT_SOURCES)
        # One slot per distribution and source directory, holding the latest build only.
        slot_key = hashlib.sha256(f"{name}\0{source.resolve()}".encode()).hexdigest()
        slot = cache_dir() / "wheels" / slot_key[:16]
        cached = slot / _tree_hash(copy)
        wheels = sorted(cached.glob("*.whl"))
        if wheels:
            return Path(shutil.copy(wheels[0], directory / wheels[0].name))
        out = Path(scratch) / "out"
        # The environment's own build backend first (offline, fast); if it has none that
        # the project's pyproject.toml accepts, pip's isolated build fetches one.
        for isolation in (["--no-build-isolation"], []):
            pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", *isolation]
            completed = subprocess.run(
                [*pip_wheel, "--wheel-dir", str(out), str(copy)],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if completed.returncode == 0:
                break
        else:
            last = (completed.stderr.strip().splitlines() or ["(no output)"])[-1]
            message = f"pip wheel {source} failed: {last}"
            raise GenerateError([Diagnostic(Location(name), message)])
        (built,) = out.glob("*.whl")
        try:
            shutil.rmtree(slot, ignore_errors=True)
            cached.mkdir(parents=True)
            shutil.copy(built, cached / built.name)
        except OSError:
            pass  # the cache only ever costs speed (kgen.cache)
        return Path(shutil.copy(built, directory / built.name))


def _tree_hash(root: Path) -> str:
    """A hash of the names and contents of the files under ``root``."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()
