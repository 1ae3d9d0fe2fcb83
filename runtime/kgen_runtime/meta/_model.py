"""The base classes every generated and built-in Kubernetes type derives from.

The contract, in one place:

* **Wire format by default.** ``model_validate``/``model_validate_json`` accept the API
  server's JSON (camelCase keys); ``model_dump``/``model_dump_json`` produce it, omitting
  fields that were never set, so a read-modify-write sends back exactly what it read plus
  what the caller changed.
* **No data loss.** Unknown fields are kept (``extra="allow"``) and serialised back.
* **Lenient decode, strict construction.** Decoding never fails on a client-side schema
  constraint (the server is the authority, and newer servers add enum values); constructing
  an object in Python checks the schema's required/enum/bound/length/pattern rules and raises
  a pydantic ``ValidationError`` naming the field.
* **Two ways in from the wire.** ``model_validate``/``model_validate_json`` keep pydantic's
  semantics (validation, lax coercion of ``"3"`` to ``3``). The codec, the REST client and
  informers use :meth:`KubeModel.model_from_wire` instead: models built straight from
  ``orjson``'s dicts without validation (:mod:`kgen_runtime.meta._wire`), equal to what
  validation builds, and handed to pydantic whenever a value's type is not the declared one
  — so what validation would coerce or reject, it still does. Every nested model is built
  by the decode, so a decoded object is an ordinary pydantic model, and a value of the wrong
  type anywhere in it raises there, titled with the object's kind and ``namespace/name``
  and located by its full path from the document.
* **Deep copies in O(top level).** ``deepcopy()`` copies the model's own fields and shares
  its nested values with the source until either side first reads them through their
  attribute, which copies them one level (:mod:`kgen_runtime.meta._cow`).
* **Shareable fields sets.** A model's set of explicitly set fields may be a shared,
  read-only set that many models with the same fields hold (decoded models always get one;
  :mod:`kgen_runtime.meta._memory`). Assigning or deleting an attribute, or reading
  ``model_fields_set``, first gives the model its own copy.
"""

from __future__ import annotations

import copy
import re
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Literal, Self

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails

from kgen_runtime.meta import _checked, _cow, _wire
from kgen_runtime.meta._memory import (
    SharedFieldsSet,
    no_gc,
    set_extra,
    set_fields_set,
)

__all__ = [
    "Field",  # re-exported so generated modules import everything from kgen_runtime.meta
    "FieldRules",
    "KubeModel",
    "copy_json",
    "wire_name",
]


def copy_json(value: Any) -> Any:
    """Deep-copy a JSON-shaped value (dicts, lists, scalars); models copy themselves.

    Containers go through orjson (dump and load in C, about twice as fast as a Python walk
    of free-form JSON); anything orjson cannot represent exactly (a model stored in a dict,
    a non-string key, an integer beyond 64 bits) takes the recursive path instead. A NaN or
    infinity becomes ``None``, as it would on its way to the API server.
    """
    kind = type(value)
    if kind is dict or kind is list:
        if not value:
            return kind()
        try:
            return orjson.loads(orjson.dumps(value))
        except (orjson.JSONEncodeError, TypeError):
            pass
    if kind is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if kind is list:
        return [copy_json(v) for v in value]
    if kind in _IMMUTABLE or value is None:
        return value
    if isinstance(value, KubeModel):
        return value.deepcopy()
    return copy.deepcopy(value)


_IMMUTABLE = frozenset({str, int, float, bool, bytes})


def wire_name(attribute: str) -> str:
    """The default wire (JSON) name of a Python attribute: ``from_`` → ``from``,
    ``deployment_name`` → ``deploymentName``.

    Every model uses it as its alias generator, so generated fields spell out an alias only
    where the wire name differs from this (``podIPs``, ``hugepages-1Gi``); the generator calls
    the same function to decide, so the two cannot disagree.
    """
    first, *rest = attribute.rstrip("_").split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True, slots=True)
