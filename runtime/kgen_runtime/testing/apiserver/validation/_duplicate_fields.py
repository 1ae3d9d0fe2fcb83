"""Duplicate fields of a JSON body, which kube-apiserver's decoder (sigs.k8s.io/json
``UnmarshalStrict``, called by apimachinery's json serializer) reports as strict decoding
errors ``duplicate field "data.a"``: a 400 under ``fieldValidation=Strict``, a warning under
``Warn`` (the last value wins, as Go's decoder keeps it)."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["duplicate_fields"]

#: A key token: a string then its colon (also matches inside string values, so a count of
#: these is never below the count of keys).
_KEY = re.compile(rb'"\s*:')


def duplicate_fields(body: bytes | None) -> list[str]:
    """The paths (``data.a``, ``spec.containers[0].name``) of the keys ``body`` repeats
    within one object, in document order; empty for a body that is no JSON object."""
    try:
        value = orjson.loads(body or b"")
    except orjson.JSONDecodeError:
        return []
    if len(_KEY.findall(body or b"")) == _count_keys(value):
        return []  # every key token is a distinct key: nothing repeats (the fast path)
    repeated: dict[int, list[str]] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) < len(items):
            seen: set[str] = set()
            twice = []
            for key, _ in items:
                if key in seen and key not in twice:
                    twice.append(key)
                seen.add(key)
            repeated[id(obj)] = twice
        return obj

    parsed = json.loads(body or b"", object_pairs_hook=pairs)
    found: list[str] = []
    _collect(parsed, "", repeated, found)
    return found


def _count_keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count_keys(item) for item in value.values())
    if isinstance(value, list):
        return sum(_count_keys(item) for item in value)
    return 0


def _collect(value: Any, path: str, repeated: dict[int, list[str]], found: list[str]) -> None:
    if isinstance(value, dict):
        found += [f"{path}.{key}" if path else key for key in repeated.get(id(value), ())]
        for key, item in value.items():
            _collect(item, f"{path}.{key}" if path else key, repeated, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _collect(item, f"{path}[{index}]", repeated, found)
