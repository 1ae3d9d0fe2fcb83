"""Field sets over JSON objects, as structured-merge-diff computes them (``fieldpath``, ``typed``).

A field path is a tuple of encoded path elements, spelled as in ``fieldsV1``: ``f:name`` (a
map entry), ``k:{"name":"c"}`` (the item of a keyed list, its keys in JSON with sorted
names), ``v:"x"`` (the item of a set). A field set is a frozenset of paths, each a member
(a path's prefixes are not members unless listed). The operations:

* :func:`field_set` — the fields an apply configuration sets (``TypedValue.ToFieldSet``);
* :func:`compare` — what an update adds, modifies and removes (``TypedValue.Compare``);
* :func:`merge` — an apply configuration merged into the live object (``TypedValue.Merge``):
  maps key by key, keyed lists and sets item by item, atomic values replaced;
* :func:`remove` — delete the fields of a set from an object (pruning on apply);
* :func:`to_fields_v1`/:func:`from_fields_v1` — the ``fieldsV1`` tree and back;
* :func:`describe` — a path as conflict messages print it (``.spec.containers[name="c"]``).

Inputs are never mutated.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from kgen_runtime.testing.apiserver.openapi._field_types import FieldType, ListType

__all__ = [
    "Comparison",
    "FieldPath",
    "FieldSet",
    "compare",
    "describe",
    "field_set",
    "from_fields_v1",
    "merge",
    "remove",
    "to_fields_v1",
]

FieldPath = tuple[str, ...]
FieldSet = frozenset[FieldPath]
_ABSENT: Any = object()


def _item_element(item: Any, list_type: ListType) -> str:
    if list_type.kind == "map" and isinstance(item, dict):
        known = {**dict(list_type.key_defaults), **item}
        key = {name: known[name] for name in sorted(list_type.keys) if name in known}
        return "k:" + orjson.dumps(key).decode()
    return "v:" + orjson.dumps(item).decode()


def _items(values: list[Any], t: FieldType) -> dict[str, Any]:
    """A granular list's items by path element (a later duplicate wins)."""
    list_type = t.list_type()
    return {_item_element(item, list_type): item for item in values}


def _granular_list(t: FieldType) -> bool:
    return t.list_type().kind in ("set", "map")


# -- ToFieldSet -------------------------------------------------------------------------------


def field_set(config: dict[str, Any], t: FieldType) -> FieldSet:
    """The fields an apply configuration sets (its leaves, list items and empty maps)."""
    out: set[FieldPath] = set()
    _collect(config, t, (), out)
    return frozenset(out)


def _collect(value: Any, t: FieldType, path: FieldPath, out: set[FieldPath]) -> None:
    if isinstance(value, dict):
        if t.atomic_map() and path:
            out.add(path)
            return
        for key, item in value.items():
            child = (*path, f"f:{key}")
            _collect(item, t.field(key), child, out)
            if item is None or item == {} or (
                    not t.declares(key) and isinstance(item, dict)):
                out.add(child)
    elif isinstance(value, list):
        if not _granular_list(t):
            out.add(path)
            return
        for element, item in _items(value, t).items():
            child = (*path, element)
            _collect(item, t.item(), child, out)
            out.add(child)
    elif path:
        out.add(path)


# -- Compare ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Comparison:
    """The fields a write added, modified (leaves with a new value) and removed."""

    added: set[FieldPath] = field(default_factory=set)
    modified: set[FieldPath] = field(default_factory=set)
    removed: set[FieldPath] = field(default_factory=set)

    def changed(self) -> FieldSet:
        return frozenset(self.added | self.modified)


def compare(old: Any, new: Any, t: FieldType) -> Comparison:
    """What changed from ``old`` to ``new`` (structured-merge-diff's ``Compare``)."""
    result = Comparison()
    _compare(old, new, t, (), result)
    return result


def _compare(lhs: Any, rhs: Any, t: FieldType, path: FieldPath, c: Comparison) -> None:
    if lhs is not _ABSENT and rhs is not _ABSENT and lhs == rhs:
        return  # an equal subtree changes nothing (and is compared at C speed)
    shape = _shape(lhs if rhs is _ABSENT else rhs)
    other = _shape(lhs) if rhs is not _ABSENT and lhs is not _ABSENT else shape
    if None in (lhs, rhs) and "scalar" in (shape, other):
        # null is an empty list or map (typed/helpers.go listValue, mapValue: "Null is a
        # valid list"): filling a null list adds its items, not the list itself
        shape = other = shape if lhs is None else other
    leaf = True
    if shape != other or shape == "scalar":
        _leaf(lhs, rhs, path, c)
    elif shape == "map":
        left, right = _mapping(lhs), _mapping(rhs)
        if (t.atomic_map() and path) or (not left and not right):
            _leaf(lhs, rhs, path, c)
        else:
            leaf = False
            for key in {**left, **right}:
                _compare(left.get(key, _ABSENT), right.get(key, _ABSENT), t.field(key),
                         (*path, f"f:{key}"), c)
    else:
        left_list, right_list = _sequence(lhs), _sequence(rhs)
        if not _granular_list(t) or (not left_list and not right_list):
            _leaf(lhs, rhs, path, c)
        else:
            leaf = False
            left, right = _items(left_list, t), _items(right_list, t)
            for element in {**left, **right}:
                _compare(left.get(element, _ABSENT), right.get(element, _ABSENT), t.item(),
                         (*path, element), c)
    if not leaf and path and not t.always_present():
        if lhs is _ABSENT:
            c.added.add(path)
        elif rhs is _ABSENT:
            c.removed.add(path)


