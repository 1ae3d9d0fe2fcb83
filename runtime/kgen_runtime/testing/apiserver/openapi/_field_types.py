"""How field ownership sees an object's shape: which lists are sets or keyed maps, which maps
are atomic, which map keys are declared fields.

Server-side apply (structured-merge-diff) needs, at every node of an object, what the
OpenAPI schema says about it: ``x-kubernetes-list-type`` (``atomic``, ``set``, ``map``) with
``x-kubernetes-list-map-keys``, and ``x-kubernetes-map-type``/``structType`` ``atomic``.
:class:`FieldType` is that question as a small protocol, walked from the object's root with
:meth:`~FieldType.field` and :meth:`~FieldType.item`; node types are built on first use and
shared (thread-safe: building one twice is harmless). Three sources answer it:

* :func:`schema_types`: a CustomResourceDefinition's structural schema (lists without a list
  type are atomic, as for every CRD), with ``metadata``'s ObjectMeta shape laid over it;
* :func:`openapi_types`: a built-in kind's schema in a Kubernetes OpenAPI document, references
  resolved, lists with a ``merge`` patch strategy keyed by their patch merge key (how
  structured-merge-diff reads those documents);
* :func:`deduced_types`: a resource served without any schema: granular maps, atomic lists.

Which fields of a built-in kind its Go struct always serialises no schema says;
:data:`BUILTIN_ALWAYS_PRESENT` names the usual ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "BUILTIN_ALWAYS_PRESENT",
    "FieldType",
    "ListType",
    "deduced_types",
    "openapi_types",
    "schema_types",
]


@dataclass(frozen=True, slots=True)
class ListType:
    """A list's merge semantics: ``atomic``, ``set`` or ``map`` (keyed by ``keys``).

    ``key_defaults`` are the schema defaults of key fields: an item that leaves such a key out
    is identified by its default (a container port without ``protocol`` is
    ``protocol: TCP``), as structured-merge-diff does.
    """

    kind: str = "atomic"
    keys: tuple[str, ...] = ()
    key_defaults: tuple[tuple[str, Any], ...] = ()


_ATOMIC = ListType()
#: Finds the schema a ``$ref`` (``#/components/schemas/<name>``) points to.
Resolver = Callable[[str], Mapping[str, Any]]


class FieldType(Protocol):
    """What the schema says about one node of an object (a map, list or scalar)."""

    def field(self, name: str) -> FieldType:
        """The type of the map entry ``name``."""
        ...

    def item(self) -> FieldType:
        """The type of this list's items."""
        ...

    def list_type(self) -> ListType: ...

    def atomic_map(self) -> bool:
        """Whether this map is replaced and owned as a whole."""
        ...

    def declares(self, name: str) -> bool:
        """Whether ``name`` is a named field (not an entry of a free-form map)."""
        ...

    def always_present(self) -> bool:
        """Whether this field exists even when unset (a Go value struct or a slice without
        ``omitempty``): then setting its content does not count as adding the field."""
        ...


#: ObjectMeta's lists (every kind's ``metadata``), by field name.
_METADATA_LISTS: Mapping[str, ListType] = {
    "finalizers": ListType("set"),
    "ownerReferences": ListType("map", ("uid",)),
}


