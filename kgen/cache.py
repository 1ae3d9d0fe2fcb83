"""kgen's on-disk cache: formatted sources and whole generation results.

Entries are keyed by content hashes that include a fingerprint of the generator itself
(kgen's source and templates, and black's version), so an edited generator — released or
not — never reuses a stale entry. The cache only ever costs speed: unreadable or
unwritable entries are treated as misses. Like ``__pycache__``, it is trusted local state.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path

__all__ = ["cache_dir", "fingerprint", "key", "read", "write"]

_GENERATOR_ROOT = Path(__file__).resolve().parent


def cache_dir() -> Path:
    """``$KGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/kgen`` (``~/.cache/kgen``)."""
    configured = os.environ.get("KGEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kgen"


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of everything that shapes generated output besides the inputs."""
    digest = hashlib.sha256(f"black {version('black')}\n".encode())
    templates = Path(str(files("kgen.templates")))
    for root, pattern in ((_GENERATOR_ROOT, "*.py"), (templates, "*.jinja")):
        for path in sorted(root.rglob(pattern)):
            digest.update(path.relative_to(root).as_posix().encode())
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
