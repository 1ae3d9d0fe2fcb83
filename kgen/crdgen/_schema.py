"""Python types → the OpenAPI v3 schemas a CRD carries (controller-gen's schema generator).

A :class:`~kgen_runtime.meta.KubeModel` becomes an object schema: one property per field
under its wire name, ``required`` for fields without a default (or marked ``Required()``),
descriptions from docstrings, and the keywords of its markers and of its ``__kgen_rules__``
table and, for generated models, the keywords their ``__kgen_schema__`` table keeps (format,
nullable, x-kubernetes-* extensions) — so a model kgen generated from a CRD gives that CRD's
schema back.

=====================================  =====================================================
Python                                 schema
=====================================  =====================================================
``str`` / ``int`` / ``float`` / ``bool``  ``string`` / ``integer`` / ``number`` / ``boolean``
``Literal["a", "b"]`` (``| str``)       ``string`` with ``enum``
``int | str``                          IntOrString (``anyOf`` + ``x-kubernetes-int-or-string``)
``list[T]``                            ``array`` of T (``list[T | None]``: nullable items)
``dict[str, T]``                       ``object`` with ``additionalProperties`` T
``dict[str, Any]`` / ``Any``           free-form, ``x-kubernetes-preserve-unknown-fields``
``datetime``                           ``string``, format ``date-time``
a ``KubeModel`` subclass               ``object`` with its properties (embedded resource if it
                                       has ``api_version``, ``kind`` and ``metadata``)
``ObjectMeta`` / ``Unstructured``      ``object`` / an embedded resource of any kind
=====================================  =====================================================
"""

from __future__ import annotations

import copy
import datetime
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, get_args, get_origin

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from kgen.crdgen._docs import attribute_docstrings, class_description
from kgen.diagnostics import Diagnostic, Location
from kgen_runtime.markers import (
    IntOrString,
    Marker,
    Optional,
    Required,
    literal_values,
    split_annotation,
)
from kgen_runtime.meta import FieldRules, KubeModel, KubeObject, ObjectMeta, Unstructured, wire_name

__all__ = ["ROOT_PROPERTIES", "SchemaBuilder"]

ROOT_PROPERTIES: Mapping[str, Any] = {
    "apiVersion": {
        "description": "APIVersion defines the versioned schema of this representation of an "
        "object.\nServers should convert recognized schemas to the latest internal value, "
        "and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/"
        "contributors/devel/sig-architecture/api-conventions.md#resources",
        "type": "string",
    },
    "kind": {
        "description": "Kind is a string value representing the REST resource this object "
        "represents.\nServers may infer this from the endpoint the client submits requests "
        "to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/"
        "contributors/devel/sig-architecture/api-conventions.md#types-kinds",
        "type": "string",
    },
    "metadata": {"type": "object"},
}
"""What controller-gen writes for a kind's ``apiVersion``, ``kind`` and ``metadata``."""

_ROOT_FIELDS = ("api_version", "kind", "metadata")
_SCALARS: Mapping[Any, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}
_UNIONS = (typing.Union, types.UnionType)
_SUPPORTED = (
    "str, int, float, bool, Literal[...], int | str, list[T], dict[str, T], Any, datetime "
    "or a KubeModel subclass"
)


