"""Structural-schema handling of custom resources: defaulting, pruning and validation.

What the API server does with a CRD's ``openAPIV3Schema`` on every write, in its order:
:func:`apply_defaults` fills in ``default`` values of absent properties, :func:`prune` drops
fields the schema does not declare (unless ``x-kubernetes-preserve-unknown-fields``), and
:func:`validate` returns the broken rules as :class:`Cause` s with field paths
(``spec.replicas``) and the apiserver's messages. The keywords checked: ``type``,
``required``, ``enum``, ``minimum``/``maximum`` (and exclusive), ``minLength``/``maxLength``,
``minItems``/``maxItems``, ``minProperties``/``maxProperties``, ``pattern``, ``items``,
``properties``, ``additionalProperties``, ``nullable``, ``x-kubernetes-int-or-string``,
``x-kubernetes-preserve-unknown-fields``, ``x-kubernetes-embedded-resource`` and the
uniqueness of ``x-kubernetes-list-type: set``/``map`` items, and the string ``format`` s
``date-time``, ``date``, ``uuid``, ``ipv4``, ``ipv6``, ``cidr`` and ``byte``. Not checked:
other formats, ``uniqueItems`` and ``anyOf``/``oneOf``/``allOf``/``not``. CEL
``x-kubernetes-validations`` are :mod:`kgen_runtime.cel`'s.

All functions take JSON-shaped data; :func:`apply_defaults` and :func:`prune` modify the
object in place (the server owns the decoded request body), :func:`validate` only reads it.
"""

from __future__ import annotations

import base64
import copy
import ipaddress
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import date, datetime
from functools import lru_cache
from typing import Any

import orjson

from kgen_runtime.testing._status import Cause

__all__ = ["apply_defaults", "prune", "ratchet", "validate"]

Schema = dict[str, Any]

_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def apply_defaults(value: Any, schema: Schema) -> None:
    """Set each absent property that has a ``default`` to a copy of it, depth first.

    A ``null`` the schema does not allow (no ``nullable``) is dropped first, then defaulted
    like an absent value, as apiextensions-apiserver does before validating.
    """
    if isinstance(value, dict):
        properties: dict[str, Schema] = schema.get("properties") or {}
        for name, sub in properties.items():
            if name in value and value[name] is None and not sub.get("nullable", False):
                del value[name]
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
        for name, item in value.items():
            sub_schema = properties.get(name) or _additional(schema)
            if sub_schema is not None:
                apply_defaults(item, sub_schema)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])


def prune(value: Any, schema: Schema, *, root: bool = True, path: str = "") -> list[str]:
    """Remove fields the schema does not declare; ``root`` keeps apiVersion/kind/metadata.

    Returns the paths of the removed fields (``spec.bogus``), for field validation.
    """
    removed: list[str] = []
    if isinstance(value, dict):
        keep_meta = root or schema.get("x-kubernetes-embedded-resource", False)
        preserve = schema.get("x-kubernetes-preserve-unknown-fields", False)
        properties: dict[str, Schema] = schema.get("properties") or {}
        additional = _additional(schema)
        for name in list(value):
            sub = properties.get(name) or additional
            if keep_meta and name in _ROOT_FIELDS:
                continue  # ObjectMeta has its own rules; apiVersion/kind are the server's
            if sub is not None:
                removed += prune(value[name], sub, root=False, path=_join(path, name))
            elif not preserve:
                del value[name]
                removed.append(_join(path, name))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            removed += prune(item, schema["items"], root=False, path=f"{path}[{index}]")
    return removed


def validate(value: Any, schema: Schema, path: str = "") -> list[Cause]:
    """Every rule of ``schema`` that ``value`` breaks, in document order."""
    return list(_validate(value, schema, path))


def ratchet(causes: list[Cause], new: Any, old: Any) -> list[Cause]:
    """The causes an update still fails with: a value equal to its stored value is not
    checked again (CRD validation ratcheting), so objects stored before a schema was
    tightened stay updatable. A ``Required value`` counts when its parent object changed."""
    kept = []
    for cause in causes:
        parts = _path_parts(cause.field)
        if parts is not None and cause.reason == "FieldValueRequired":
            parts = parts[:-1]
        if parts is None or _lookup(new, parts) != _lookup(old, parts):
            kept.append(cause)
    return kept


