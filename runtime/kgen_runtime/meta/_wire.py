"""Building models straight from decoded wire documents, without validation (the fast path).

The API server is the authority on its objects, so decoding its JSON need not re-check the
schema (``KubeModel``'s lenient-decode contract). pydantic's ``model_validate_json`` costs
4-5x ``orjson.loads`` on deeply nested objects (bench/decode.py), half of it its own JSON
parsing, the rest building the ~35 nested models of a Prometheus object or Deployment.
This module instead compiles, once per class, a *plan* from the class's pydantic fields —
wire key → (attribute, accepted JSON types, builder of nested models) — and builds instances
from ``orjson``'s dicts directly, the way the generated ``deepcopy()`` builds copies:
``object.__new__`` and the four slots pydantic uses.

What the result is, exactly:

* **The same model pydantic would build** for every document whose values have the types
  the fields declare: same ``__dict__`` (defaults and default factories for absent fields),
  same dumps, same equality. Unknown keys go to the extras, in document order.
* **Unset vs null kept**: the fields set is exactly the fields present in the document (plus,
  for top-level objects, the fields their dumps always mark, as the first dump would do). It
  is the process-wide read-only :func:`~kgen_runtime.meta._memory.shared_fields_set` of that
  combination, so a cache of thousands of objects holds one set per shape, not one per object.
* **No extras dict** when the document had no unknown keys (``None``,
  which pydantic treats as ``{}`` everywhere; ``model_extra`` makes the dict on first use).
* **Anything else falls back to pydantic.** A value of a type the field does not declare (a
  string for an integer, ``null`` for a required field, a number for a string) aborts the
  fast build and the whole document goes through ``model_validate``, which coerces it the
  way it always did or raises its ``ValidationError``. Classes whose fields the plan does
  not understand (custom validators, alias choices, private attributes) are always
  validated by pydantic.
* **Everything at once.** Every nested model is built with the document's own, so the
  result is an ordinary pydantic model all the way down and every error is raised by the
  decode. (Nested models built on first read were tried and measured: on the path a
  reconcile runs they cost more than they saved, bench/controller_path.py.)
* **Errors name the object.** pydantic's ``ValidationError`` raised by the fallback is
  re-titled with the kind and ``namespace/name`` of the object it is about (the list item,
  for a list), its locations left as they are: the full path from the decoded document.

Element types of scalar containers (``list[str]``, ``dict[str, str]``) are checked too; the
values inside free-form fields (``Any``, ``dict[str, Any]``) are not, as in pydantic.
Plans are compiled once per class, shapes (generated code per key sequence) on first use,
at most 1,024 per class and only for documents of up to 128 keys (beyond, pydantic
validates); both are thread-safe.
"""

from __future__ import annotations

import copy
import functools
import sys
import threading
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError, PydanticUndefined

from kgen_runtime.meta import _memory

__all__ = ["WireMismatch", "builder", "built", "null_as_empty"]

M = TypeVar("M", bound=BaseModel)

_NONE = type(None)
_Builder = Callable[[Any], Any]


class WireMismatch(Exception):
    """A value the fast path does not build itself; the caller validates with pydantic."""


def builder(cls: type[M]) -> Callable[[Any], M]:
    """The fast builder of ``cls`` from a decoded wire value (see the module docstring); it
    raises :class:`WireMismatch` where pydantic must decide."""
    built = _builders.get(cls)
    if built is None:
        with _compiling:  # once per class, so its inline-looked-up shapes are the ones used
            built = _builders.get(cls)
            if built is None:
                built = _builders[cls] = _compile(cls)
    return built


_compiling = threading.RLock()


_builders: dict[type[Any], _Builder] = {}
# The per-shape builders of each compiled class, which generated code looks up inline.
_shapes_of: dict[type[Any], dict[tuple[str, ...], Callable[[dict[str, Any]], Any]]] = {}

# Per class, at most this many distinct key sequences get generated code; documents of
# further shapes, or with more keys than the second limit, are validated by pydantic.
_SHAPES_LIMIT = 1024
_SHAPE_KEYS_LIMIT = 128


def _validated(cls: type[M]) -> Callable[[Any], M]:
    """The builder of a class the plan does not understand: pydantic's validation. Its
    error is a :class:`WireMismatch`, so that the document's own model is validated whole
    and the error located from the document, not from this (maybe nested) model."""
    validate = cls.model_validate

    def build(value: Any) -> M:
        try:
            return validate(value)
        except ValidationError as error:
            raise WireMismatch from error

    return build