def _leaf(lhs: Any, rhs: Any, path: FieldPath, c: Comparison) -> None:
    if lhs is _ABSENT:
        c.added.add(path)
    elif rhs is _ABSENT:
        c.removed.add(path)
    elif lhs != rhs:
        c.modified.add(path)


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    return "scalar"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# -- Merge ------------------------------------------------------------------------------------


def merge(live: Any, config: Any, t: FieldType, *, root: bool = True) -> Any:
    """``config`` merged into ``live``: maps and keyed lists item by item, others replaced.

    ``null`` in the configuration leaves the live value alone.
    """
    if isinstance(config, dict) and isinstance(live, dict) and not (
            t.atomic_map() and not root):
        result = dict(live)
        for key, value in config.items():
            if value is not None:
                result[key] = merge(live.get(key), value, t.field(key), root=False)
        return result
    if isinstance(config, list) and isinstance(live, list) and _granular_list(t):
        return _merge_list(live, config, t)
    return copy.deepcopy(config)


def _merge_list(live: list[Any], config: list[Any], t: FieldType) -> list[Any]:
    """Items merged by path element, ordered as structured-merge-diff orders them: items of
    the configuration in its order, live-only items kept where they were."""
    left, right = _items(live, t), _items(config, t)
    left_order, right_order = list(left), list(right)
    shared = [element for element in right_order if element in left]
    next_shared = shared.pop(0) if shared else None
    merged: set[str] = set()
    out: list[Any] = []
    i = j = 0
    while i < len(left_order) or j < len(right_order):
        if i < len(left_order) and j < len(right_order):
            element = left_order[i]
            if element == right_order[j]:
                merged.add(element)
                out.append(merge(left[element], right[element], t.item(), root=False))
                i, j = i + 1, j + 1
                if next_shared == element:
                    next_shared = shared.pop(0) if shared else None
                continue
            if element in right and next_shared is not None and next_shared != element:
                i += 1
                continue
        if i < len(left_order):
            element = left_order[i]
            if element not in right:
                out.append(copy.deepcopy(left[element]))
                i += 1
                continue
            if element in merged:
                i += 1
                continue
        if j < len(right_order):
            element = right_order[j]
            merged.add(element)
            out.append(merge(left[element], right[element], t.item(), root=False)
                       if element in left else copy.deepcopy(right[element]))
            j += 1
            if next_shared == element:
                next_shared = shared.pop(0) if shared else None
    return out


# -- Remove -----------------------------------------------------------------------------------


def remove(obj: dict[str, Any], paths: Iterable[FieldPath], t: FieldType) -> dict[str, Any]:
    """A copy of ``obj`` without ``paths``; maps and lists they leave empty go too."""
    result: dict[str, Any] = copy.deepcopy(obj)
    for path in sorted(paths, key=len):  # a list item before its key fields
        _remove_path(result, path, t)
    return result


def _remove_path(node: Any, path: FieldPath, t: FieldType) -> bool:
    """Remove ``path`` below ``node``; True when ``node`` is left empty by it."""
    head, rest = path[0], path[1:]
    if isinstance(node, dict) and head.startswith("f:"):
        key = head[2:]
        if key not in node:
            return False
        if not rest or _remove_path(node[key], rest, t.field(key)):
            del node[key]
            return not node
        return False
    if isinstance(node, list) and _granular_list(t):
        for index, item in enumerate(node):
            list_type = t.list_type()
            if _item_element(item, list_type) != head:
                continue
            if not rest or _remove_path(item, rest, t.item()):
                del node[index]
                return not node
            return False
    return False


# -- fieldsV1 ---------------------------------------------------------------------------------


def to_fields_v1(fields: FieldSet) -> dict[str, Any]:
    """The ``fieldsV1`` tree of a set: members with children get a ``"."`` entry."""
    tree: dict[str, Any] = {}
    for path in sorted(fields):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    _mark_members(tree, (), fields)
    return tree


def _mark_members(node: dict[str, Any], path: FieldPath, fields: FieldSet) -> None:
    for element, child in node.items():
        child_path = (*path, element)
        if child and child_path in fields:
            child["."] = {}
        _mark_members(child, child_path, fields)


def from_fields_v1(tree: Any) -> FieldSet:
    """The set a ``fieldsV1`` tree encodes (unreadable trees give the empty set)."""
    return frozenset(_paths(tree, ())) if isinstance(tree, dict) else frozenset()


def _paths(node: dict[str, Any], path: FieldPath) -> Iterator[FieldPath]:
    for element, child in node.items():
        if element == ".":
            yield path
            continue
        child_path = (*path, element)
        if not isinstance(child, dict) or not child:
            yield child_path
        else:
            yield from _paths(child, child_path)


def describe(path: FieldPath) -> str:
    """A path as structured-merge-diff prints it: ``.spec.ports[port=80,protocol="TCP"]``."""
    return "".join(_describe_element(element) for element in path)


def _describe_element(element: str) -> str:
    kind, text = element[:2], element[2:]
    if kind == "f:":
        return f".{text}"
    if kind == "k:":
        key = orjson.loads(text)
        return "[" + ",".join(f"{name}={orjson.dumps(value).decode()}"
                              for name, value in key.items()) + "]"
    return f"[={text}]"
