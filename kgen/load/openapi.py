"""Kubernetes OpenAPI v3 documents (``/openapi/v3/apis/<group>/<version>``) → checked data.

Kinds are the schemas marked with ``x-kubernetes-group-version-kind`` for the document's own
group/version that the document also serves; their plural, scope and subresources come from
the ``paths``, whose operations name the kind they act on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kgen.diagnostics import Diagnostic, Location
from kgen.load.documents import Document

__all__ = ["OpenAPIKind", "OpenAPISource", "is_openapi", "load_openapi"]

# /api/v1[/namespaces/{namespace}]/<plural>[/{name}[/<subresource>]]
_RESOURCE_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"/(?P<ns>namespaces/\{namespace\}/)?(?P<plural>[^/{}]+)"
    r"(?:/\{name\}(?:/(?P<sub>[^/{}]+))?)?$"
)
_METHODS = ("get", "put", "post", "patch", "delete")


@dataclass(frozen=True, slots=True)
class OpenAPIKind:
    """A served kind: its schema's name and what the paths say about its resource."""

    group: str
    version: str
    kind: str
    schema: str
    plural: str
    namespaced: bool
    subresources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class OpenAPISource:
    """One OpenAPI v3 document: its schemas (by full name) and the kinds it serves."""

    location: Location
    schemas: Mapping[str, Mapping[str, Any]]
    kinds: tuple[OpenAPIKind, ...]


def is_openapi(data: Any) -> bool:
    return isinstance(data, Mapping) and "openapi" in data and "components" in data


def load_openapi(documents: Iterable[Document]) -> tuple[list[OpenAPISource], list[Diagnostic]]:
    """Pick the OpenAPI v3 documents out of ``documents`` and find the kinds each serves."""
    sources: list[OpenAPISource] = []
    problems: list[Diagnostic] = []
    for document in documents:
        if not is_openapi(document.data):
            continue
        schemas = (document.data.get("components") or {}).get("schemas")
        if not isinstance(schemas, Mapping):
            problems.append(
                Diagnostic(
                    document.location.child("components", "schemas"),
                    "required: a mapping of schemas",
                )
            )
            continue
        paths = document.data.get("paths") or {}
        kinds = _served_kinds(schemas, paths if isinstance(paths, Mapping) else {})
        sources.append(OpenAPISource(document.location, schemas, tuple(kinds)))
    return sources, problems


def _gvk_of(value: Any) -> list[tuple[str, str, str]]:
    entries = value if isinstance(value, list) else [value]
    return [
        (str(e.get("group", "")), str(e.get("version", "")), str(e.get("kind", "")))
        for e in entries
        if isinstance(e, Mapping)
    ]


def _served_kinds(
    schemas: Mapping[str, Mapping[str, Any]], paths: Mapping[str, Any]
) -> list[OpenAPIKind]:
    resources: dict[tuple[str, str, str], dict[str, Any]] = {}  # gvk → plural, scope, subs
    subresources: dict[tuple[str, str, str], set[str]] = {}  # (group, version, plural) → subs
    for path, item in paths.items():
        match = _RESOURCE_PATH.match(path)
        if match is None or not isinstance(item, Mapping):
            continue
        group = match["group"] or ""
        version = match["core"] or match["version"]
        plural = match["plural"]
        if match["sub"]:
            subresources.setdefault((group, version, plural), set()).add(match["sub"])
            continue
        for method in _METHODS:
            operation = item.get(method)
            if not isinstance(operation, Mapping):
                continue
            for gvk in _gvk_of(operation.get("x-kubernetes-group-version-kind")):
                if gvk[:2] != (group, version):
                    continue
                entry = resources.setdefault(gvk, {"plural": plural, "namespaced": False})
                entry["namespaced"] = entry["namespaced"] or bool(match["ns"])
    by_gvk = {
        gvk: name
        for name, schema in sorted(schemas.items())
        if isinstance(schema, Mapping)
        for gvk in _gvk_of(schema.get("x-kubernetes-group-version-kind"))
    }
    kinds = []
    for gvk, entry in sorted(resources.items()):
        schema_name = by_gvk.get(gvk)
        if schema_name is None:
            continue
        group, version, kind = gvk
        kinds.append(
            OpenAPIKind(
                group=group,
                version=version,
                kind=kind,
                schema=schema_name,
                plural=entry["plural"],
                namespaced=entry["namespaced"],
                subresources=tuple(sorted(subresources.get((group, version, entry["plural"]), ()))),
            )
        )
    return kinds
