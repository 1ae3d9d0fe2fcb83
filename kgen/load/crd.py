"""CustomResourceDefinition manifests → normalised, checked plain data.

apiextensions.k8s.io/v1 is the reference shape. Legacy v1beta1 manifests get the API server's
v1beta1 defaults (no scope means Namespaced) and are converted to v1 the way it converts them
(top-level ``validation``/``subresources``/``additionalPrinterColumns`` apply to every
version; ``version`` is the single version).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kgen.diagnostics import Diagnostic, Location
from kgen.ir import PrinterColumn
from kgen.load.documents import Document

__all__ = ["CRDSource", "CRDVersion", "PrinterColumn", "load_crds"]

CRD_KIND = "CustomResourceDefinition"
SUPPORTED_API_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_VERSION = re.compile(r"^v[0-9]+((alpha|beta)[0-9]+)?$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True, slots=True)
class CRDVersion:
    """One version of a CRD, with its schema and where that schema sits in the file."""

    name: str
    served: bool
    storage: bool
    deprecated: bool
    deprecation_warning: str | None
    schema: Mapping[str, Any]
    schema_location: Location
    status_subresource: bool
    scale_subresource: Mapping[str, Any] | None
    printer_columns: tuple[PrinterColumn, ...]


@dataclass(frozen=True, slots=True)
class CRDSource:
    """A checked CRD: names, scope and versions."""

    location: Location
    group: str
    kind: str
    list_kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    namespaced: bool
    versions: tuple[CRDVersion, ...]
    manifest: Mapping[str, Any] = field(default_factory=dict)
    """The CRD as ``apiextensions.k8s.io/v1`` (a v1beta1 one converted), for the generated
    fake to install."""


def load_crds(documents: Iterable[Document]) -> tuple[list[CRDSource], list[Diagnostic]]:
    """Pick the CRDs out of ``documents`` (others are skipped) and check each one."""
    crds: list[CRDSource] = []
    problems: list[Diagnostic] = []
    for document in documents:
        data = document.data
        if not isinstance(data, Mapping) or data.get("kind") != CRD_KIND:
            continue
        api_version = data.get("apiVersion")
        if api_version not in SUPPORTED_API_VERSIONS:
            problems.append(
                Diagnostic(
                    document.location.child("apiVersion"),
                    f"unsupported CustomResourceDefinition apiVersion {api_version!r}; "
                    f"expected one of {', '.join(SUPPORTED_API_VERSIONS)}",
                )
            )
            continue
        checker = _Checker(document.location)
        spec = data.get("spec")
        if api_version.endswith("/v1beta1") and isinstance(spec, Mapping):
            spec = _v1beta1_to_v1(spec)
        crd = checker.crd(spec)
        problems.extend(checker.problems)
        if crd is not None and not checker.problems:
            crds.append(replace(crd, manifest=_v1_manifest(crd, data, spec)))
    return crds, problems


#: v1beta1 spec fields that v1 moved into each version (``_v1beta1_to_v1`` did).
_V1BETA1_ONLY = ("version", "validation", "subresources", "additionalPrinterColumns")
#: The only annotation a CRD needs to keep: a cluster refuses *.k8s.io groups without it.
_APPROVED = "api-approved.kubernetes.io"


def _v1_manifest(crd: CRDSource, data: Mapping[str, Any], spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": f"{crd.plural}.{crd.group}"}
    annotations = (data.get("metadata") or {}).get("annotations") or {}
    if isinstance(annotations, Mapping) and _APPROVED in annotations:
        metadata["annotations"] = {_APPROVED: annotations[_APPROVED]}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": CRD_KIND,
        "metadata": metadata,
        "spec": {k: v for k, v in spec.items() if k not in _V1BETA1_ONLY},
    }


def _v1beta1_to_v1(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Apply v1beta1's defaults (``SetDefaults_CustomResourceDefinitionSpec``), then its
    CRD-wide fields to each version, as the API server's conversion does. (The singular and
    list kind defaults are v1's too, and applied to both in ``_Checker``.)"""
    out = dict(spec)
    if not out.get("scope"):
        out["scope"] = "Namespaced"
    versions = spec.get("versions")
    if not versions and spec.get("version"):
        versions = [{"name": spec["version"], "served": True, "storage": True}]
    shared_schema = (spec.get("validation") or {}).get("openAPIV3Schema")
    shared_subresources = spec.get("subresources")
    shared_columns = spec.get("additionalPrinterColumns")
    converted = []
    for version in versions or []:
        if not isinstance(version, Mapping):
            converted.append(version)
            continue
        v = dict(version)
        schema = (v.pop("schema", None) or {}).get("openAPIV3Schema") or shared_schema
        if schema is not None:
            v["schema"] = {"openAPIV3Schema": schema}
        if "subresources" not in v and shared_subresources is not None:
            v["subresources"] = shared_subresources
        columns = v.get("additionalPrinterColumns", shared_columns)
        if columns is not None:
            v["additionalPrinterColumns"] = [
                (
                    {("jsonPath" if k == "JSONPath" else k): val for k, val in c.items()}
                    if isinstance(c, Mapping)
                    else c
                )
                for c in columns
            ]
        converted.append(v)
    out["versions"] = converted
    return out