def _plannable(cls: type[BaseModel]) -> bool:
    if cls.__private_attributes__:  # pydantic initialises them
        return False
    decorators = cls.__pydantic_decorators__
    if (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
    ):
        return False
    config = cls.model_config
    return (
        config.get("extra") == "allow"
        and bool(config.get("validate_by_alias", True))
        and not config.get("validate_by_name", False)
        and not config.get("strict", False)
    )


class _Field(typing.NamedTuple):
    attr: str
    accepts: frozenset[type] | None  # None: any JSON value
    build: _Builder | None  # turns an accepted, non-null value into the stored one
    null_as_empty: bool = False  # ``null`` is stored as ``[]`` (a list's ``items``)


def _compile(cls: type[M]) -> Callable[[Any], M]:
    if not cls.__pydantic_complete__:
        cls.model_rebuild(raise_errors=True)
    if not _plannable(cls):
        return _validated(cls)
    fields: dict[str, _Field] = {}
    defaults: dict[str, Any] = {}
    factories: dict[str, Callable[[], Any]] = {}
    for attr, info in cls.__pydantic_fields__.items():
        key = info.validation_alias if info.validation_alias is not None else info.alias
        if not isinstance(key, str):
            return _validated(cls)
        try:
            fields[key] = _plan_field(attr, info, cls)
        except _Unplannable:
            return _validated(cls)
        if info.default_factory is not None:
            if info.default_factory_takes_validated_data:
                return _validated(cls)
            defaults[attr] = None  # keeps the field order; replaced per object
            factories[attr] = info.default_factory  # type: ignore[assignment]
        elif info.default is PydanticUndefined:
            return _validated(cls)  # a required field: pydantic reports it missing
        elif info.default is None or type(info.default) in _IMMUTABLE_DEFAULTS:
            defaults[attr] = info.default
        else:  # pydantic copies a mutable default for every instance
            defaults[attr] = None
            factories[attr] = functools.partial(copy.deepcopy, info.default)
    always: frozenset[str] = getattr(cls, "__kgen_always__", frozenset())
    plan = _Plan(cls, fields, defaults, factories, always)
    shapes: dict[tuple[str, ...], Callable[[dict[str, Any]], M]] = {}
    _shapes_of[cls] = shapes

    def build(data: Any) -> M:
        if data.__class__ is not dict:
            raise WireMismatch
        keys = tuple(data)
        build_shape = shapes.get(keys)
        if build_shape is None:
            if len(shapes) >= _SHAPES_LIMIT or len(keys) > _SHAPE_KEYS_LIMIT:
                raise WireMismatch
            build_shape = shapes.setdefault(keys, plan.compile_shape(keys))
        return build_shape(data)

    return build


_IMMUTABLE_DEFAULTS = frozenset({str, int, float, bool, bytes, tuple, frozenset})


