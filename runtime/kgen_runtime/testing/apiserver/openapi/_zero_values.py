"""The fields a built-in object shows although nobody set them, and the empty ones it does
not show: Go's JSON of its struct.

kube-apiserver keeps a built-in object as its Go struct and answers with ``encoding/json``
of it, which writes every field that has no ``omitempty`` (a zero ``int32`` as ``0``, a
string as ``""``, a bool as ``false``) and every non-pointer struct field, ``omitempty`` or
not (as ``{}`` with its own such fields inside). That is why a new Service answers
``"status":{"loadBalancer":{}}``, a ReplicationController ``"status":{"replicas":0}``, a
DaemonSet four zero counters, a Deployment or Job ``"status":{}`` and a CronJob's job template
``"metadata":{}``.

The OpenAPI documents say which fields those are: openapi-gen gives exactly them a
``default`` that is the zero value (``{}``, ``0``, ``""``, ``false``; k8s.io/kube-openapi
``pkg/generators/openapi.go`` ``defaultFromComments``/``mustEnforceDefault``). Other
``default`` values come from ``+default`` markers, which the defaulting tables apply; a nil
slice without ``omitempty`` (``null``) is not told apart by the documents and is left out.

The other way round, ``omitempty`` leaves out an empty map or slice: an optional (not
``required``) map or array that is empty is dropped (``labels: {}``, ``data: {}``,
``finalizers: []``). A custom resource is unstructured except for its metadata, which
kube-apiserver passes through ``metav1.ObjectMeta`` (apiextensions-apiserver
``objectmeta.Coerce``): only there are empty maps and lists dropped.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kgen_runtime.meta import copy_json
from kgen_runtime.testing.apiserver.openapi._openapi import (
    builtin_document,
    builtin_kinds,
    group_version_path,
)

__all__ = ["as_go_serialises", "decode_metadata", "empty_object"]

Obj = dict[str, Any]
_REF = "#/components/schemas/"
_ZEROS: tuple[Any, ...] = ({}, 0, "", False)

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_META_DOCUMENT = "api/v1"

#: Per schema name: ``{field: (zero value or None, child, dropped when empty)}``, ``child``
#: being a schema name (a struct), ``("[]", name)`` (a list of structs), ``("{}", name)`` (a
#: map of structs) or None (nothing to walk into).
_Table = Mapping[str, Mapping[str, tuple[Any, Any, bool]]]


@functools.cache
def _table(path: str) -> _Table:
    document = builtin_document(path) or {}
    schemas = (document.get("components") or {}).get("schemas") or {}
    table: dict[str, dict[str, tuple[Any, Any, bool]]] = {}
    for name, schema in schemas.items():
        fields = {}
        required = set(schema.get("required") or ())
        for key, sub in (schema.get("properties") or {}).items():
            child = _child(sub, schemas)
            zero = sub.get("default") if sub.get("default") in _ZEROS and not (
                sub.get("default") == {} and not isinstance(child, str)) else None
            droppable = key not in required and (sub.get("type") == "array" or (
                sub.get("type") == "object" and "additionalProperties" in sub))
            if zero is not None or child is not None or droppable:
                fields[key] = (zero, child, droppable)
        if fields:
            table[name] = fields
    return table


def _child(schema: Mapping[str, Any], schemas: Mapping[str, Any]) -> Any:
    """What a property holds that may itself have zero-valued fields."""
    ref = _ref(schema)
    if ref is not None:
        return ref if (schemas.get(ref) or {}).get("properties") else None
    items = schema.get("items") if schema.get("type") == "array" else None
    values = schema.get("additionalProperties") if schema.get("type") == "object" else None
    for marker, inner in (("[]", items), ("{}", values)):
        ref = _ref(inner) if isinstance(inner, dict) else None
        if ref is not None and (schemas.get(ref) or {}).get("properties"):
            return (marker, ref)
    return None


def _ref(schema: Mapping[str, Any]) -> str | None:
    if "$ref" in schema:
        return str(schema["$ref"]).removeprefix(_REF)
    refs = [s["$ref"] for s in schema.get("allOf") or () if "$ref" in s]
    return str(refs[0]).removeprefix(_REF) if len(refs) == 1 else None


def as_go_serialises(group: str, version: str, kind: str, obj: Obj, *, custom: bool) -> None:
    """Make ``obj``, in place, what Go's JSON of it shows (see the module docstring): a
    built-in kind's whole object, a custom resource's metadata; a built-in kind without a
    shipped document is left as it is."""
    if custom:
        decode_metadata(obj)
        return
    path = group_version_path(group, version)
    name = builtin_kinds(path).get(kind)
    if name is not None:
        managed = (obj.get("metadata") or {}).get("managedFields")
        _fill(_table(path), name, obj)
        if managed is not None:  # as decode_metadata: kept as sent for the field manager
            obj["metadata"]["managedFields"] = managed


def empty_object(group: str, version: str, kind: str, *, custom: bool) -> Obj:
    """Go's JSON of a new empty object of the kind (``scope.Creater.New``): its zero-valued
    fields only (``{"metadata": {}, "spec": {}, "status": {}}`` for a Namespace), ``{}`` for a
    custom resource."""
    obj: Obj = {}
    as_go_serialises(group, version, kind, obj, custom=custom)
    return obj


def decode_metadata(obj: Obj) -> None:
    """``obj``'s metadata as the field manager sees it, for every kind: without empty maps
    and lists, which converting the decoded ``metav1.ObjectMeta`` to unstructured leaves
    out. ``managedFields`` stays as sent: the field manager reads it from the Go object,
    where ``[]`` (reset them) is not nil (keep them)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        managed = meta.get("managedFields")
        _fill(_table(_META_DOCUMENT), _OBJECT_META, meta)
        if managed is not None:
            meta["managedFields"] = managed


#: ``metav1.Time`` fields held by value (not ``*metav1.Time``): ``omitempty`` does not leave
#: out a struct, and a zero Time marshals as ``null`` (apimachinery meta/v1 time.go
#: ``MarshalJSON``). The documents do not tell them from pointers; k8s.io/api core/v1
#: types.go ``PodCondition`` (``LastProbeTime``, ``LastTransitionTime``), as recorded.
_NULL_TIMES: Mapping[str, tuple[str, ...]] = {
    "io.k8s.api.core.v1.PodCondition": ("lastProbeTime", "lastTransitionTime"),
}


def _fill(table: _Table, name: str, obj: Obj) -> None:
    for key in _NULL_TIMES.get(name, ()):
        obj.setdefault(key, None)
    for key, (zero, child, droppable) in table.get(name, {}).items():
        value = obj.get(key)
        if value is None and zero is not None:
            value = obj[key] = copy_json(zero) if zero == {} else zero
        if droppable and value in ({}, []):
            del obj[key]
            continue
        if child is None or value is None:
            continue
        if isinstance(child, str):
            if isinstance(value, dict):
                _fill(table, child, value)
        elif child[0] == "[]" and isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    _fill(table, child[1], item)
        elif child[0] == "{}" and isinstance(value, dict):
            for item in value.values():
                if isinstance(item, dict):
                    _fill(table, child[1], item)
