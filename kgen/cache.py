"""kgen's on-disk cache: formatted sources and whole generation results.

Entries are keyed by content hashes that include a fingerprint of the generator itself
(kgen's source and templates, the runtime modules it imports, and black's version), so an
edited generator — released or not — never reuses a stale entry. The cache only ever costs
speed: unreadable or unwritable entries are treated as misses. Like ``__pycache__``, it is
trusted local state.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import tempfile
from functools import lru_cache
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path

from kgen_runtime.markers._fields import Format
from kgen_runtime.meta import Condition, FieldRules, MergeRules, wire_name
from kgen_runtime.resource import ScaleSubresource
from kgen_runtime.webhook import format_path

__all__ = ["cache_dir", "fingerprint", "fingerprint_sources", "key", "read", "write"]

_GENERATOR_ROOT = Path(__file__).resolve().parent
# The runtime code the generator runs (tests/generator/test_cache.py checks this is all of it).
# Condition and the markers it carries: the generator maps its CRD schema to it.
_RUNTIME_USED = (
    Condition, FieldRules, Format, MergeRules, ScaleSubresource, format_path, wire_name,
)


def cache_dir() -> Path:
    """``$KGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/kgen`` (``~/.cache/kgen``)."""
    configured = os.environ.get("KGEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kgen"


def fingerprint_sources() -> list[Path]:
    """The files whose contents shape generated output besides the inputs: kgen's modules
    and templates, and the modules of the runtime code kgen imports."""
    templates = Path(str(files("kgen.templates"))).resolve()  # kgen/templates is a symlink
    runtime = {Path(inspect.getfile(used)).resolve() for used in _RUNTIME_USED}
    return [
        *sorted(_GENERATOR_ROOT.rglob("*.py")),
        *sorted(templates.rglob("*.jinja")),
        *sorted(runtime),
    ]


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of everything that shapes generated output besides the inputs."""
    digest = hashlib.sha256(f"black {version('black')}\n".encode())
    for path in fingerprint_sources():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def key(*parts: bytes) -> str:
    """A cache key for ``parts`` under the current generator fingerprint."""
    digest = hashlib.sha256(fingerprint().encode())
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def read(kind: str, entry: str) -> bytes | None:
    try:
        return (cache_dir() / kind / entry).read_bytes()
    except OSError:
        return None


def write(kind: str, entry: str, data: bytes) -> None:
    """Store an entry atomically; a read-only or full disk only costs speed."""
    folder = cache_dir() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, folder / entry)
    except OSError:
        pass
