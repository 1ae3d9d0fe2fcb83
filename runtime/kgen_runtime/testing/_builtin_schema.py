"""Built-in kinds checked against their OpenAPI structure, as the API server's decoder does.

The table (``builtin_schemas.json.gz``, made by ``kgen.ir_builder.builtin_schemas`` from the
Kubernetes OpenAPI v3 documents) gives each kind's fields and their types. A built-in object
is decoded into Go structs on a real server, so:

* :func:`decode_builtin` drops fields the kind does not have (reported as ``unknown field
  "spec.bogus"`` for ``fieldValidation``) and refuses a value of the wrong JSON type with the
  Go decoder's 400 message (``json: cannot unmarshal string into Go struct field
  DeploymentSpec.spec.replicas of type int32``);
* :func:`schema_causes` reports, after defaulting, missing required properties
  (``Required value``) and strings outside their enum (``Unsupported value``).
"""

from __future__ import annotations

import gzip
import importlib.resources
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import orjson

from kgen_runtime.testing._status import Cause

__all__ = ["decode_builtin", "schema_causes"]

Obj = dict[str, Any]
_GO_SCALARS = {"s": "string", "i32": "int32", "i64": "int64", "n": "float64", "b": "bool"}


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    data = importlib.resources.files("kgen_runtime.testing").joinpath(
        "builtin_schemas.json.gz").read_bytes()
    table: dict[str, Any] = orjson.loads(gzip.decompress(data))
    return table


def _root(group: str, version: str, kind: str) -> Any:
    name = _table()["kinds"].get(f"{group}/{version}/{kind}")
    return None if name is None else {"$": name}


def decode_builtin(group: str, version: str, kind: str, obj: Obj) -> tuple[list[str], str]:
    """Drop unknown fields of ``obj`` in place: returns their paths and the first type error
    (the decoder's message, ``""`` when there is none)."""
    root = _root(group, version, kind)
    if root is None:
        return [], ""
    unknown: list[str] = []
    errors: list[str] = []
    _decode(obj, root, "", "", unknown, errors)
    return unknown, errors[0] if errors else ""


def _decode(value: Any, kind: Any, path: str, struct: str, unknown: list[str],
            errors: list[str]) -> None:
    if value is None or kind in ("o", "q"):
        return
    if isinstance(kind, dict) and "$" in kind:
        definition = _table()["definitions"].get(kind["$"])
        if isinstance(definition, dict) and "p" in definition:
            if not isinstance(value, dict):
                errors.append(_mismatch(value, kind, path, struct))
                return
            for name in list(value):
                sub = definition["p"].get(name)
                child = f"{path}.{name}" if path else name
                if sub is None:
                    del value[name]
                    unknown.append(child)
                else:
                    _decode(value[name], sub, child, kind["$"].rsplit(".", 1)[-1], unknown,
                            errors)
            return
        if definition is not None:
            _decode(value, definition, path, struct, unknown, errors)
        return
    if isinstance(kind, dict) and "a" in kind:
        if not isinstance(value, list):
            errors.append(_mismatch(value, kind, path, struct))
            return
        for index, item in enumerate(value):
            before = len(unknown)
            _decode(item, kind["a"], path, struct, unknown, errors)
            unknown[before:] = [_indexed(p, path, index) for p in unknown[before:]]
        return
    if isinstance(kind, dict) and "m" in kind:
        if not isinstance(value, dict):
            errors.append(_mismatch(value, kind, path, struct))
            return
        for key, item in value.items():
            _decode(item, kind["m"], f"{path}.{key}", struct, unknown, errors)
        return
    if not _scalar_matches(value, kind):
        errors.append(_mismatch(value, kind, path, struct))


def _indexed(child: str, path: str, index: int) -> str:
    return f"{path}[{index}]{child[len(path):]}"


def _scalar_matches(value: Any, kind: Any) -> bool:
    if isinstance(kind, dict) or kind == "s":
        return isinstance(value, str)
    if kind == "b":
        return isinstance(value, bool)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if kind == "n":
        return True
    bits = 31 if kind == "i32" else 63
    return float(value).is_integer() and -(2**bits) <= value < 2**bits


def _mismatch(value: Any, kind: Any, path: str, struct: str) -> str:
    if isinstance(value, bool):
        shown = "bool"
    elif isinstance(value, int | float):
        shown = f"number {value}" if kind in ("i32", "i64") else "number"
    elif isinstance(value, str):
        shown = "string"
    else:
        shown = "array" if isinstance(value, list) else "object"
    return (f"json: cannot unmarshal {shown} into Go struct field {struct}.{path} of type "
            f"{_go_type(kind)}")


def _go_type(kind: Any) -> str:
    if isinstance(kind, str):
        return _GO_SCALARS.get(kind, "interface {}")
    if "$" in kind:
        package, _, name = kind["$"].rpartition(".")
        return f"{package.rsplit('.', 1)[-1]}.{name}"
    if "a" in kind:
        return "[]" + _go_type(kind["a"])
    if "m" in kind:
        return "map[string]" + _go_type(kind["m"])
    return "string"


def schema_causes(group: str, version: str, kind: str, obj: Obj) -> list[Cause]:
    """Missing required properties and strings outside their enums, as 422 causes."""
    root = _root(group, version, kind)
    return [] if root is None else list(_causes(obj, root, ""))


def _causes(value: Any, kind: Any, path: str) -> Iterator[Cause]:
    if value is None or not isinstance(kind, dict):
        return
    if "$" in kind:
        definition = _table()["definitions"].get(kind["$"])
        if not (isinstance(definition, dict) and "p" in definition):
            yield from _causes(value, definition, path)
            return
        if not isinstance(value, dict):
            return
        for name in definition.get("r", ()):
            if name not in value:
                yield Cause("FieldValueRequired", "Required value",
                            f"{path}.{name}" if path else name)
        for name, item in value.items():
            sub = definition["p"].get(name)
            if sub is not None and not (path == "" and name == "metadata"):
                yield from _causes(item, sub, f"{path}.{name}" if path else name)
    elif "a" in kind and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _causes(item, kind["a"], f"{path}[{index}]")
    elif "m" in kind and isinstance(value, dict):
        for key, item in value.items():
            yield from _causes(item, kind["m"], f"{path}[{key}]")
    elif "e" in kind and isinstance(value, str) and value not in kind["e"]:
        supported = ", ".join(orjson.dumps(v).decode() for v in kind["e"])
        yield Cause("FieldValueNotSupported", f"Unsupported value: {orjson.dumps(value).decode()}"
                    f": supported values: {supported}", path)