_MISSING = object()
_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _path_parts(path: str) -> list[str | int] | None:
    if not path or path == "<nil>":
        return None
    parts: list[str | int] = []
    for name, index in _PART.findall(path):
        parts.append(int(index) if index else name)
    return parts


def _lookup(value: Any, parts: list[str | int]) -> Any:
    for part in parts:
        found = (part < len(value) if isinstance(value, list) and isinstance(part, int)
                 else isinstance(value, dict) and isinstance(part, str) and part in value)
        if not found:
            return _MISSING
        value = value[part]
    return value


def _validate(value: Any, schema: Schema, path: str) -> Iterator[Cause]:
    if value is None:
        if not schema.get("nullable", False) and _declared_type(schema):
            yield _type_error(path, value, _declared_type(schema))
        return
    expected = _declared_type(schema)
    if expected and not _has_type(value, expected):
        yield _type_error(path, value, expected)
        return
    if "enum" in schema and not any(_same(value, allowed) for allowed in schema["enum"]):
        supported = ", ".join(_show(v) for v in schema["enum"])
        yield Cause(
            "FieldValueNotSupported",
            f"Unsupported value: {_show(value)}: supported values: {supported}",
            path,
        )
    if _is_number(value):
        yield from _number_rules(value, schema, path)
    elif isinstance(value, str):
        yield from _string_rules(value, schema, path)
    elif isinstance(value, list):
        yield from _array_rules(value, schema, path)
    elif isinstance(value, dict):
        yield from _object_rules(value, schema, path)


def _declared_type(schema: Schema) -> str:
    if schema.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    declared = schema.get("type")
    return declared if isinstance(declared, str) else ""


def _has_type(value: Any, expected: str) -> bool:
    if expected == "integer":
        return _is_integer(value)
    if expected == "number":
        return _is_number(value)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "array":
        return isinstance(value, list)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "int-or-string":
        return isinstance(value, str) or _is_integer(value)
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return _is_number(value) and float(value).is_integer()


def _same(value: Any, allowed: Any) -> bool:
    return bool(value == allowed) and _is_number(value) == _is_number(allowed)


def _type_error(path: str, value: Any, expected: str) -> Cause:
    """kube-openapi validate/type.go: ``errors.InvalidType`` with the data's own type name
    (``"integer"`` for a whole number), which apiextensions also shows as the invalid value."""
    shown = _show(value) if value is None else f'"{_json_type(value)}"'
    if expected == "int-or-string":
        text = f"{path} in body must be of type integer,string: {shown}"
    else:
        text = f"{path} in body must be of type {expected}: {shown}"
    return Cause("FieldValueTypeInvalid", f"Invalid value: {shown}: {text}", path)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _invalid(path: str, value: Any, rule: str) -> Cause:
    return Cause(
        "FieldValueInvalid", f"Invalid value: {_show(value)}: {path} in body {rule}", path
    )


def _number_rules(value: float, schema: Schema, path: str) -> Iterator[Cause]:
    minimum = schema.get("minimum")
    if minimum is not None:
        if schema.get("exclusiveMinimum") and not value > minimum:
            yield _invalid(path, value, f"should be greater than {_show(minimum)}")
        elif not schema.get("exclusiveMinimum") and not value >= minimum:
            yield _invalid(path, value, f"should be greater than or equal to {_show(minimum)}")
    maximum = schema.get("maximum")
    if maximum is not None:
        if schema.get("exclusiveMaximum") and not value < maximum:
            yield _invalid(path, value, f"should be less than {_show(maximum)}")
        elif not schema.get("exclusiveMaximum") and not value <= maximum:
            yield _invalid(path, value, f"should be less than or equal to {_show(maximum)}")