class SchemaBuilder:
    """Builds schemas for the classes of one input, collecting diagnostics.

    ``source`` names the input (module or file) in diagnostics, whose JSON-path part is
    ``Class.field``.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Diagnostic] = []
        self._stack: list[type[KubeModel]] = []

    def _fail(self, where: tuple[str | int, ...], message: str) -> None:
        self.problems.append(Diagnostic(Location(self.source, path=where), message))

    def kind_schema(self, cls: type[KubeObject]) -> dict[str, Any]:
        """The ``openAPIV3Schema`` of a kind: its fields beside the standard root ones."""
        return self._model(cls, (cls.__name__,), root=True)

    def _model(
        self, cls: type[KubeModel], where: tuple[str | int, ...], root: bool = False
    ) -> dict[str, Any]:
        if cls in self._stack:
            loop = self._stack[self._stack.index(cls) :]
            cycle = " → ".join(c.__name__ for c in (*loop, cls))
            self._fail(where, f"recursive type {cycle}: a CRD schema cannot refer to itself")
            return {"type": "object"}
        self._stack.append(cls)
        try:
            cls.model_rebuild()
        except Exception as err:  # an annotation naming something that does not exist
            self._fail((cls.__name__,), f"cannot resolve the field types: {err}".split("\n")[0])
            self._stack.pop()
            return {"type": "object"}
        schema: dict[str, Any] = {"type": "object"}
        description = class_description(cls)
        if description:
            schema["description"] = description
        properties: dict[str, Any] = copy.deepcopy(dict(ROOT_PROPERTIES)) if root else {}
        required: list[str] = []
        docs = _field_docs(cls)
        rules = cls.__kgen_rules__
        extras: Mapping[str, Mapping[str, Any]] = getattr(cls, "__kgen_schema__", {})
        for name, info in cls.model_fields.items():
            if root and name in _ROOT_FIELDS:
                continue
            wire, field_schema, is_required = self._field(
                info, name, rules.get(name), docs.get(name, ""), (cls.__name__, name)
            )
            field_schema.update(extras.get(name, {}))
            properties[wire] = field_schema
            if is_required:
                required.append(wire)
        self._stack.pop()
        if properties:
            schema["properties"] = properties
        if required:
            schema["required"] = required
        if not root and _is_embedded(cls):
            schema["x-kubernetes-embedded-resource"] = True
        for marker in cls.__dict__.get("__kgen_markers__", ()):
            self._apply(schema, marker, (cls.__name__,))
        return schema

    def _field(
        self,
        info: FieldInfo,
        name: str,
        rules: FieldRules | None,
        doc: str,
        where: tuple[str | int, ...],
    ) -> tuple[str, dict[str, Any], bool]:
        """A field's wire name, schema and whether it is required."""
        annotation: Any = info.annotation
        if info.metadata:
            annotation = Annotated[(annotation, *info.metadata)]
        markers = split_annotation(annotation).markers
        schema = self.schema(annotation, where)
        if rules is not None:  # its enum keeps the schema's order (equal Literals are cached)
            schema.update(_rule_keywords(rules))
        description = info.description or doc
        if description:
            schema["description"] = description
        default = _python_default(info)
        if default is not None:
            schema.setdefault("default", default)
        if any(isinstance(m, Optional) for m in markers):
            required = False
        else:
            required = (
                any(isinstance(m, Required) for m in markers)
                or (rules is not None and rules.required)
                or info.is_required()
            )
        wire = info.serialization_alias or info.alias or wire_name(name)
        return wire, schema, required

    def schema(self, annotation: Any, where: tuple[str | int, ...]) -> dict[str, Any]:
        """The schema of a value annotated ``annotation`` (``None`` in a union is ignored)."""
        split = split_annotation(annotation)
        if any(isinstance(m, IntOrString) for m in split.markers):
            if split.type not in (int, str) and not _is_int_or_str(split.type):
                self._fail(where, f"IntOrString needs an int or str field, not {_name(split.type)}")
            schema = IntOrString().keywords()
        else:
            schema = self._type(split.type, where)
        for marker in split.markers:
            self._apply(schema, marker, where)
        return schema

    def _apply(self, schema: dict[str, Any], marker: Marker, where: tuple[str | int, ...]) -> None:
        json_type = _json_types(schema)
        if marker.applies_to is not None and json_type and not json_type & marker.applies_to:
            allowed = ", ".join(sorted(marker.applies_to))
            self._fail(
                where,
                f"{type(marker).__name__} applies to {allowed} values, "
                f"not {' or '.join(sorted(json_type))}",
            )
            return
        for key, value in marker.keywords().items():
            if key == "x-kubernetes-validations":
                schema.setdefault(key, []).extend(value)
            elif key != "anyOf" or "anyOf" not in schema:
                schema[key] = value

    def _type(self, type_: Any, where: tuple[str | int, ...]) -> dict[str, Any]:
        if type_ is Any:
            return {"x-kubernetes-preserve-unknown-fields": True}
        if type_ in _SCALARS:
            return {"type": _SCALARS[type_]}
        if type_ is datetime.datetime:
            return {"type": "string", "format": "date-time"}
        if _is_int_or_str(type_):
            return IntOrString().keywords()
        values = literal_values(type_)
        if values is not None:
            return self._enum(type_, values, where)
        origin = get_origin(type_)
        if origin is list:
            (item,) = get_args(type_) or (Any,)
            return {"type": "array", "items": self._item(item, (*where, "items"))}
        if origin is dict:
            key, value = get_args(type_) or (str, Any)
            if key is not str:
                self._fail(where, f"mapping keys must be str, not {_name(key)}")
            if split_annotation(value).type is Any and not split_annotation(value).markers:
                return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            return {"type": "object", "additionalProperties": self._item(value, where)}
        if isinstance(type_, type) and issubclass(type_, KubeModel):
            if issubclass(type_, Unstructured):
                return {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                }
            if type_ is ObjectMeta:
                return {"type": "object"}
            return self._model(type_, where)
        self._fail(where, f"unsupported type {_name(type_)}; use {_SUPPORTED}")
        return {}

    def _item(self, annotation: Any, where: tuple[str | int, ...]) -> dict[str, Any]:
        """An array item's or a map value's schema: ``T | None`` makes it nullable."""
        schema = self.schema(annotation, where)
        if split_annotation(annotation).allows_none:
            schema["nullable"] = True
        return schema

    def _enum(
        self, type_: Any, values: tuple[Any, ...], where: tuple[str | int, ...]
    ) -> dict[str, Any]:
        types_ = {_SCALARS.get(type(v)) for v in values if v is not None}
        if get_origin(type_) in _UNIONS:  # Literal[...] | str: the lenient spelling
            types_ |= {_SCALARS.get(a) for a in get_args(type_) if get_origin(a) is None}
        if len(types_) != 1 or None in types_:
            self._fail(where, f"enum values of mixed or unsupported types: {_name(type_)}")
            return {"enum": list(values)}
        return {"type": types_.pop(), "enum": list(values)}