class FieldRules:
    """The client-side constraints of one field, checked when Python code constructs a model.

    Mirrors the OpenAPI v3 keywords a CRD schema may carry; ``None`` means "not constrained".
    """

    required: bool = False
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    pattern: str | None = None
    min_properties: int | None = None
    max_properties: int | None = None


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    """Compile a schema pattern; ECMA/RE2 syntax Python cannot read is not checked."""
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _rule_errors(
    rules: FieldRules, value: Any, loc: tuple[str | int, ...]
) -> Iterator[InitErrorDetails]:
    """Yield one pydantic error per rule that ``value`` breaks."""
    if rules.enum is not None and not any(
        value == allowed and type(value) is type(allowed) for allowed in rules.enum
    ):
        expected = ", ".join(repr(v) for v in rules.enum)
        yield _error("literal_error", loc, value, {"expected": expected})
    if isinstance(value, int | float) and not isinstance(value, bool):
        if rules.minimum is not None:
            if rules.exclusive_minimum and not value > rules.minimum:
                yield _error("greater_than", loc, value, {"gt": rules.minimum})
            elif not rules.exclusive_minimum and not value >= rules.minimum:
                yield _error("greater_than_equal", loc, value, {"ge": rules.minimum})
        if rules.maximum is not None:
            if rules.exclusive_maximum and not value < rules.maximum:
                yield _error("less_than", loc, value, {"lt": rules.maximum})
            elif not rules.exclusive_maximum and not value <= rules.maximum:
                yield _error("less_than_equal", loc, value, {"le": rules.maximum})
    if isinstance(value, str):
        if rules.min_length is not None and len(value) < rules.min_length:
            yield _error("string_too_short", loc, value, {"min_length": rules.min_length})
        if rules.max_length is not None and len(value) > rules.max_length:
            yield _error("string_too_long", loc, value, {"max_length": rules.max_length})
        compiled = _compiled(rules.pattern) if rules.pattern is not None else None
        if compiled is not None and compiled.search(value) is None:
            yield _error("string_pattern_mismatch", loc, value, {"pattern": rules.pattern})
    if isinstance(value, list):
        if rules.min_items is not None and len(value) < rules.min_items:
            yield _sized_error("too_short", loc, value, "min_length", rules.min_items)
        if rules.max_items is not None and len(value) > rules.max_items:
            yield _sized_error("too_long", loc, value, "max_length", rules.max_items)
    if isinstance(value, dict):
        if rules.min_properties is not None and len(value) < rules.min_properties:
            yield _sized_error("too_short", loc, value, "min_length", rules.min_properties)
        if rules.max_properties is not None and len(value) > rules.max_properties:
            yield _sized_error("too_long", loc, value, "max_length", rules.max_properties)


def _error(
    kind: str, loc: tuple[str | int, ...], value: Any, ctx: dict[str, Any]
) -> InitErrorDetails:
    return {"type": kind, "loc": loc, "input": value, "ctx": ctx}


def _sized_error(
    kind: str, loc: tuple[str | int, ...], value: Any, bound_name: str, bound: int
) -> InitErrorDetails:
    ctx = {
        "field_type": type(value).__name__.capitalize(),
        bound_name: bound,
        "actual_length": len(value),
    }
    return _error(kind, loc, value, ctx)