def _string_rules(value: str, schema: Schema, path: str) -> Iterator[Cause]:
    max_length = schema.get("maxLength")
    if max_length is not None and len(value) > max_length:
        yield Cause("FieldValueTooLong", f"Too long: may not be more than {max_length} bytes",
                    path)
    min_length = schema.get("minLength")
    if min_length is not None and len(value) < min_length:
        yield _invalid(path, value, f"should be at least {min_length} chars long")
    pattern = schema.get("pattern")
    if pattern is not None:
        compiled = _compile(pattern)
        if compiled is not None and compiled.search(value) is None:
            yield _invalid(path, value, f"should match '{pattern}'")
    check = _FORMATS.get(schema.get("format", ""))
    if check is not None and not check(value):
        yield _invalid(path, value, f"must be of type {schema['format']}: {_show(value)}")


def _array_rules(value: list[Any], schema: Schema, path: str) -> Iterator[Cause]:
    max_items = schema.get("maxItems")
    if max_items is not None and len(value) > max_items:
        yield Cause("FieldValueTooMany",
                    f"Too many: {len(value)}: must have at most {max_items} items", path)
    min_items = schema.get("minItems")
    if min_items is not None and len(value) < min_items:
        yield _invalid(path, len(value), f"should have at least {min_items} items")
    yield from _list_type_rules(value, schema, path)
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            yield from _validate(item, items, f"{path}[{index}]")


def _list_type_rules(value: list[Any], schema: Schema, path: str) -> Iterator[Cause]:
    """``x-kubernetes-list-type``: ``set`` items and ``map`` keys must be unique."""
    list_type = schema.get("x-kubernetes-list-type")
    if list_type not in ("set", "map"):
        return
    keys: list[str] = schema.get("x-kubernetes-list-map-keys") or []
    seen: list[Any] = []
    for index, item in enumerate(value):
        identity = ({k: item.get(k) for k in keys} if list_type == "map" and
                    isinstance(item, dict) else item)
        if identity in seen:
            yield Cause("FieldValueDuplicate", f"Duplicate value: {_show(identity)}",
                        f"{path}[{index}]")
        else:
            seen.append(identity)


def _object_rules(value: dict[str, Any], schema: Schema, path: str) -> Iterator[Cause]:
    for name in schema.get("required") or ():
        if name not in value:
            yield Cause("FieldValueRequired", "Required value", _join(path, name))
    if schema.get("x-kubernetes-embedded-resource"):
        for name in ("apiVersion", "kind"):
            if not value.get(name):
                yield Cause("FieldValueRequired", "Required value: must not be empty",
                            _join(path, name))
    max_properties = schema.get("maxProperties")
    if max_properties is not None and len(value) > max_properties:
        yield Cause("FieldValueTooMany", f"Too many: {len(value)}: must have at most "
                    f"{max_properties} items", path)
    min_properties = schema.get("minProperties")
    if min_properties is not None and len(value) < min_properties:
        yield _invalid(path, len(value), f"should have at least {min_properties} properties")
    properties: dict[str, Schema] = schema.get("properties") or {}
    additional = _additional(schema)
    for name, item in value.items():
        sub = properties.get(name) or additional
        if sub is not None and not (path == "" and name == "metadata"):
            yield from _validate(item, sub, _join(path, name))


def _additional(schema: Schema) -> Schema | None:
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _show(value: Any) -> str:
    """A value as the apiserver prints it in a message (JSON for scalars and collections)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return orjson.dumps(value).decode()


def _parses(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            parse(value)
        except ValueError:
            return False
        return True

    return check


def _matching(pattern: re.Pattern[str], value: str) -> str:
    if not pattern.fullmatch(value):
        raise ValueError(value)
    return value


def _date_time(value: str) -> object:
    return datetime.fromisoformat(_matching(_DATE_TIME, value).replace("z", "Z"))


def _base64(value: str) -> object:
    return base64.b64decode(value, validate=True)


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")

#: The string formats the apiserver checks (kube-openapi's strfmt); others are not checked.
_FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _parses(_date_time),
    "date": _parses(lambda value: date.fromisoformat(_matching(_DATE, value))),
    "uuid": _parses(uuid.UUID),
    "ipv4": _parses(ipaddress.IPv4Address),
    "ipv6": _parses(ipaddress.IPv6Address),
    "cidr": _parses(lambda v: ipaddress.ip_network(v, strict=False)),
    "byte": _parses(_base64),
}


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None