class _Plan(typing.NamedTuple):
    """How one class is built: its fields by wire key, defaults and default factories."""

    cls: type[Any]
    fields: dict[str, _Field]
    defaults: dict[str, Any]
    factories: dict[str, Callable[[], Any]]
    always: frozenset[str]  # set by every dump of a top-level object: counted as set

    def compile_shape(self, keys: tuple[str, ...]) -> Callable[[dict[str, Any]], Any]:
        """Generate the builder of documents with exactly these keys, in this order.

        Straight-line code (one unpacking of ``data.values()``, one type check and at most
        one nested build per field, the instance dict built as one display in field
        order) took a third less time than a loop interpreting the plan (Prometheus
        objects, bench/decode.py).
        """
        entries = [self.fields.get(key) for key in keys]
        present = {entry.attr for entry in entries if entry is not None}
        fields_set = _memory.shared_fields_set(present | self.always)
        if type(fields_set) is not _memory.SharedFieldsSet:  # the pool is full: share per shape
            fields_set = _memory.SharedFieldsSet(fields_set)
        names: dict[str, Any] = {
            "cls": self.cls,
            "fields_set": fields_set,
            "Mismatch": WireMismatch,
            "new": object.__new__,
            "set_dict": _memory.set_dict,
            "set_fields_set": _memory.set_fields_set,
            "set_extra": _memory.set_extra,
            "set_private": _memory.set_private,
        }
        values = ", ".join(f"v{index}" for index in range(len(keys)))
        body = [f"{values}, = data.values()"] if keys else []
        extras = []
        stored: dict[str, str] = {}  # attribute -> expression of its value
        for index, (key, entry) in enumerate(zip(keys, entries, strict=True)):
            value = f"v{index}"
            if entry is None:
                extras.append(f"{key!r}: {value}")
                continue
            body.extend(_check_and_build_lines(entry, value, index, names))
            if entry.null_as_empty:
                body.append(f"if {value} is None: {value} = []")
            stored[entry.attr] = value
        body.extend(self._values_lines(stored, names))
        body.append("obj = new(cls)")
        body.append("set_dict(obj, values)")
        body.append("set_fields_set(obj, fields_set)")
        if extras:
            body.append(f"set_extra(obj, {{{', '.join(extras)}}})")
        else:  # "no extras" is None (pydantic reads it as {}; model_extra makes the dict)
            body.append("set_extra(obj, None)")
        body.append("set_private(obj, None)")
        body.append("return obj")
        source = "def build_shape(data):\n" + "".join(f"    {line}\n" for line in body)
        exec(compile(source, f"<kgen wire builder of {self.cls.__qualname__}>", "exec"), names)
        built: Callable[[dict[str, Any]], Any] = names["build_shape"]
        return built

    def _values_lines(self, stored: dict[str, str], names: dict[str, Any]) -> list[str]:
        """Code making the instance dict ``values``, in field order.

        A copy of a prepared dict of the immutable defaults with the other values stored
        into it (``dict.copy`` of a small dict copies its table at once) costs less than a
        dict display of every field unless every field is stored: ~40 % less for a
        ``VolumeMount`` of three of its seven fields, as much for seven of seven; the
        decode of bench/controller_path.py's Deployments ~12 % less.
        """
        items = []
        template: dict[str, Any] = {}
        stores = []
        for attr, default in self.defaults.items():
            factory = self.factories.get(attr)
            if attr not in stored:
                names[f"default_{attr}"] = default if factory is None else factory
                value = f"default_{attr}" + ("" if factory is None else "()")
            else:
                value = stored[attr]
            items.append(f"{attr!r}: {value}")
            template[attr] = default if factory is None else None
            if attr in stored or factory is not None:
                stores.append(f"values[{attr!r}] = {value}")
        if len(stores) == len(items):
            return [f"values = {{{', '.join(items)}}}"]
        names["template"] = template
        return ["values = template.copy()", *stores]


class _Unplannable(Exception):
    pass


_SCALARS: dict[Any, frozenset[type]] = {
    str: frozenset({str}),
    int: frozenset({int}),
    bool: frozenset({bool}),
    float: frozenset({float, int}),
}


def _plan_field(attr: str, info: FieldInfo, cls: type[BaseModel]) -> _Field:
    annotation = info.annotation
    if isinstance(annotation, typing.ForwardRef):  # pydantic resolves these only internally
        namespace = {**vars(sys.modules[cls.__module__]), cls.__name__: cls}
        try:
            annotation = eval(annotation.__forward_arg__, namespace)
        except Exception as error:  # an unresolvable name: pydantic decides
            raise _Unplannable from error
    null_as_empty = False
    for meta in info.metadata:
        if _is_null_as_empty(meta):
            null_as_empty = True
        else:
            raise _Unplannable
    accepts, build = _plan_type(annotation)
    if null_as_empty:
        if accepts is None:
            raise _Unplannable
        accepts |= {_NONE}
    return _Field(attr, accepts, build, null_as_empty)


def null_as_empty(value: Any) -> Any:
    """``"items": null`` (a Go nil slice) decodes as an empty list, as in Go.

    The ``BeforeValidator`` of ``KubeList.items``; the wire build does the same inline.
    """
    return [] if value is None else value


def _is_null_as_empty(meta: Any) -> bool:
    return getattr(meta, "func", None) is null_as_empty