class KubeModel(BaseModel):
    """Base of every Kubernetes object and nested type (see the module docstring)."""

    model_config = ConfigDict(
        alias_generator=wire_name,
        extra="allow",
        # Decoding reads wire names only: a wire key that happens to be another field's Python
        # name (a property "foo_bar" beside "fooBar") must not fill that field too.
        # Construction in Python accepts either name, see __init__.
        validate_by_name=False,
        validate_by_alias=True,
        serialize_by_alias=True,
        protected_namespaces=(),
        defer_build=True,
        cache_strings="keys",
        validate_assignment=True,
    )

    # The generation at which this model's subtree was last found to keep its schema rules,
    # or _UNCHECKED / _checked.EXPOSED; unset on models not constructed by __init__.
    __slots__ = ("_kgen_checked",)

    #: Constraints per Python attribute name, filled in by generated subclasses.
    __kgen_rules__: ClassVar[Mapping[str, FieldRules]] = {}

    def __init__(self, /, **data: Any) -> None:
        """Construct from keyword arguments (Python or wire names) and check the schema rules."""
        self.__pydantic_validator__.validate_python(data, self_instance=self, by_name=True)
        object.__setattr__(self, "_kgen_checked", _UNCHECKED)
        errors: list[InitErrorDetails] = []
        _check_model(self, (), errors, _checked.current())
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)

    # Pydantic calls a model's own ``__init__`` while decoding unless it is marked as the base
    # one; decoding must stay lenient (and fast), so only Python construction runs the checks.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Collect the rules of a hand-written model's markers (``kgen_runtime.markers``)."""
        super().__pydantic_init_subclass__(**kwargs)
        _cow.install(cls)
        if "__kgen_rules__" not in cls.__dict__:  # generated classes write their own table
            from kgen_runtime.markers._rules import collect_marker_rules

            collect_marker_rules(cls)

    def __setattr__(self, name: str, value: Any) -> None:
        """Set an attribute (validated); first un-share a shared fields set. The field stops
        being shared with a copy (pydantic replaces ``__dict__``: the mark is carried over)."""
        if type(self.__pydantic_fields_set__) is SharedFieldsSet:
            set_fields_set(self, set(self.__pydantic_fields_set__))
        values = self.__dict__
        _checked.changed()
        super().__setattr__(name, value)
        if type(values) is _cow.CowDict:
            _cow.carry_mark(self, values, name)

    def __delattr__(self, name: str) -> None:
        """Delete an attribute; first un-share a shared fields set."""
        if type(self.__pydantic_fields_set__) is SharedFieldsSet:
            set_fields_set(self, set(self.__pydantic_fields_set__))
        values = self.__dict__
        _checked.changed()
        super().__delattr__(name)
        if type(values) is _cow.CowDict:
            _cow.carry_mark(self, values, name)

    def __iter__(self) -> Any:
        """Yield ``(name, value)`` pairs as pydantic does, values shared with a copy copied
        first (the caller may change them)."""
        _cow.unshare_all(self)
        _checked.expose(self)
        return super().__iter__()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's ``model_copy``, values shared with a deep copy copied first (a shallow
        copy shares them with this model)."""
        _cow.unshare_all(self)
        _checked.expose(self)  # the copy shares this model's containers, or the update's
        copied = super().model_copy(update=update, deep=deep)
        _checked.expose(copied)
        return copied

    @property
    def model_fields_set(self) -> set[str]:
        """The fields set explicitly, the model's own set (changing it changes the model),
        as pydantic's: a shared fields set is copied first."""
        fields_set = self.__pydantic_fields_set__
        if type(fields_set) is SharedFieldsSet:
            fields_set = set(fields_set)
            set_fields_set(self, fields_set)
        _checked.expose(self)  # the required-field checks read it
        return fields_set

    @property
    def model_extra(self) -> dict[str, Any]:
        """The unknown fields, by wire name: ``{}`` when there are none, never ``None``.

        Decoded nested models without unknown fields hold no dict (``None``, which pydantic
        reads as ``{}``; 64 bytes saved per model); this makes theirs on first use, so that
        changing the returned dict changes the model, as pydantic's does.
        """
        extra = self.__pydantic_extra__
        if extra is None:
            extra = {}
            set_extra(self, extra)
        return extra

    def deepcopy(self) -> Self:
        """Return an independent copy: nested values are shared with this model until either
        side reads them through their attribute (:mod:`kgen_runtime.meta._cow`)."""
        return _cow.deepcopy(self)

    def model_dump(
        self,
        *,
        mode: Literal["json", "python"] | str = "json",
        by_alias: bool | None = True,
        exclude_unset: bool = True,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Serialise to the wire format: camelCase keys, unset fields left out."""
        return super().model_dump(
            mode=mode, by_alias=by_alias, exclude_unset=exclude_unset, **kwargs
        )

    def model_dump_json(
        self,
        *,
        by_alias: bool | None = True,
        exclude_unset: bool = True,
        **kwargs: Any,
    ) -> str:
        """Serialise to wire-format JSON text: camelCase keys, unset fields left out."""
        return super().model_dump_json(by_alias=by_alias, exclude_unset=exclude_unset, **kwargs)

    def model_dump_wire_json(self) -> bytes:
        """The wire-format JSON as UTF-8 bytes, what a request body holds: the bytes of
        ``model_dump_json().encode()`` without the round trip through ``str`` (pydantic
        serialises to bytes and ``model_dump_json`` decodes them), ~5 µs less per
        Deployment (bench/controller_path.py)."""
        return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_unset=True)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Self:
        """Validate wire-format JSON with pydantic (the cyclic GC paused for large payloads)."""
        with no_gc(len(json_data)):
            return super().model_validate_json(json_data, **kwargs)

    @classmethod
    def model_from_wire(cls, document: Any) -> Self:
        """Build from a decoded wire document (``orjson.loads``) without validation.

        The lenient decode of the module docstring: equal to ``model_validate(document)``
        for every document whose values have their fields' JSON types; any other document
        goes through ``model_validate``, which coerces it or raises its ``ValidationError``.
        The document's containers become part of the model (pass a copy to keep them).

        Raises:
            pydantic.ValidationError: a value that is not of its field's type, titled with
                the object's kind and ``namespace/name`` (for a list, the item's too),
                located by its full path from ``document``.
        """
        return _wire.built(cls, document)

    @classmethod
    def model_from_wire_json(cls, json_data: str | bytes | bytearray | memoryview) -> Self:
        """Decode wire-format JSON with ``orjson`` and :meth:`model_from_wire` (GC paused
        for large payloads).

        Raises:
            orjson.JSONDecodeError: malformed JSON (a ``ValueError``).
            pydantic.ValidationError: a value that is not of its field's type, as
                :meth:`model_from_wire` raises it.
        """
        with no_gc(len(json_data)):
            return _wire.built(cls, orjson.loads(json_data))


_UNCHECKED = -2  # constructed by __init__, not (yet) found clean


def _check_model(
    model: KubeModel, loc: tuple[str | int, ...], errors: list[InitErrorDetails], generation: int
) -> bool:
    """Append the schema rules ``model`` and the models nested in it break to ``errors``;
    skip a subtree found clean since the last change (:mod:`kgen_runtime.meta._checked`).
    Returns whether the subtree is clean and may stay marked so."""
    mark = getattr(model, "_kgen_checked", _checked.EXPOSED)  # unset: made without __init__
    if mark == generation:
        return True
    found = len(errors)
    values = model.__dict__
    fields_set = model.__pydantic_fields_set__
    cls = type(model)
    for name, rules in cls.__kgen_rules__.items():
        value = values.get(name)
        if value is None:
            if rules.required and name not in fields_set:
                errors.append({"type": "missing", "loc": (*loc, name), "input": None})
            continue
        errors.extend(_rule_errors(rules, value, (*loc, name)))
    clean = mark != _checked.EXPOSED
    retaining = _retaining_fields(cls)
    for name in fields_set:
        value = values.get(name)
        kind = type(value)
        if kind in _IMMUTABLE or value is None:
            continue
        retained = name in retaining and (kind is list or kind is dict)
        if not _check_value(value, (*loc, name), errors, generation) or retained:
            clean = False
    if clean and len(errors) == found:
        object.__setattr__(model, "_kgen_checked", generation)
        return True
    return False


def _check_value(
    value: Any, loc: tuple[str | int, ...], errors: list[InitErrorDetails], generation: int
) -> bool:
    if isinstance(value, KubeModel):
        return _check_model(value, loc, errors, generation)
    items: Iterator[tuple[str | int, Any]]
    if isinstance(value, list):
        items = enumerate(value)
    elif isinstance(value, dict):
        items = iter(value.items())
    else:
        return True
    clean = type(value) is list or type(value) is dict  # pydantic keeps a subclass as passed
    for key, item in items:
        if isinstance(item, KubeModel | list | dict):
            clean = _check_value(item, (*loc, key), errors, generation) and clean
    return clean


_RETAINING: dict[type, frozenset[str]] = {}


def _retaining_fields(cls: type[KubeModel]) -> frozenset[str]:
    """The fields of ``cls`` whose containers pydantic may keep as the caller passed them
    (``Any`` somewhere in the annotation): the caller may change them without a hook."""
    names = _RETAINING.get(cls)
    if names is None:
        names = frozenset(
            name for name, info in cls.__pydantic_fields__.items() if _may_retain(info.annotation)
        )
        _RETAINING[cls] = names
    return names


def _may_retain(annotation: Any) -> bool:
    if annotation is Any or annotation is object or annotation is list or annotation is dict:
        return True
    if isinstance(annotation, type):
        return False
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _may_retain(args[0])
    if origin is typing.Literal:
        return False
    if not args:  # a forward reference, a bare alias: not known to be safe
        return True
    return any(_may_retain(arg) for arg in args)