class _SchemaType:
    """A node of an OpenAPI schema (``$ref`` resolved through ``resolve``); ``meta`` marks the
    object's ``metadata``; ``builtin`` turns on the Go-serialisation rule of always_present."""

    __slots__ = ("_builtin", "_children", "_meta", "_name", "_resolve", "_schema")

    def __init__(
        self,
        schema: Mapping[str, Any],
        resolve: Resolver | None = None,
        *,
        meta: bool = False,
        name: str = "",
        builtin: bool = False,
    ) -> None:
        self._schema = _dereference(schema, resolve)
        self._resolve = resolve
        self._meta = meta
        self._name = name
        self._builtin = builtin
        self._children: dict[str, FieldType] = {}  # built once: node types are shared

    def _child(self, schema: Mapping[str, Any], name: str = "", *, meta: bool = False) -> (
            _SchemaType):
        return _SchemaType(schema, self._resolve, meta=meta, name=name, builtin=self._builtin)

    def field(self, name: str) -> FieldType:
        found = self._children.get(name)
        if found is None:
            found = self._children[name] = self._field(name)
        return found

    def _field(self, name: str) -> FieldType:
        properties = self._schema.get("properties") or {}
        if name in properties:
            child = properties[name]
        elif isinstance(self._schema.get("additionalProperties"), dict):
            child = self._schema["additionalProperties"]
        else:
            child = {}
        if self._meta and name in _METADATA_LISTS:
            return _Fixed(_METADATA_LISTS[name])
        return self._child(child, name)

    def item(self) -> FieldType:
        found = self._children.get("[]")
        if found is None:
            found = self._children["[]"] = self._child(self._schema.get("items") or {})
        return found

    def list_type(self) -> ListType:
        """The declared list type; else, as structured-merge-diff reads the built-in
        documents, a ``merge`` patch strategy makes a keyed list (with a merge key) or a set."""
        schema = self._schema
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if "x-kubernetes-list-type" in schema:
            return ListType(schema["x-kubernetes-list-type"], keys, self._key_defaults(keys))
        if "merge" in str(schema.get("x-kubernetes-patch-strategy", "")).split(","):
            merge_key = schema.get("x-kubernetes-patch-merge-key")
            return ListType("map", (merge_key,), self._key_defaults((merge_key,))) if (
                merge_key) else ListType("set")
        return _ATOMIC

    def _key_defaults(self, keys: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
        properties = _dereference(self._schema.get("items") or {}, self._resolve).get(
            "properties") or {}
        return tuple((key, properties[key]["default"]) for key in keys
                     if "default" in (properties.get(key) or {}))

    def atomic_map(self) -> bool:
        return self._schema.get("x-kubernetes-map-type") == "atomic"

    def declares(self, name: str) -> bool:
        return name in (self._schema.get("properties") or {}) or self._meta

    def always_present(self) -> bool:
        return self._builtin and self._name in BUILTIN_ALWAYS_PRESENT


class _RootSchemaType(_SchemaType):
    def _field(self, name: str) -> FieldType:
        if name == "metadata":
            return self._child((self._schema.get("properties") or {}).get("metadata") or {},
                               name, meta=True)
        return super()._field(name)


def _dereference(schema: Mapping[str, Any], resolve: Resolver | None) -> Mapping[str, Any]:
    """``schema`` with its ``$ref`` (or a lone ``allOf: [{$ref}]``) merged in."""
    while resolve is not None:
        ref = schema.get("$ref")
        all_of = schema.get("allOf")
        if ref is None and isinstance(all_of, list) and len(all_of) == 1:
            ref = all_of[0].get("$ref")
        if not isinstance(ref, str):
            break
        rest = {key: value for key, value in schema.items() if key not in ("$ref", "allOf")}
        schema = {**resolve(ref), **rest}
    return schema


def schema_types(schema: Mapping[str, Any]) -> FieldType:
    """The root type of objects of a custom resource with ``schema`` (openAPIV3Schema)."""
    return _RootSchemaType(schema)


def openapi_types(document: Mapping[str, Any], schema_name: str) -> FieldType:
    """The root type of a built-in kind from a Kubernetes OpenAPI document (v3
    ``components.schemas`` or v2 ``definitions``), e.g. ``io.k8s.api.apps.v1.Deployment``."""
    schemas: Mapping[str, Any] = (document.get("components") or {}).get("schemas") or (
        document.get("definitions") or {})

    def resolve(ref: str) -> Mapping[str, Any]:
        resolved: Mapping[str, Any] = schemas.get(ref.rsplit("/", 1)[-1]) or {}
        return resolved

    return _RootSchemaType(schemas[schema_name], resolve, builtin=True)


class _Fixed:
    """A node whose list type is known and whose items have no further structure."""

    __slots__ = ("_list",)

    def __init__(self, list_type: ListType) -> None:
        self._list = list_type

    def field(self, name: str) -> FieldType:
        return _Fixed(_ATOMIC)

    def item(self) -> FieldType:
        return _Fixed(_ATOMIC)

    def list_type(self) -> ListType:
        return self._list

    def atomic_map(self) -> bool:
        return False

    def declares(self, name: str) -> bool:
        return True

    def always_present(self) -> bool:
        return False


#: Slices of built-in kinds without ``omitempty``, which an empty Go struct serialises as
#: ``null`` (``PodSpec.Containers``): the field exists before any write sets it. Value structs
#: need no entry: the objects compared already carry them (see
#: :mod:`kgen_runtime.testing.apiserver.openapi._zero_values`).
BUILTIN_ALWAYS_PRESENT = frozenset({"containers"})


class _Deduced:
    """A node of an object without a schema (structured-merge-diff's deduced type): maps are
    granular, lists atomic, and the root's ``metadata`` has ObjectMeta's lists."""

    __slots__ = ("_level",)

    def __init__(self, level: str) -> None:
        self._level = level  # "root", "metadata" or "" (anything below)

    def field(self, name: str) -> FieldType:
        if self._level == "metadata" and name in _METADATA_LISTS:
            return _Fixed(_METADATA_LISTS[name])
        return _Deduced("metadata" if self._level == "root" and name == "metadata" else "")

    def item(self) -> FieldType:
        return _Deduced("")

    def list_type(self) -> ListType:
        return _ATOMIC

    def atomic_map(self) -> bool:
        return False

    def declares(self, name: str) -> bool:
        return True

    def always_present(self) -> bool:
        return False


def deduced_types() -> FieldType:
    """The root type of objects of a resource served without any schema."""
    return _Deduced("root")
