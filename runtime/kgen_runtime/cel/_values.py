"""JSON values as a CRD rule sees them: typed by the schema, property names escaped.

kube-apiserver binds ``self`` to the value at the rule's schema node, converted by that
schema (``apiextensions-apiserver/pkg/apiserver/schema/cel``): ``number`` values are doubles,
strings with ``format: duration``/``date``/``date-time``/``byte`` are durations, timestamps
and bytes, object properties are reached by escaped names (``namespace`` is
``__namespace__``, ``x-y`` is ``x__dash__y``), and at a resource root ``metadata`` shows
only ``name`` and ``generateName``.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

__all__ = ["escape", "needs_conversion", "to_cel"]

Schema = dict[str, Any]

#: CEL's reserved words: a property so named is reached as ``__word__``.
_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
    "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
    "void", "while",
})
_ESCAPABLE = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*")
_ESCAPES = (("__", "__underscores__"), (".", "__dot__"), ("-", "__dash__"), ("/", "__slash__"))
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7,
                   "h": 3.6e9}


@lru_cache(maxsize=4096)
def escape(name: str) -> str | None:
    """The CEL field name of a property, or None when no CEL name can reach it."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.fullmatch(name):
        return None
    for plain, escaped in _ESCAPES:
        name = name.replace(plain, escaped)
    return name


def needs_conversion(schema: Schema, *, resource_root: bool = False) -> bool:
    """False when :func:`to_cel` returns every value of ``schema`` as it is (no numbers,
    formats, escaped names or metadata to hide), so the conversion can be skipped."""
    if resource_root or schema.get("x-kubernetes-embedded-resource"):
        return True
    if schema.get("type") == "number" or (schema.get("type") == "string" and schema.get(
            "format") in ("duration", "date-time", "date", "byte")):
        return True
    properties: dict[str, Schema] = schema.get("properties") or {}
    if any(escape(name) != name for name in properties):
        return True
    children = [*properties.values(), schema.get("additionalProperties"), schema.get("items")]
    return any(needs_conversion(child) for child in children if isinstance(child, dict))


def to_cel(value: Any, schema: Schema | None, *, resource_root: bool = False) -> Any:
    """``value`` typed and shaped by ``schema`` (JSON data is never modified)."""
    if schema is None or value is None:
        return value
    if isinstance(value, dict):
        return _object(value, schema, resource_root)
    if isinstance(value, list):
        items = schema.get("items")
        return [to_cel(item, items) for item in value] if isinstance(items, dict) else value
    kind = schema.get("type")
    if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "string" and isinstance(value, str):
        return _formatted(value, schema.get("format", ""))
    return value


def _object(value: dict[str, Any], schema: Schema, resource_root: bool) -> dict[str, Any]:
    properties: dict[str, Schema] | None = schema.get("properties")
    additional = schema.get("additionalProperties")
    if properties is None and isinstance(additional, dict):
        return {key: to_cel(item, additional) for key, item in value.items()}
    if properties is None and not (resource_root or schema.get("x-kubernetes-embedded-resource")):
        return value
    shaped: dict[str, Any] = {}
    for key, item in value.items():
        if key in ("apiVersion", "kind", "metadata") and (
                resource_root or schema.get("x-kubernetes-embedded-resource")):
            shaped[key] = _root_metadata(item) if key == "metadata" else item
            continue
        sub = (properties or {}).get(key)
        name = escape(key)
        if sub is not None and name is not None:
            shaped[name] = to_cel(item, sub)
    return shaped


def _root_metadata(metadata: Any) -> Any:
    if not isinstance(metadata, dict):
        return metadata
    return {key: metadata[key] for key in ("name", "generateName") if key in metadata}


def _formatted(value: str, fmt: str) -> Any:
    """A string by its format, or unchanged when it does not parse (schema validation
    reports that)."""
    try:
        if fmt == "duration":
            return _duration(value)
        if fmt == "date-time":
            return datetime.fromisoformat(value.replace("z", "Z"))
        if fmt == "date":
            return datetime.fromisoformat(value).replace(tzinfo=UTC)
        if fmt == "byte":
            return base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        return value
    return value


def _duration(text: str) -> timedelta:
    """A Go duration string (``1h30m``, ``-1.5s``, ``0``) as a timedelta."""
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text.lstrip("+"))
    if body == "0":
        return timedelta()
    parts = _DURATION_PART.findall(body)
    if not parts or "".join(number + unit for number, unit in parts) != body:
        raise ValueError(f"invalid duration {text!r}")
    micros = sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)
    return timedelta(microseconds=sign * micros)
