"""Built-in kinds checked against their OpenAPI structure, as the API server's decoder does.

Each kind's fields and their types come from the bundled OpenAPI v3 document of its
group/version (:mod:`._openapi`), turned once per document into a compact table (type codes:
``"s"`` string, ``"i32"``/``"i64"`` integer, ``"n"`` number, ``"b"`` boolean, ``"q"``
int-or-string, ``"o"`` free-form JSON, ``{"$": name}`` a component schema, ``{"a": T}`` an
array of T, ``{"m": T}`` a map of T, ``{"e": [values]}`` a string enum; a schema with
properties is ``{"p": {name: T}, "r": [required]}``). A built-in object is decoded into Go
structs on a real server, so:

* :func:`decode_builtin` drops fields the kind does not have (reported as ``unknown field
  "spec.bogus"`` for ``fieldValidation``) and refuses a value of the wrong JSON type with the
  Go decoder's 400 message (``json: cannot unmarshal string into Go struct field
  DeploymentSpec.spec.replicas of type int32``);
* :func:`schema_causes` reports, after defaulting, missing required properties that the Go
  validators enforce (``Required value``; :mod:`._builtin_required` says which) and strings
  outside the enums they enforce (``Unsupported value``, with the validator's values in its
  order; :mod:`._builtin_enums` says which).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kgen_runtime.testing._status import Cause
from kgen_runtime.testing.apiserver.encoding._go_time import MICRO_TIME, TIME, normalise_time
from kgen_runtime.testing.apiserver.openapi._builtin_enums import enforced_enum
from kgen_runtime.testing.apiserver.openapi._builtin_required import enforced_required
from kgen_runtime.testing.apiserver.openapi._openapi import (
    builtin_document,
    builtin_kinds,
    group_version_path,
)

__all__ = ["decode_builtin", "schema_causes"]

Obj = dict[str, Any]
_GO_SCALARS = {"s": "string", "i32": "int32", "i64": "int64", "n": "float64", "b": "bool"}


_REF = "#/components/schemas/"
#: A document's schemas as type codes, by schema name.
Definitions = Mapping[str, Any]


@functools.cache
def _definitions(path: str) -> Definitions:
    """The type codes of every schema of the bundled document at ``path``."""
    document = builtin_document(path) or {}
    schemas = (document.get("components") or {}).get("schemas") or {}
    return {name: _definition(name, schema) for name, schema in schemas.items()}


def _definition(name: str, schema: Mapping[str, Any]) -> Any:
    properties = schema.get("properties")
    if not properties:
        return _type(schema)
    entry: dict[str, Any] = {"p": {key: _enforced(name, key, _type(sub))
                                   for key, sub in properties.items()}}
    if required := enforced_required(name, schema.get("required") or []):
        entry["r"] = required
    return entry


def _enforced(name: str, key: str, kind: Any) -> Any:
    """``kind`` with its enum (of a string or of an array's strings) replaced by the values
    the Go validators accept, or dropped where they do not check it (:mod:`._builtin_enums`)."""
    if not isinstance(kind, dict) or not ("e" in kind or "e" in (kind.get("a") or ())):
        return kind
    values = enforced_enum(name, key)
    item: Any = "s" if values is None else {"e": list(values)}
    return {"a": item} if "a" in kind else item


def _type(schema: Mapping[str, Any]) -> Any:
    if "$ref" in schema:
        return {"$": schema["$ref"].removeprefix(_REF)}
    refs = [s["$ref"] for s in schema.get("allOf") or () if "$ref" in s]
    if len(refs) == 1:
        return {"$": refs[0].removeprefix(_REF)}
    if schema.get("x-kubernetes-int-or-string"):
        return "q"
    kind = schema.get("type")
    if kind == "string":
        return {"e": list(schema["enum"])} if schema.get("enum") else "s"
    if kind == "integer":
        return "i32" if schema.get("format") == "int32" else "i64"
    if kind == "number":
        return "n"
    if kind == "boolean":
        return "b"
    if kind == "array" and isinstance(schema.get("items"), dict):
        return {"a": _type(schema["items"])}
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return {"m": _type(schema["additionalProperties"])}
    return "o"


def _root(group: str, version: str, kind: str) -> tuple[Definitions, Any] | None:
    """The definitions of the kind's document and its root type code; None if not shipped."""
    path = group_version_path(group, version)
    name = builtin_kinds(path).get(kind)
    return None if name is None else (_definitions(path), {"$": name})


def decode_builtin(group: str, version: str, kind: str, obj: Obj) -> tuple[list[str], str]:
    """Drop unknown fields of ``obj`` in place: returns their paths and the first type error
    (the decoder's message, ``""`` when there is none)."""
    found = _root(group, version, kind)
    if found is None:
        return [], ""
    unknown: list[str] = []
    errors: list[str] = []
    _decode(_Walk(found[0], unknown, errors), obj, found[1], "", "", "")
    return unknown, errors[0] if errors else ""


@dataclass(frozen=True, slots=True)
class _Walk:
    """One decoding walk: the document's definitions and what the walk found."""

    definitions: Definitions
    unknown: list[str]
    errors: list[str]


def _decode(walk: _Walk, value: Any, kind: Any, path: str, field: str, struct: str) -> None:
    """``path`` names a field as strict decoding does (map keys and indices included),
    ``field`` as encoding/json's UnmarshalTypeError does (the struct fields only)."""
    unknown, errors = walk.unknown, walk.errors
    if value is None or kind in ("o", "q"):
        return
    if isinstance(kind, dict) and "$" in kind:
        definition = walk.definitions.get(kind["$"])
        if isinstance(definition, dict) and "p" in definition:
            if not isinstance(value, dict):
                errors.append(_mismatch(value, kind, field, struct))
                return
            for name in list(value):
                sub = definition["p"].get(name)
                child = f"{path}.{name}" if path else name
                if sub is None:
                    del value[name]
                    unknown.append(child)
                elif (layout := _TIME_LAYOUTS.get(_ref_name(sub))) and isinstance(
                        value[name], str):
                    written, error = normalise_time(value[name], layout)
                    if written is None:
                        errors.append(error)
                    else:
                        value[name] = written
                else:
                    _decode(walk, value[name], sub, child, f"{field}.{name}" if field else name,
                            kind["$"].rsplit(".", 1)[-1])
            return
        if definition is not None:
            _decode(walk, value, definition, path, field, struct)
        return
    if isinstance(kind, dict) and "a" in kind:
        if not isinstance(value, list):
            errors.append(_mismatch(value, kind, field, struct))
            return
        for index, item in enumerate(value):
            before = len(unknown)
            _decode(walk, item, kind["a"], path, field, struct)
            unknown[before:] = [_indexed(p, path, index) for p in unknown[before:]]
        return
    if isinstance(kind, dict) and "m" in kind:
        if not isinstance(value, dict):
            errors.append(_mismatch(value, kind, field, struct))
            return
        for key, item in value.items():
            _decode(walk, item, kind["m"], f"{path}.{key}", field, struct)
        return
    if not _scalar_matches(value, kind):
        errors.append(_mismatch(value, kind, field, struct))


#: The timestamp types and the layout Go parses and prints each with
#: (:mod:`kgen_runtime.testing.apiserver.encoding._go_time`).
_TIME_LAYOUTS = {"io.k8s.apimachinery.pkg.apis.meta.v1.Time": TIME,
                 "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": MICRO_TIME}


def _ref_name(kind: Any) -> str:
    return str(kind.get("$", "")) if isinstance(kind, dict) else ""


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
    found = _root(group, version, kind)
    return [] if found is None else list(_causes(found[0], obj, found[1], ""))


def _causes(definitions: Definitions, value: Any, kind: Any, path: str) -> Iterator[Cause]:
    if value is None or not isinstance(kind, dict):
        return
    if "$" in kind:
        definition = definitions.get(kind["$"])
        if not (isinstance(definition, dict) and "p" in definition):
            yield from _causes(definitions, value, definition, path)
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
                yield from _causes(definitions, item, sub, f"{path}.{name}" if path else name)
    elif "a" in kind and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _causes(definitions, item, kind["a"], f"{path}[{index}]")
    elif "m" in kind and isinstance(value, dict):
        for key, item in value.items():
            yield from _causes(definitions, item, kind["m"], f"{path}[{key}]")
    elif "e" in kind and isinstance(value, str) and value not in kind["e"]:
        supported = ", ".join(orjson.dumps(v).decode() for v in kind["e"])
        yield Cause("FieldValueNotSupported", f"Unsupported value: {orjson.dumps(value).decode()}"
                    f": supported values: {supported}", path)
