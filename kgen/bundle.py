"""Bundle Kubernetes OpenAPI v3 documents as package data for ``kgen_runtime.testing``.

The test API server serves them at ``/openapi/v3`` and reads their patch metadata for
strategic merge patch, so the runtime carries them without reading the source folder at run
time. Each ``<path>.json`` (``/openapi/v3/<path>`` with ``/`` as ``_``) becomes
``<path>.json.gz``: compact JSON with sorted keys, gzip without a timestamp, so the bytes
depend only on the documents' content (``--verify`` compares them).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson

from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.load.openapi import is_openapi
from kgen.write import WriteResult

__all__ = ["bundle_openapi"]

_SUFFIX = ".json.gz"


def bundle_openapi(source: Path, output: Path, *, verify: bool = False) -> WriteResult:
    """Write one compressed document per OpenAPI v3 document of ``source`` into ``output``;
    with ``verify`` only compare. Bundles whose document is gone are removed."""
    files: dict[str, bytes] = {}
    problems = []
    for path in sorted(source.glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as err:
            problems.append(Diagnostic(Location(str(path)), f"unreadable: {err}"))
            continue
        if is_openapi(data):
            files[path.stem + _SUFFIX] = gzip.compress(
                orjson.dumps(data, option=orjson.OPT_SORT_KEYS), 9, mtime=0)
    if not files and not problems:
        problems.append(Diagnostic(Location(str(source)), "no OpenAPI v3 document found"))
    if problems:
        raise GenerateError(problems)
    result = WriteResult()
    for name, data in sorted(files.items()):
        target = output / name
        if not target.is_file() or target.read_bytes() != data:
            result.changed.append(name)
            if not verify:
                output.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
    stale = sorted(p.name for p in output.glob("*" + _SUFFIX) if p.name not in files)
    for name in stale:
        result.removed.append(name)
        if not verify:
            (output / name).unlink()
    return result
