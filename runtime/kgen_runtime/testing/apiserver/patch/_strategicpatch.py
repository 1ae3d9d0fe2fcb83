"""Strategic merge patch (``application/strategic-merge-patch+json``) on JSON-shaped objects.

apimachinery's ``strategicpatch.StrategicMergeMapPatch`` (the apply half of
``pkg/util/strategicpatch/patch.go``), driven by the patch metadata of an OpenAPI v3 schema
(``x-kubernetes-patch-strategy`` and ``x-kubernetes-patch-merge-key``, the same facts as the
Go structs' ``patchStrategy``/``patchMergeKey`` tags):

* maps merge key by key, ``null`` deletes a key;
* a list with strategy ``merge`` merges by its merge key (lists of maps) or as a set (lists
  of scalars); any other list is replaced;
* directives: ``$patch: replace | delete`` (in a map or as a list element, ``$patch: merge``
  refused in lists), ``$setElementOrder/<list>``, ``$retainKeys`` and
  ``$deleteFromPrimitiveList/<list>``;
* order: ``$setElementOrder`` first, then the order of the patch, then of the live list.

Without a schema (a kind the documents do not describe) maps still merge and lists are
replaced. Errors carry the HTTP status the API server answers with. Inputs are never
mutated.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PatchMeta", "PatchSchema", "StrategicMergePatchError", "strategic_merge_patch"]

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList"
_REF_PREFIX = "#/components/schemas/"

Obj = dict[str, Any]


class StrategicMergePatchError(Exception):
    """A patch the server refuses; ``code`` is the HTTP status it answers with (400 for a
    malformed directive, 422 for unsupported content, 500 for other merge failures)."""

    def __init__(self, message: str, code: int = 500) -> None:
        super().__init__(message)
        self.code = code


def _bad_format(what: str) -> StrategicMergePatchError:
    return StrategicMergePatchError(f"invalid patch format of {what}", 400)


@dataclass(frozen=True, slots=True)
class PatchMeta:
    """A field's ``x-kubernetes-patch-strategy`` (split on commas) and merge key."""

    strategies: tuple[str, ...] = ()
    merge_key: str = ""

    def strategy(self) -> str:
        """The strategy other than ``retainKeys`` (apimachinery's
        ``extractRetainKeysPatchStrategy``), ``""`` if none."""
        others = [s for s in self.strategies if s != "retainKeys"]
        if len(others) > 1 or len(self.strategies) > 2:
            raise StrategicMergePatchError(
                f"unexpected patch strategy: {list(self.strategies)}")
        return others[0] if others else ""


