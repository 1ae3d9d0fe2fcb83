"""The patch formats the API server accepts, applied to JSON-shaped objects.

* JSON merge patch (RFC 7386, ``application/merge-patch+json``).
* JSON patch (RFC 6902, ``application/json-patch+json``): add, remove, replace, move, copy,
  test, with RFC 6901 pointers.
* The merge step of server-side apply (``application/apply-patch+yaml``): maps merge key by
  key, any other value (lists included) replaces the live one, ``null`` is ignored. Field
  ownership is :mod:`kgen_runtime.testing.apiserver.fieldmanager._apply`'s.

Inputs are never mutated; every function returns a new document.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from kgen_runtime.testing._status import StatusError

__all__ = ["apply_merge", "field_at", "json_patch", "merge_patch"]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def apply_merge(live: Any, applied: Any) -> Any:
    """The test server's server-side apply: maps merge, other values replace, nulls are no-ops."""
    if not isinstance(applied, dict) or not isinstance(live, dict):
        return copy.deepcopy(applied)
    result = dict(live)
    for key, value in applied.items():
        if value is not None:
            result[key] = apply_merge(result.get(key), value)
    return result


def field_at(document: Any, keys: Iterable[str]) -> Any:
    """The value at ``keys`` through nested maps; ``None`` where the path does not exist."""
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


def json_patch(document: Any, operations: Any) -> Any:
    """RFC 6902. A failed operation (a ``test`` mismatch, a missing path) raises 422 Invalid."""
    if not isinstance(operations, list):
        raise StatusError.bad_request("json patch must be a list of operations")
    result = copy.deepcopy(document)
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise StatusError.bad_request(f"invalid json patch operation: {operation!r}")
        try:
            result = _apply_operation(result, operation)
        except (KeyError, IndexError, ValueError, TypeError):
            # handlers/patch.go applyJSPatch: errors.NewGenericServerResponse(422, ...), whose
            # message is the generic one and whose details are empty (the error is dropped)
            raise StatusError(
                422, "Invalid", "the server rejected our request due to an error in our "
                "request", {}) from None
    return result


def _apply_operation(document: Any, operation: dict[str, Any]) -> Any:
    op = operation["op"]
    path = _parse_pointer(operation["path"])
    if op == "add":
        return _add(document, path, copy.deepcopy(operation["value"]))
    if op == "remove":
        _remove(document, path)
        return document
    if op == "replace":
        if not path:
            return copy.deepcopy(operation["value"])
        _get(document, path)  # the target must exist
        _remove(document, path)
        return _add(document, path, copy.deepcopy(operation["value"]))
    if op in ("move", "copy"):
        source = _parse_pointer(operation["from"])
        value = copy.deepcopy(_get(document, source))
        if op == "move":
            _remove(document, source)
        return _add(document, path, value)
    if op == "test":
        if _get(document, path) != operation["value"]:
            raise ValueError(f"testing value {operation['path']} failed")
        return document
    raise ValueError(f"unexpected operation {op!r}")


def _parse_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"invalid JSON pointer {pointer!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def _container(document: Any, path: list[str]) -> Any:
    return _get(document, path[:-1])


def _get(document: Any, path: list[str]) -> Any:
    current = document
    for part in path:
        if isinstance(current, list):
            current = current[_index(part, len(current) - 1)]
        elif isinstance(current, dict):
            if part not in current:
                raise KeyError(f"path /{'/'.join(path)} not found")
            current = current[part]
        else:
            raise TypeError(f"path /{'/'.join(path)} traverses a scalar")
    return current


def _add(document: Any, path: list[str], value: Any) -> Any:
    if not path:
        return value
    parent = _container(document, path)
    key = path[-1]
    if isinstance(parent, list):
        parent.insert(len(parent) if key == "-" else _index(key, len(parent)), value)
    elif isinstance(parent, dict):
        parent[key] = value
    else:
        raise TypeError(f"cannot add to a scalar at /{'/'.join(path)}")
    return document


def _remove(document: Any, path: list[str]) -> None:
    if not path:
        raise ValueError("cannot remove the whole document")
    parent = _container(document, path)
    key = path[-1]
    if isinstance(parent, list):
        del parent[_index(key, len(parent) - 1)]
    elif isinstance(parent, dict):
        if key not in parent:
            raise KeyError(f"path /{'/'.join(path)} not found")
        del parent[key]
    else:
        raise TypeError(f"cannot remove from a scalar at /{'/'.join(path)}")


def _index(part: str, highest: int) -> int:
    if not part.isdigit() or (len(part) > 1 and part.startswith("0")):
        raise ValueError(f"invalid array index {part!r}")
    index = int(part)
    if index > highest:
        raise IndexError(f"array index {index} out of range")
    return index