def _plan_type(annotation: Any) -> tuple[frozenset[type] | None, _Builder | None]:
    """(accepted JSON types or None for any, builder or None) of one annotation."""
    if annotation is Any:
        return None, None
    origin = get_origin(annotation)
    if origin is types.UnionType or origin is typing.Union:
        return _plan_union(get_args(annotation))
    if origin is Literal:
        raise _Unplannable  # a closed enum: pydantic decides (generated enums are open)
    if origin is list:
        (item,) = get_args(annotation) or (Any,)
        return frozenset({list}), _list_builder(item)
    if origin is dict:
        key, value = get_args(annotation) or (str, Any)
        if key is not str:
            raise _Unplannable
        return frozenset({dict}), _dict_builder(value)
    if annotation in _SCALARS:
        return _SCALARS[annotation], (_to_float if annotation is float else None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return frozenset({dict}), _BuilderOf(annotation)
    raise _Unplannable


def _plan_union(members: tuple[Any, ...]) -> tuple[frozenset[type] | None, _Builder | None]:
    """``X | None``, ``int | str``, open enums ``Literal[...] | str`` (any of them nullable)."""
    accepts: set[type] = set()
    builders: list[_Builder] = []
    for member in members:
        if member is _NONE:
            accepts.add(_NONE)
            continue
        if get_origin(member) is Literal and all(type(v) is str for v in get_args(member)):
            if str in members:
                continue  # an open enum: any string
            raise _Unplannable
        member_accepts, member_build = _plan_type(member)
        if member_accepts is None:
            return None, None
        if member_accepts & accepts - {_NONE}:
            raise _Unplannable  # two members for one JSON type: pydantic's smart union decides
        accepts |= member_accepts
        if member_build is not None:
            builders.append(member_build)
    if len(builders) > 1:
        raise _Unplannable
    return frozenset(accepts), (builders[0] if builders else None)


def _to_float(value: Any) -> Any:
    return float(value) if type(value) is int else value


def _check_and_build_lines(
    entry: _Field, value: str, index: int, names: dict[str, Any]
) -> list[str]:
    """Code checking ``value``'s JSON type and turning it into the stored value.

    One accepted type (maybe nullable) is checked by identity, cheaper than a set lookup;
    a value to build (nested models, checked elements) is built under that one check, so
    the common case (a value of the type) costs one comparison, null a second.
    """
    accepts = entry.accepts
    if accepts is None:  # any JSON value, kept as it is
        return []
    build = entry.build
    nullable = _NONE in accepts
    if len(accepts - {_NONE}) != 1:
        names[f"accepts{index}"] = accepts
        lines = [f"if {value}.__class__ not in accepts{index}: raise Mismatch"]
        if build is None:
            return lines
        body = _build_lines(build, value, index, names, known_dict=False)
        if not nullable:
            return lines + body
        return [*lines, f"if {value} is not None:", *(f"    {line}" for line in body)]
    (names[f"type{index}"],) = accepts - {_NONE}
    if build is None:
        null = f" and {value} is not None" if nullable else ""
        return [f"if {value}.__class__ is not type{index}{null}: raise Mismatch"]
    body = _build_lines(build, value, index, names, known_dict=accepts - {_NONE} == {dict})
    otherwise = f"elif {value} is not None: raise Mismatch" if nullable else "else: raise Mismatch"
    return [f"if {value}.__class__ is type{index}:", *(f"    {line}" for line in body), otherwise]


def _build_lines(
    build: _Builder, value: str, index: int, names: dict[str, Any], *, known_dict: bool
) -> list[str]:
    """Code turning ``value`` (of an accepted type, not None) into the stored value.

    A nested model (or list of them) looks its shape builder up inline, saving the
    dispatcher's call per model; the dispatcher still handles new shapes and mismatches.
    ``known_dict``: the caller checked that ``value`` is a dict (one accepted JSON type);
    under a union of several (``Model | str``) a value that is not goes to the dispatcher.
    """
    if isinstance(build, _ElementCheck):
        names[f"elements{index}"] = build.accepts
        elements = value if build.elements == "items" else f"{value}.values()"
        return [f"if not elements{index}.issuperset(map(type, {elements})): raise Mismatch"]
    model = build.cls if isinstance(build, _BuilderOf) else getattr(build, "item_model", None)
    dispatch = builder(model) if model is not None else _resolved(build)
    names[f"build{index}"] = dispatch
    shapes = _shapes_of.get(model) if model is not None else None
    if shapes is None:
        return [f"{value} = build{index}({value})"]
    names[f"shapes{index}"] = shapes
    if isinstance(build, _BuilderOf):
        built = f"(shapes{index}.get(tuple({value})) or build{index})({value})"
        if known_dict:
            return [f"{value} = {built}"]
        return [f"{value} = {built} if {value}.__class__ is dict else build{index}({value})"]
    shape = f"(shapes{index}.get(tuple(x)) or build{index})"
    return [f"{value} = [{shape}(x) if x.__class__ is dict else build{index}(x) for x in {value}]"]


class _BuilderOf:
    """The builder of a nested model class, compiled on first use (classes may be cyclic)."""

    __slots__ = ("built", "cls")

    def __init__(self, cls: type[BaseModel]) -> None:
        self.cls = cls
        self.built: _Builder | None = None

    def __call__(self, value: Any) -> Any:
        built = self.built
        if built is None:
            built = self.built = builder(self.cls)
        return built(value)


def built(cls: type[M], document: Any) -> M:
    """``cls`` built from a wire document: the fast build, else pydantic's validation (which
    coerces a value of another type or raises its ``ValidationError``, titled with the
    object it is about: :func:`named_error`)."""
    try:
        return builder(cls)(document)
    except WireMismatch:
        pass
    try:
        return cls.model_validate(document)
    except ValidationError as error:  # titled with the object, located from the document
        raise named_error(error, document) from None


def named_error(error: ValidationError, document: Any) -> ValidationError:
    """``error`` titled with the object it is about, its locations unchanged.

    The title is ``Kind namespace/name`` of the document (``Kind name`` without a
    namespace), so that a log line says which object failed to decode, as
    ``1 validation error for Foo default/x`` followed by the full path from the document
    (``spec.template.spec.containers.0.ports.0.containerPort``). A list whose errors all lie
    in one item names that item too: ``FooList: items[3] Foo default/x``.
    """
    title = _describe(document, error.title)
    details = error.errors(include_url=False)
    items = document.get("items") if type(document) is dict else None
    places = {e["loc"][:2] for e in details}
    if type(items) is list and len(places) == 1:
        (place,) = places
        if len(place) == 2 and place[0] == "items" and type(place[1]) is int:
            index = place[1]
            item = _describe(items[index], "") if index < len(items) else ""
            if item:  # an object with a kind or a name of its own (a list's item)
                title = f"{title}: items[{index}] {item}"
    try:
        return ValidationError.from_exception_data(title, details)  # type: ignore[arg-type]
    except (TypeError, KeyError, ValueError):  # a custom type (a hand-written validator's)
        custom = [
            {"type": PydanticCustomError(e["type"], e["msg"]), "loc": e["loc"], "input": e["input"]}
            for e in details
        ]
        return ValidationError.from_exception_data(title, custom)  # type: ignore[arg-type]


def _describe(document: Any, fallback: str) -> str:
    """``Kind namespace/name`` of a wire document, as far as it says (``fallback`` for the
    kind when it says none)."""
    if type(document) is not dict:
        return fallback
    kind = document.get("kind")
    words = [kind if type(kind) is str and kind else fallback]
    metadata = document.get("metadata")
    name = metadata.get("name") if type(metadata) is dict else None
    if type(name) is str and name:
        namespace = metadata.get("namespace")  # type: ignore[union-attr]
        words.append(f"{namespace}/{name}" if type(namespace) is str and namespace else name)
    return " ".join(word for word in words if word)


def _resolved(build: _Builder) -> _Builder:
    """The compiled builder behind a :class:`_BuilderOf`, else ``build`` itself."""
    return builder(build.cls) if isinstance(build, _BuilderOf) else build


class _ElementCheck:
    """Checks the JSON types of a list's items or a dict's values (``list[str]``, labels);
    the value itself is kept. Generated code inlines it (see :func:`_build_lines`)."""

    __slots__ = ("accepts", "elements")

    def __init__(self, elements: Literal["items", "values"], accepts: frozenset[type]) -> None:
        self.elements = elements
        self.accepts = accepts

    def __call__(self, value: Any) -> Any:
        elements = value if self.elements == "items" else value.values()
        if not self.accepts.issuperset(map(type, elements)):  # all in C
            raise WireMismatch
        return value


def _list_builder(item: Any) -> _Builder | None:
    accepts, build = _plan_type(item)
    if accepts is None:
        return None
    if build is None:
        return _ElementCheck("items", accepts)
    if accepts == {dict}:  # models: the model builder checks the type itself

        def build_models(value: list[Any]) -> list[Any]:
            build_one = _resolved(build)
            return [build_one(element) for element in value]

        if isinstance(build, _BuilderOf):  # inlined, see _build_lines
            build_models.item_model = build.cls  # type: ignore[attr-defined]
        return build_models

    def build_items(value: list[Any]) -> list[Any]:
        build_one = _resolved(build)
        return [_checked(element, accepts, build_one) for element in value]

    return build_items


def _dict_builder(item: Any) -> _Builder | None:
    accepts, build = _plan_type(item)
    if accepts is None:
        return None
    if build is None:
        return _ElementCheck("values", accepts)

    def build_values(value: dict[str, Any]) -> dict[str, Any]:
        build_one = _resolved(build)
        return {key: _checked(element, accepts, build_one) for key, element in value.items()}

    return build_values


def _checked(value: Any, accepts: frozenset[type], build: _Builder) -> Any:
    if value.__class__ not in accepts:
        raise WireMismatch
    return None if value is None else build(value)