class PatchSchema:
    """One node of an OpenAPI v3 schema, answering apimachinery's ``LookupPatchMeta``.

    ``components`` maps schema names to schemas (``components.schemas`` of the document);
    ``$ref`` and single-``allOf`` references are followed. A node without a schema (an
    unknown field) has no patch metadata anywhere below it.
    """

    __slots__ = ("_components", "_schema")

    def __init__(self, components: Mapping[str, Any], schema: Mapping[str, Any] | None) -> None:
        self._components = components
        self._schema = self._resolve(schema)

    def field(self, key: str) -> tuple[PatchSchema, PatchMeta]:
        """The schema and patch metadata of map field ``key``."""
        prop = self._property(key)
        return PatchSchema(self._components, prop), _meta(prop)

    def items(self, key: str) -> tuple[PatchSchema, PatchMeta]:
        """The element schema and patch metadata of list field ``key``."""
        prop = self._property(key)
        items = self._resolve(prop).get("items") if prop is not None else None
        return PatchSchema(self._components, items), _meta(prop)

    def _property(self, key: str) -> Mapping[str, Any] | None:
        properties = self._schema.get("properties") or {}
        if key in properties:
            prop: Mapping[str, Any] = properties[key]
            return prop
        extra = self._schema.get("additionalProperties")
        return extra if isinstance(extra, Mapping) else None

    def _resolve(self, schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
        for _ in range(64):  # references never chain this deep; stops a cycle
            if schema is None:
                return {}
            ref = schema.get("$ref")
            all_of = schema.get("allOf")
            if ref is None and isinstance(all_of, list) and len(all_of) == 1:
                ref = all_of[0].get("$ref")
            if not isinstance(ref, str) or not ref.startswith(_REF_PREFIX):
                return schema
            schema = self._components.get(ref[len(_REF_PREFIX):])
        return {}


def _meta(prop: Mapping[str, Any] | None) -> PatchMeta:
    if prop is None:
        return PatchMeta()
    strategy = prop.get("x-kubernetes-patch-strategy") or ""
    return PatchMeta(tuple(s for s in strategy.split(",") if s),
                     prop.get("x-kubernetes-patch-merge-key") or "")


_NO_SCHEMA = PatchSchema({}, None)


def strategic_merge_patch(original: Any, patch: Any, schema: PatchSchema | None = None) -> Obj:
    """Apply ``patch`` to ``original`` as the API server does (MergeParallelList and
    IgnoreUnmatchedNulls on); directives never reach the result.

    Raises:
        StrategicMergePatchError: a malformed patch (see its ``code``).
    """
    if not isinstance(patch, dict):
        raise StrategicMergePatchError(
            "json: cannot unmarshal non-object into Go value of type map[string]interface {}",
            400)
    merged = _merge_map(copy.deepcopy(original) if isinstance(original, dict) else {},
                        copy.deepcopy(patch), schema or _NO_SCHEMA)
    result: Obj = _strip_directives(merged)
    return result


# -- maps -------------------------------------------------------------------------------------

def _merge_map(original: Obj, patch: Obj, schema: PatchSchema) -> Obj:
    if _DIRECTIVE in patch:
        return _map_directive(patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)
    for key, value in list(patch.items()):
        delete_list = key.startswith(_DELETE_PRIMITIVE)
        if delete_list:
            key = _unprefixed(key, _DELETE_PRIMITIVE)
        if value is None:
            original.pop(key, None)
            continue
        if key not in original or _shape(original[key]) != _shape(value):
            if not delete_list:
                _set_or_drop(original, key, _discard_nulls(value))
            continue
        current = original[key]
        if isinstance(current, dict):
            sub, meta = schema.field(key)
            if meta.strategy() == "replace":
                original[key] = value
            else:
                original[key] = _merge_map(current, value, sub)
        elif isinstance(current, list):
            sub, meta = schema.items(key)
            strategy = meta.strategy()
            if strategy == "merge" or delete_list:
                original[key] = _merge_list(current, value, sub, meta.merge_key, delete_list)
            else:
                original[key] = value
        else:
            _set_or_drop(original, key, value)
    return original


def _map_directive(patch: Obj) -> Obj:
    directive = patch[_DIRECTIVE]
    if directive == "replace":
        del patch[_DIRECTIVE]
        return patch
    if directive == "delete":
        return {}
    raise StrategicMergePatchError(f"unknown patch type: {directive} in map: {_go(patch)}")


def _apply_retain_keys(original: Obj, patch: Obj) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _bad_format("retainKeys")
    keep = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_PRIMITIVE, _SET_ORDER)):
            continue
        if key not in keep:
            raise _bad_format("retainKeys")
    for key in [k for k in original if k not in keep]:
        del original[key]


