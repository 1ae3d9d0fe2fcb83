"""The part of an object a field manager owns, read from its ``metadata.managedFields``
(client-go's ``managedfields.ExtractInto``, structured-merge-diff's ``ExtractItems`` over
the set's leaves).

A ``fieldsV1`` tree names owned fields with ``f:<name>`` (a map entry), ``k:{...}`` (the
item of a keyed list, by its key fields), ``v:<json>`` (the item of a set) and ``.`` (the
node itself); a node without children is a leaf. What a leaf yields, as client-go:

* a scalar, an atomic list (lists are leaves only when atomic) or an atomic map (the
  models' ``__kgen_merge__`` or the value's class's ``__kgen_map_type__`` says
  ``atomic``): its whole value;
* a granular map or an object (owned because an empty one was applied), an empty container
  or null: nothing — an extracted null is the same as unset;
* a set item or a keyed item: the whole item.

A map or list whose owned parts yield nothing is left out too.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import orjson

from kgen_runtime.meta import KubeModel, copy_json, map_type, merge_rules, wire_name

__all__ = ["applied_fields", "extract_owned"]

_NOTHING: Any = object()


def applied_fields(
    wire: Mapping[str, Any], field_manager: str, subresource: str | None = None
) -> Mapping[str, Any] | None:
    """The ``fieldsV1`` of ``field_manager``'s Apply entry for ``subresource`` (None: none)."""
    entries = (wire.get("metadata") or {}).get("managedFields") or []
    for entry in entries:
        if (
            entry.get("manager") == field_manager
            and entry.get("operation") == "Apply"
            and (entry.get("subresource") or "") == (subresource or "")
        ):
            fields: Mapping[str, Any] = entry.get("fieldsV1") or {}
            return fields
    return None


def extract_owned(
    wire: Mapping[str, Any], fields_v1: Mapping[str, Any], model: KubeModel | None = None
) -> dict[str, Any]:
    """The fields of the wire object ``wire`` that ``fields_v1`` lists (a new object).

    ``model`` is the object ``wire`` was dumped from: its classes' merge metadata tells
    atomic maps (without it every map is granular)."""
    found = _extract_map(wire, fields_v1, model)
    return {} if found is _NOTHING else dict(found)


def _extract(value: Any, tree: Mapping[str, Any], atomic: bool, model: Any) -> Any:
    children = {element: sub for element, sub in tree.items() if element != "."}
    if not children:
        if value is None or value == {} or value == []:
            return _NOTHING
        if isinstance(value, dict) and not atomic:
            return _NOTHING
        return copy_json(value)
    if isinstance(value, dict):
        return _extract_map(value, children, model)
    if isinstance(value, list):
        return _extract_list(value, children, model)
    return _NOTHING


def _extract_map(value: Mapping[str, Any], tree: Mapping[str, Any], model: Any) -> Any:
    attributes = _attributes(type(model)) if isinstance(model, KubeModel) else None
    rules = merge_rules(type(model)) if attributes is not None else {}
    out: dict[str, Any] = {}
    for element, sub in tree.items():
        key = element[2:]
        if not element.startswith("f:") or key not in value:
            continue
        if attributes is not None:
            attribute = attributes.get(key)
            child = getattr(model, attribute, None) if attribute else None
            field_rules = rules.get(attribute or "")
            atomic = (field_rules is not None and field_rules.map_type == "atomic") or (
                isinstance(child, KubeModel) and map_type(type(child)) == "atomic"
            )
        else:
            child = model.get(key) if isinstance(model, dict) else None
            atomic = False
        found = _extract(value[key], sub, atomic, child)
        if found is not _NOTHING:
            out[key] = found
    return out or _NOTHING


def _extract_list(items: list[Any], tree: Mapping[str, Any], model: Any) -> Any:
    """The owned items in the live list's order; a keyed item keeps its key fields."""
    keyed: list[tuple[dict[str, Any], Mapping[str, Any]]] = []
    members: list[Any] = []
    for element, sub in tree.items():
        if element.startswith("k:"):
            keyed.append((orjson.loads(element[2:]), sub))
        elif element.startswith("v:"):
            members.append(orjson.loads(element[2:]))
    models = model if isinstance(model, list) and len(model) == len(items) else None
    out: list[Any] = []
    for index, item in enumerate(items):
        for key, sub in keyed:
            if isinstance(item, dict) and all(k in item and item[k] == v for k, v in key.items()):
                if not {e for e in sub if e != "."}:
                    out.append(copy_json(item))
                else:
                    found = _extract_map(item, sub, models[index] if models else None)
                    out.append({**key, **({} if found is _NOTHING else found)})
                break
        else:
            if any(item == member for member in members):
                out.append(copy_json(item))
    return out or _NOTHING


@lru_cache(maxsize=4096)
def _attributes(model: type[KubeModel]) -> Mapping[str, str]:
    """A model class's Python attributes by wire name."""
    return {
        (info.serialization_alias or info.alias or wire_name(name)): name
        for name, info in model.model_fields.items()
    }
