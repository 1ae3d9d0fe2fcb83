"""YAML read as the API server reads it: go-yaml v2's scalars, then JSON's object keys.

kubectl and the API server turn YAML into JSON with sigs.k8s.io/yaml, which decodes with
go-yaml v2 and then makes the result JSON-able. Its plain scalars are YAML 1.1-ish but not
PyYAML's YAML 1.1, so the same manifest would otherwise mean different things here:

* ``y``/``Y``/``n``/``N`` are booleans, like ``yes``/``no``/``on``/``off``/``true``/``false``;
* ``=`` is the string ``"="`` (PyYAML's ``!!value`` has no constructor and fails);
* ``1:20`` is a string (no base-60 numbers); ``1e3`` and ``1.5e3`` are numbers; ``0o17`` is
  15 and ``09`` is 9.0, as Go's ``strconv`` reads them; underscores in numbers are ignored;
* timestamps stay strings (go-yaml v2 keeps them as text when decoding untyped values);
* integer and boolean mapping keys become their JSON text (``on:`` is the key ``"true"``).
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode

__all__ = ["Loader", "resolve_plain"]

# libyaml's parser is ~10x faster on multi-megabyte CRDs; pure Python is the fallback.
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG = "tag:yaml.org,2002:"
_STR, _BOOL, _NULL, _INT, _FLOAT, _MERGE = (
    f"{_TAG}{name}" for name in ("str", "bool", "null", "int", "float", "merge")
)
_WORDS: dict[str, tuple[str, Any]] = {
    **{w: (_BOOL, True) for w in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE")},
    **{w: (_BOOL, True) for w in ("on", "On", "ON")},
    **{w: (_BOOL, False) for w in ("n", "N", "no", "No", "NO", "false", "False", "FALSE")},
    **{w: (_BOOL, False) for w in ("off", "Off", "OFF")},
    **{w: (_NULL, None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: (_FLOAT, math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: (_FLOAT, math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: (_FLOAT, -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
    "<<": (_MERGE, "<<"),
}
_NUMBER_STARTS = frozenset("+-0123456789")
# First characters go-yaml v2 looks up in its table of words (others are always strings).
_HINTED = frozenset("yYnNtTfFoO~.") | _NUMBER_STARTS
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
_DIGITS = {2: frozenset("01"), 8: frozenset("01234567"), 10: frozenset("0123456789")}
_DIGITS[16] = frozenset("0123456789abcdefABCDEF")
_PREFIXES = {"b": 2, "o": 8, "x": 16}


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, else ``ParseUint``: Go's base-0 integer syntax."""
    sign, digits = ("", text) if text[:1] not in ("+", "-") else (text[0], text[1:])
    if not digits:
        return None
    base = 10
    if digits[0] == "0":
        prefix = digits[1:2].lower()
        if len(digits) >= 3 and prefix in _PREFIXES:
            base, digits = _PREFIXES[prefix], digits[2:]
        else:
            base, digits = 8, digits[1:] or "0"
    if not digits or not set(digits) <= _DIGITS[base]:
        return None
    value = int(digits, base) * (-1 if sign == "-" else 1)
    if -(2**63) <= value < 2**63 or (not sign and value < 2**64):
        return value
    return None


def _finite(text: str) -> float | None:
    value = float(text)
    return None if math.isinf(value) else value  # Go: out of range is an error ⇒ a string


def resolve_plain(text: str) -> tuple[str, Any]:
    """The tag and value go-yaml v2 gives a plain (unquoted, untagged) scalar."""
    first = text[:1]
    if first == "" or first in _HINTED or text == "<<":
        word = _WORDS.get(text)
        if word is not None:
            return word
    if first == "." and _DOT_FLOAT.fullmatch(text) and (number := _finite(text)) is not None:
        return _FLOAT, number
    if first in _NUMBER_STARTS:
        plain = text.replace("_", "")
        if (integer := _go_int(plain)) is not None:
            return _INT, integer
        if _YAML_STYLE_FLOAT.fullmatch(plain) and (number := _finite(plain)) is not None:
            return _FLOAT, number
    return _STR, text


class Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe YAML loading with go-yaml v2's scalars and sigs.k8s.io/yaml's JSON keys."""

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode and implicit[0]:
            return resolve_plain(value)[0]
        return str(super().resolve(kind, value, implicit))

    def _scalar(self, node: Node) -> Any:
        text = self.construct_scalar(node)
        tag, value = resolve_plain(text)
        if tag != node.tag and not (node.tag == _FLOAT and tag == _INT):
            raise ConstructorError(
                None, None, f"cannot decode {text!r} as {node.tag}", node.start_mark
            )
        return float(value) if node.tag == _FLOAT else value

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[str, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        if all(isinstance(key, str) for key in mapping):
            return dict(mapping)
        keys = {id(self.constructed_objects.get(k)): k for k, _ in node.value}
        converted: dict[str, Any] = {}
        for key, value in mapping.items():
            if isinstance(key, bool):
                converted["true" if key else "false"] = value
            elif isinstance(key, int | str):
                converted[str(key)] = value
            else:
                key_node = keys.get(id(key))
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"unsupported mapping key {key!r}: JSON keys are strings",
                    key_node.start_mark if key_node is not None else node.start_mark,
                )
        return converted


for _tag in (_BOOL, _INT, _FLOAT):
    Loader.add_constructor(_tag, Loader._scalar)
# Timestamps stay the text they were written as (go-yaml v2 decoding into interface{}).
Loader.add_constructor(f"{_TAG}timestamp", Loader.construct_scalar)
