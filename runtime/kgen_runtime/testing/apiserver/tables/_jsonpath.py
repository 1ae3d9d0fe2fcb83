"""The subset of Kubernetes JSONPath that CRD printer columns and selectable fields use.

Supported, after an optional leading ``$``: ``.name`` (``\\.`` escapes a dot inside a name),
``['name']``, ``[n]`` (negative counts from the end), ``[a:b]`` slices, ``[*]``, ``..``-free
filters ``[?(@.path==value)]`` and ``!=`` with a quoted string, a number, ``true`` or
``false``. :func:`find` returns every match, in document order; a missing key matches
nothing (``AllowMissingKeys``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["JSONPathError", "find"]

_FILTER = re.compile(r"\?\(@((?:\.[^=!]+)*)\s*(==|!=)\s*(.+)\)")
_SLICE = re.compile(r"(-?\d*):(-?\d*)")


class JSONPathError(ValueError):
    """A path outside the supported subset."""


def find(document: Any, path: str) -> list[Any]:
    """Every value ``path`` selects in ``document``."""
    values = [document]
    for step in _steps(path.strip().removeprefix("{").removesuffix("}").removeprefix("$")):
        values = [found for value in values for found in _apply(value, step)]
    return values


def _steps(path: str) -> Iterator[str]:
    """Split into ``.name`` steps (as ``name``) and bracket steps (as ``[...]``)."""
    i = 0
    while i < len(path):
        if path[i] == ".":
            j = i + 1
            name = ""
            while j < len(path) and path[j] not in ".[":
                if path[j] == "\\" and j + 1 < len(path):
                    j += 1
                name += path[j]
                j += 1
            if not name:
                raise JSONPathError(f"unsupported JSONPath {path!r}")
            yield name
            i = j
        elif path[i] == "[":
            j = _closing_bracket(path, i)
            yield path[i:j + 1]
            i = j + 1
        else:
            raise JSONPathError(f"unsupported JSONPath {path!r}")


def _closing_bracket(path: str, start: int) -> int:
    quote = ""
    for j in range(start + 1, len(path)):
        char = path[j]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "]":
            return j
    raise JSONPathError(f"unterminated [ in JSONPath {path!r}")


def _apply(value: Any, step: str) -> list[Any]:
    if not step.startswith("["):
        return [value[step]] if isinstance(value, dict) and step in value else []
    inner = step[1:-1].strip()
    if inner[:1] in "'\"":
        key = inner[1:-1]
        return [value[key]] if isinstance(value, dict) and key in value else []
    if inner == "*":
        return list(value.values()) if isinstance(value, dict) else list(value) if isinstance(
            value, list) else []
    if not isinstance(value, list):
        return []
    if (match := _FILTER.fullmatch(inner)) is not None:
        return [item for item in value if _test(item, *match.groups())]
    if (match := _SLICE.fullmatch(inner)) is not None:
        start, stop = (int(part) if part else None for part in match.groups())
        return value[start:stop]
    try:
        index = int(inner)
    except ValueError:
        raise JSONPathError(f"unsupported JSONPath step {step!r}") from None
    return [value[index]] if -len(value) <= index < len(value) else []


def _test(item: Any, path: str, operator: str, literal: str) -> bool:
    found = find(item, path) if path else [item]
    expected = _literal(literal.strip())
    equal = bool(found) and found[0] == expected
    return equal if operator == "==" else bool(found) and not equal


def _literal(text: str) -> Any:
    if text[:1] in "'\"" and text[-1:] == text[:1]:
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise JSONPathError(f"unsupported JSONPath literal {text!r}") from None