def _field_docs(cls: type[KubeModel]) -> dict[str, str]:
    """Attribute docstrings of ``cls`` and the model classes it inherits fields from."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if isinstance(base, type) and issubclass(base, KubeModel) and base is not KubeModel:
            docs.update(attribute_docstrings(base))
    return docs


def _is_embedded(cls: type[KubeModel]) -> bool:
    """A model with ``api_version``, ``kind`` and an ``ObjectMeta`` ``metadata``."""
    fields = cls.model_fields
    if not all(name in fields for name in _ROOT_FIELDS):
        return False
    return split_annotation(fields["metadata"].annotation).type is ObjectMeta


def _is_int_or_str(type_: Any) -> bool:
    return get_origin(type_) in _UNIONS and set(get_args(type_)) == {int, str}


def _json_types(schema: Mapping[str, Any]) -> set[str]:
    if schema.get("x-kubernetes-int-or-string"):
        return {"integer", "string"}
    return {schema["type"]} if "type" in schema else set()


def _rule_keywords(rules: FieldRules) -> dict[str, Any]:
    """The OpenAPI keywords of a ``__kgen_rules__`` entry (``required`` is the parent's)."""
    keywords: dict[str, Any] = {}
    if rules.enum is not None:
        keywords["enum"] = list(rules.enum)
    if rules.minimum is not None:
        keywords["minimum"] = rules.minimum
        if rules.exclusive_minimum:
            keywords["exclusiveMinimum"] = True
    if rules.maximum is not None:
        keywords["maximum"] = rules.maximum
        if rules.exclusive_maximum:
            keywords["exclusiveMaximum"] = True
    for key, value in (
        ("minLength", rules.min_length),
        ("maxLength", rules.max_length),
        ("minItems", rules.min_items),
        ("maxItems", rules.max_items),
        ("pattern", rules.pattern),
        ("minProperties", rules.min_properties),
        ("maxProperties", rules.max_properties),
    ):
        if value is not None:
            keywords[key] = value
    return keywords


def _python_default(info: FieldInfo) -> Any:
    """A field's Python default as a schema ``default`` (JSON values only; ``None`` for none)."""
    if info.default_factory is not None:
        try:
            value = info.default_factory()  # type: ignore[call-arg]
        except TypeError:  # a factory taking the validated data
            return None
    elif info.default is PydanticUndefined:
        return None
    else:
        value = info.default
    return value if _is_json(value) and value is not None else None


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _name(type_: Any) -> str:
    if isinstance(type_, type):
        return type_.__name__
    return str(type_).replace("typing.", "")