class _Checker:
    """Checks one CRD document, collecting diagnostics with JSON paths."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self.problems: list[Diagnostic] = []

    def _fail(self, path: tuple[str | int, ...], message: str) -> None:
        self.problems.append(Diagnostic(self.location.child(*path), message))

    def _string(self, data: Mapping[str, Any], path: tuple[str | int, ...], key: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value:
            self._fail((*path, key), "required: a non-empty string")
            return ""
        return value

    def _strings(
        self, data: Mapping[str, Any], path: tuple[str | int, ...], key: str
    ) -> tuple[str, ...]:
        value = data.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self._fail((*path, key), "must be a list of strings")
            return ()
        return tuple(value)

    def crd(self, spec: Any) -> CRDSource | None:
        if not isinstance(spec, Mapping):
            self._fail(("spec",), "required: a mapping")
            return None
        group = self._string(spec, ("spec",), "group")
        names = spec.get("names")
        if not isinstance(names, Mapping):
            self._fail(("spec", "names"), "required: a mapping")
            return None
        npath = ("spec", "names")
        kind = self._string(names, npath, "kind")
        plural = self._string(names, npath, "plural")
        if plural and not _DNS_LABEL.match(plural):
            self._fail((*npath, "plural"), f"{plural!r} is not a lowercase DNS label")
        if kind and not kind.isidentifier():
            self._fail((*npath, "kind"), f"{kind!r} is not a valid kind name")
        singular = names.get("singular") or kind.lower()
        list_kind = names.get("listKind") or f"{kind}List"
        if list_kind == kind:
            self._fail((*npath, "listKind"), f"must differ from kind {kind!r}")
        scope = spec.get("scope")
        if scope not in ("Namespaced", "Cluster"):
            self._fail(("spec", "scope"), f"must be 'Namespaced' or 'Cluster', got {scope!r}")
        versions = spec.get("versions")
        if not isinstance(versions, list) or not versions:
            self._fail(("spec", "versions"), "required: a non-empty list")
            return None
        checked = [self.version(v, ("spec", "versions", i)) for i, v in enumerate(versions)]
        return CRDSource(
            location=self.location,
            group=group,
            kind=kind,
            list_kind=list_kind,
            plural=plural,
            singular=singular,
            short_names=self._strings(names, npath, "shortNames"),
            categories=self._strings(names, npath, "categories"),
            namespaced=scope == "Namespaced",
            versions=tuple(v for v in checked if v is not None),
        )

    def version(self, data: Any, path: tuple[str | int, ...]) -> CRDVersion | None:
        if not isinstance(data, Mapping):
            self._fail(path, "must be a mapping")
            return None
        name = self._string(data, path, "name")
        if name and not _VERSION.match(name):
            self._fail((*path, "name"), f"{name!r} is not a valid version name")
        schema_path = (*path, "schema", "openAPIV3Schema")
        schema = (data.get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            # No schema (allowed by v1beta1): everything is preserved as unknown fields.
            schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        elif not isinstance(schema, Mapping):
            self._fail(schema_path, "must be a mapping")
            return None
        subresources = data.get("subresources") or {}
        if not isinstance(subresources, Mapping):
            self._fail((*path, "subresources"), "must be a mapping")
            subresources = {}
        scale = subresources.get("scale")
        if scale is not None and (
            not isinstance(scale, Mapping)
            or not isinstance(scale.get("specReplicasPath"), str)
            or not isinstance(scale.get("statusReplicasPath"), str)
        ):
            self._fail(
                (*path, "subresources", "scale"),
                "needs specReplicasPath and statusReplicasPath strings",
            )
            scale = None
        return CRDVersion(
            name=name,
            served=bool(data.get("served", True)),
            storage=bool(data.get("storage", False)),
            deprecated=bool(data.get("deprecated", False)),
            deprecation_warning=data.get("deprecationWarning"),
            schema=schema,
            schema_location=self.location.child(*schema_path),
            status_subresource="status" in subresources,
            scale_subresource=scale,
            printer_columns=self.columns(data.get("additionalPrinterColumns"), path),
        )

    def columns(self, data: Any, path: tuple[str | int, ...]) -> tuple[PrinterColumn, ...]:
        if data is None:
            return ()
        cpath = (*path, "additionalPrinterColumns")
        if not isinstance(data, list):
            self._fail(cpath, "must be a list")
            return ()
        columns = []
        for i, column in enumerate(data):
            if not isinstance(column, Mapping):
                self._fail((*cpath, i), "must be a mapping")
                continue
            columns.append(
                PrinterColumn(
                    name=self._string(column, (*cpath, i), "name"),
                    type=self._string(column, (*cpath, i), "type"),
                    json_path=self._string(column, (*cpath, i), "jsonPath"),
                    description=str(column.get("description") or ""),
                    format=str(column.get("format") or ""),
                    priority=int(column.get("priority") or 0),
                )
            )
        return tuple(columns)
