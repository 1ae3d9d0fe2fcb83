"""The part of an object a field manager owns, read from its ``metadata.managedFields``
(client-go's ``managedfields.ExtractInto``).

A ``fieldsV1`` tree names owned fields with ``f:<name>`` (a map entry), ``k:{...}`` (the
item of a keyed list, by its key fields), ``v:<json>`` (the item of a set) and ``.`` (the
node itself). A node without children is a leaf: its whole value is owned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from kgen_runtime.meta import copy_json

__all__ = ["applied_fields", "extract_owned"]


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


def extract_owned(wire: Mapping[str, Any], fields_v1: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of the wire object ``wire`` that ``fields_v1`` lists (a new object)."""
    return _extract_map(wire, fields_v1)


def _extract(value: Any, tree: Mapping[str, Any]) -> Any:
    children = {element: sub for element, sub in tree.items() if element != "."}
    if not children:
        return copy_json(value)
    if isinstance(value, dict):
        return _extract_map(value, children)
    if isinstance(value, list):
        return _extract_list(value, children)
    return copy_json(value)


def _extract_map(value: Mapping[str, Any], tree: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for element, sub in tree.items():
        if element.startswith("f:") and element[2:] in value:
            out[element[2:]] = _extract(value[element[2:]], sub)
    return out


def _extract_list(items: list[Any], tree: Mapping[str, Any]) -> list[Any]:
    """The owned items in the live list's order; a keyed item keeps its key fields."""
    keyed: list[tuple[dict[str, Any], Mapping[str, Any]]] = []
    members: list[tuple[Any, Mapping[str, Any]]] = []
    for element, sub in tree.items():
        if element.startswith("k:"):
            keyed.append((orjson.loads(element[2:]), sub))
        elif element.startswith("v:"):
            members.append((orjson.loads(element[2:]), sub))
    out: list[Any] = []
    for item in items:
        for key, sub in keyed:
            if isinstance(item, dict) and all(
                k in item and item[k] == v for k, v in key.items()
            ):
                part = _extract(item, sub)
                out.append({**key, **part} if isinstance(part, dict) else part)
                break
        else:
            if any(item == member for member, _ in members):
                out.append(copy_json(item))
    return out