def _merge_ordered_lists(original: Obj, patch: Obj, schema: PatchSchema) -> None:
    """``$setElementOrder/<list>``: merge that list now and put it in the given order."""
    for directive in [k for k in patch if k.startswith(_SET_ORDER)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise StrategicMergePatchError(
                f"expected a []interface {{}}, but received a {_go_type(order)}")
        key = _unprefixed(directive, _SET_ORDER)
        live, patched = original.get(key), patch.get(key)
        for value in (live, patched):
            if value is not None and not isinstance(value, list):
                raise StrategicMergePatchError(
                    f"expected a []interface {{}}, but received a {_go_type(value)}")
        sub, meta = schema.items(key)
        strategy, merge_key = meta.strategy(), meta.merge_key
        _check_order(patched or [], order, merge_key)
        if live is None and patched is None:
            continue
        merged: list[Any]
        if patched is None:
            merged = live or []
        elif live is None:
            merged = _remove_list_directives(patched)
        elif strategy == "merge":
            merged = _merge_list(live, patched, sub, merge_key, False)
        else:
            merged = patched
        if merge_key:
            in_patch, server_only = _partition_maps(merged, order, merge_key)
        else:
            in_patch, server_only = _partition_scalars(merged, order)
        is_map = _element_kind(live or [], patched or []) == "map"
        original[key] = _normalize_order(in_patch, server_only, order, live or [],
                                         merge_key if is_map else "")
        patch.pop(key, None)


def _check_order(patched: list[Any], order: list[Any], merge_key: str) -> None:
    """The patch list's items must appear in ``order``, in the same relative order."""
    if not order or not patched:
        return
    items = ([v for v in patched if not _is_delete(v)] if merge_key else patched)
    i = j = 0
    while i < len(items) and j < len(order):
        if _is_map_with_directive(items[i]):
            i += 1
            continue
        if _merge_value(items[i], merge_key) == _merge_value(order[j], merge_key):
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise StrategicMergePatchError(
            f"the order in patch list:\n{_go(patched)}\n doesn't match {_SET_ORDER} list:\n"
            f"{_go(order)}")


# -- lists ------------------------------------------------------------------------------------

def _merge_list(
    live: list[Any], patch: list[Any], schema: PatchSchema, merge_key: str, delete_list: bool
) -> list[Any]:
    if not live and not patch:
        return live
    if _element_kind(live, patch) != "map":
        if delete_list:
            return [v for v in live if v not in patch]
        merged = _dedupe(live + patch)
        in_patch, server_only = _partition_scalars(merged, patch)
        return _normalize_order(in_patch, server_only, patch, live, "")
    if not merge_key:
        raise StrategicMergePatchError("cannot merge lists without merge key")
    live, patch = _apply_list_directives(live, patch, merge_key)
    server_order = list(live)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        index = _find(live, merge_key, item[merge_key])
        if index is None:
            live.append(item)
        else:
            live[index] = _merge_map(live[index], item, schema)
    in_patch, server_only = _partition_maps(live, patch, merge_key)
    return _normalize_order(in_patch, server_only, patch, server_order, merge_key)


def _apply_list_directives(
    live: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """Elements with ``$patch``: ``delete`` removes by merge key, ``replace`` makes the rest
    of the patch the whole list."""
    plain, replace = [], False
    for item in patch:
        if _DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == "delete":
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            live = [v for v in live if v.get(merge_key) != item[merge_key]]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise StrategicMergePatchError("merging lists cannot yet be specified in the patch")
        else:
            raise StrategicMergePatchError(f"unknown patch type: {directive} in map: {_go(item)}")
    return (plain, []) if replace else (live, plain)


def _normalize_order(
    in_patch: list[Any], server_only: list[Any], patch_order: list[Any],
    server_order: list[Any], merge_key: str,
) -> list[Any]:
    """apimachinery's ``normalizeElementOrder``: sort the patch's items by the patch's order
    and the live-only items by the live order, then interleave them by the live order."""
    def position(order: list[Any], item: Any) -> int:
        value = _merge_value(item, merge_key)
        for index, candidate in enumerate(order):
            if _merge_value(candidate, merge_key) == value:
                return index
        return -1

    def ordered(items: list[Any], order: list[Any]) -> list[Any]:
        deleted: list[Any] = []
        if merge_key:
            for item in items:
                if not isinstance(item, dict):
                    raise StrategicMergePatchError(
                        f"expected a map[string]interface {{}}, but received a "
                        f"{_go_type(item)}")
            for item in (*items, *order):
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
            deleted = [v for v in items if _is_delete(v)]
            items = [v for v in items if not _is_delete(v)]
        return sorted(items, key=lambda item: position(order, item)) + deleted

    right = ordered(in_patch, patch_order)
    left = ordered(server_only, server_order)
    result, i, j = [], 0, 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            result.append(left[i])
            i += 1
        elif i >= len(left):
            result.append(right[j])
            j += 1
        else:
            li, ri = position(server_order, left[i]), position(server_order, right[j])
            if li >= 0 and ri >= 0 and li < ri:
                result.append(left[i])
                i += 1
            else:
                result.append(right[j])
                j += 1
    return result


def _partition_maps(
    items: list[Any], by: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    keys = [v.get(merge_key) for v in by if isinstance(v, dict) and merge_key in v]
    in_patch: list[Any] = []
    server_only: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise StrategicMergePatchError(
                f"expected a map[string]interface {{}}, but received a {_go_type(item)}")
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        (in_patch if item[merge_key] in keys else server_only).append(item)
    return in_patch, server_only


def _partition_scalars(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    return [v for v in items if v in by], [v for v in items if v not in by]


def _element_kind(*lists: list[Any]) -> str:
    """``map``, ``scalar`` or an error: apimachinery's ``sliceElementType``."""
    kinds = {_shape(v) for items in lists for v in items}
    if "list" in kinds:
        raise StrategicMergePatchError("lists of lists are not supported", 422)
    if len(kinds) > 1:
        raise StrategicMergePatchError(
            f"list element types are not identical: {_go(list(lists))}")
    if not kinds:
        raise StrategicMergePatchError("no elements in any of the given slices")
    return kinds.pop()


# -- small helpers ----------------------------------------------------------------------------

def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else "null"


def _unprefixed(key: str, prefix: str) -> str:
    head, slash, rest = key.partition("/")
    if not slash or head != prefix:
        what = "primitive list" if prefix == _DELETE_PRIMITIVE else "setElementOrder list"
        raise _bad_format(what)
    return rest


def _find(items: list[Any], key: str, value: Any) -> int | None:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise StrategicMergePatchError(f"value for key {index} is not a map")
        if key in item and item[key] == value:
            return index
    return None


def _merge_value(item: Any, merge_key: str) -> Any:
    if not merge_key:
        return item
    return item.get(merge_key) if isinstance(item, dict) else None


def _is_delete(item: Any) -> bool:
    return isinstance(item, dict) and item.get(_DIRECTIVE) == "delete"


def _is_map_with_directive(item: Any) -> bool:
    return isinstance(item, dict) and _DIRECTIVE in item


def _dedupe(items: list[Any]) -> list[Any]:
    result: list[Any] = []
    for item in items:
        if item not in result:
            result.append(item)
    return result


def _discard_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _discard_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_discard_nulls(v) for v in value]
    return value


_DROP = object()


def _remove_list_directives(value: Any) -> Any:
    """apimachinery's ``removeDirectives``: a map holding ``$patch`` disappears."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return _DROP
        cleaned = {k: _remove_list_directives(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v is not _DROP}
    if isinstance(value, list):
        return [v for v in map(_remove_list_directives, value) if v is not _DROP]
    return value


def _set_or_drop(original: Obj, key: str, value: Any) -> None:
    cleaned = _remove_list_directives(value)
    if cleaned is _DROP:
        original.pop(key, None)
    else:
        original[key] = cleaned


def _strip_directives(value: Any) -> Any:
    """Drop directive keys left in replaced values, as decoding into the typed object does."""
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items()
                if not (k in (_DIRECTIVE, _RETAIN_KEYS)
                        or k.startswith((_SET_ORDER + "/", _DELETE_PRIMITIVE + "/")))}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _no_merge_key(item: Any, merge_key: str) -> StrategicMergePatchError:
    return StrategicMergePatchError(
        f"map: {_go(item)} does not contain declared merge key: {merge_key}")


def _go_type(value: Any) -> str:
    return {"map": "map[string]interface {}", "list": "[]interface {}", "bool": "bool",
            "number": "float64", "string": "string"}.get(_shape(value), "<nil>")


def _go(value: Any) -> str:
    """Roughly Go's ``%v`` of a JSON value, for error messages."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
