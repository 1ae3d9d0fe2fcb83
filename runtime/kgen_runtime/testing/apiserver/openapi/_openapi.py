"""The built-in OpenAPI v3 documents the runtime ships, and what the test server derives
from them.

``openapi/<path>.json.gz`` are the documents a kube-apiserver v1.36 serves at
``/openapi/v3/<path>`` (``/`` written ``_``), bundled by ``kgen bundle-openapi``. They are read
lazily, once per process, and shared read-only: callers must not modify what they get.
"""

from __future__ import annotations

import functools
import gzip
import threading
from importlib import resources
from typing import Any

import orjson

from kgen_runtime.testing.apiserver.openapi._field_types import FieldType, openapi_types
from kgen_runtime.testing.apiserver.patch._strategicpatch import PatchSchema

__all__ = [
    "builtin_document",
    "builtin_field_types",
    "builtin_kinds",
    "builtin_paths",
    "group_version_path",
    "patch_schema",
]

_PACKAGE = "kgen_runtime.testing"
_FOLDER = "openapi"
_SUFFIX = ".json.gz"
_lock = threading.Lock()


def group_version_path(group: str, version: str) -> str:
    """``api/v1`` or ``apis/<group>/<version>``: the document's path under /openapi/v3."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


@functools.cache
def builtin_paths() -> tuple[str, ...]:
    """The group/version paths of every shipped document, sorted."""
    folder = resources.files(_PACKAGE).joinpath(_FOLDER)
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(_SUFFIX))
    return tuple(name[: -len(_SUFFIX)].replace("_", "/") for name in names)


def builtin_document(path: str) -> dict[str, Any] | None:
    """The shipped document of ``path`` (see :func:`group_version_path`), or ``None``."""
    if path not in builtin_paths():
        return None
    with _lock:
        return _load(path)


@functools.cache
def _load(path: str) -> dict[str, Any]:
    resource = resources.files(_PACKAGE).joinpath(_FOLDER, path.replace("/", "_") + _SUFFIX)
    document: dict[str, Any] = orjson.loads(gzip.decompress(resource.read_bytes()))
    return document


@functools.cache
def builtin_kinds(path: str) -> dict[str, str]:
    """Kind → schema name for the document's own group/version (empty if none is shipped);
    read-only, shared."""
    document = builtin_document(path) or {}
    schemas = (document.get("components") or {}).get("schemas") or {}
    found = {}
    for name, schema in sorted(schemas.items()):
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            if group_version_path(gvk.get("group", ""), gvk.get("version", "")) == path:
                found[gvk["kind"]] = name
    return found


def _schema_name(group: str, version: str, kind: str) -> tuple[str, str] | None:
    """The document path and schema name of a built-in kind, if a document ships it."""
    path = group_version_path(group, version)
    name = builtin_kinds(path).get(kind)
    return None if name is None else (path, name)


@functools.cache
def builtin_field_types(group: str, version: str, kind: str) -> FieldType | None:
    """How field ownership sees a built-in kind (list types, map keys, atomic maps), read
    from its OpenAPI document as kube-apiserver's field manager does; ``None`` if none is
    shipped. One root per kind, its node types built on first use and shared."""
    found = _schema_name(group, version, kind)
    if found is None:
        return None
    document = builtin_document(found[0])
    assert document is not None  # _schema_name found the kind in it
    return openapi_types(document, found[1])


def patch_schema(group: str, version: str, kind: str) -> PatchSchema | None:
    """The strategic-merge-patch schema of a built-in kind; ``None`` if none is shipped."""
    found = _schema_name(group, version, kind)
    if found is None:
        return None
    schemas = (builtin_document(found[0]) or {})["components"]["schemas"]
    return PatchSchema(schemas, schemas[found[1]])
