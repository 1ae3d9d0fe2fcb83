"""The generic apply configuration (client-go's ``applyconfigurations`` types, generically).

An apply configuration says which fields a field manager wants to own and their values, for
server-side apply. Unlike a model, every field starts out *unset* (:data:`UNSET`), which is
not the same as ``None``: an unset field is left out of the request, a field set to ``None``
is sent as JSON ``null``. Generated classes only declare their fields::

    class FooSpecApplyConfiguration(ApplyConfiguration):
        deployment_name: str | Unset | None = UNSET
        replicas: int | Unset | None = UNSET

and get keyword construction (``FooSpecApplyConfiguration(replicas=3)``, checked by mypy as
for a dataclass), attribute assignment (assigning :data:`UNSET` unsets), ``model_dump()`` to
the wire format and ``model_validate()`` from it. Method names follow pydantic's ``model_``
prefix, which generated field names never use.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, Self, dataclass_transform

from kgen_runtime.meta import wire_name

__all__ = ["UNSET", "ApplyConfiguration", "Unset"]


class Unset(enum.Enum):
    """The type of :data:`UNSET`."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
"""A field that is not part of the configuration (distinct from ``None``, sent as null)."""

_Converter = Callable[[Any], Any]


@dataclass_transform(kw_only_default=True)
class ApplyConfiguration:
    """Base of every apply configuration: fields declared as ``name: T | Unset | None = UNSET``.

    Wire names are the attributes' :func:`~kgen_runtime.meta.wire_name` unless a class lists
    them in ``__kgen_wire_names__``. Keys a class does not declare (read by
    :meth:`model_validate` from a newer server) are kept and sent back.
    """

    #: Python attribute → wire name, for the fields whose wire name is not the default.
    __kgen_wire_names__: ClassVar[Mapping[str, str]] = {}
    #: Python attribute → wire name of every field (computed per class).
    __kgen_fields__: ClassVar[Mapping[str, str]] = {}
    __kgen_attributes__: ClassVar[Mapping[str, str]] = {}
    __kgen_converters__: ClassVar[Mapping[str, _Converter] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            for name, annotation in vars(klass).get("__annotations__", {}).items():
                if name.startswith("_") or str(annotation).startswith(
                    ("ClassVar[", "typing.ClassVar[")
                ):
                    continue
                if name not in names:
                    names.append(name)
        wire_names = cls.__kgen_wire_names__
        cls.__kgen_fields__ = {name: wire_names.get(name) or wire_name(name) for name in names}
        cls.__kgen_attributes__ = {wire: name for name, wire in cls.__kgen_fields__.items()}
        cls.__kgen_converters__ = None

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        """Set a declared field; assigning :data:`UNSET` takes it out of the configuration."""
        if name not in type(self).__kgen_fields__:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        if value is UNSET:
            self.__dict__.pop(name, None)
        else:
            self.__dict__[name] = value

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, UNSET)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.model_dump() == self.model_dump()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        shown = [f"{name}={value!r}" for name, value in self._set_fields()]
        extra = self.__dict__.get("_kgen_extra")
        if extra:
            shown.append(f"**{extra!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def _set_fields(self) -> list[tuple[str, Any]]:
        values = self.__dict__
        return [(name, values[name]) for name in type(self).__kgen_fields__ if name in values]

    def model_dump(self) -> dict[str, Any]:
        """The configuration in the wire format: exactly the fields set (``None`` as null)."""
        fields = type(self).__kgen_fields__
        wire = {fields[name]: _dump(value) for name, value in self._set_fields()}
        extra = self.__dict__.get("_kgen_extra")
        if extra:
            wire.update((key, value) for key, value in extra.items() if key not in wire)
        return wire

    @classmethod
    def model_validate(cls, data: Mapping[str, Any]) -> Self:
        """Build a configuration from wire-format JSON (nested objects become their apply
        configurations); keys the class does not declare are kept as they are."""
        converters = cls._converters()
        attributes = cls.__kgen_attributes__
        new = cls()
        extra: dict[str, Any] = {}
        for key, value in data.items():
            name = attributes.get(key)
            if name is None:
                extra[key] = value
                continue
            convert = converters.get(name)
            new.__dict__[name] = value if convert is None or value is None else convert(value)
        if extra:
            new.__dict__["_kgen_extra"] = extra
        return new

    @classmethod
    def _converters(cls) -> Mapping[str, _Converter]:
        """Per field holding apply configurations, how to build its value from JSON (read
        from the annotations once per class)."""
        converters = cls.__dict__.get("__kgen_converters__")
        if converters is None:
            hints = typing.get_type_hints(cls)
            found = {name: _converter(hints[name]) for name in cls.__kgen_fields__}
            converters = {name: conv for name, conv in found.items() if conv is not None}
            cls.__kgen_converters__ = converters
        return converters


def _dump(value: Any) -> Any:
    if isinstance(value, ApplyConfiguration):
        return value.model_dump()
    if isinstance(value, list):
        return [_dump(item) for item in value]
    if isinstance(value, dict):
        return {key: _dump(item) for key, item in value.items()}
    return value


def _converter(annotation: Any) -> _Converter | None:
    """How to turn JSON into a value of ``annotation`` (None: keep the JSON as it is)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        found = [c for arg in typing.get_args(annotation) if (c := _converter(arg)) is not None]
        return found[0] if len(found) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, ApplyConfiguration):
        validate = annotation.model_validate
        # JSON of another shape (a newer server's) is kept as it is rather than refused.
        return lambda value: validate(value) if isinstance(value, Mapping) else value
    if origin is list:
        item = _converter(typing.get_args(annotation)[0])
        if item is not None:
            return lambda values: [None if v is None else item(v) for v in values]
    if origin is dict:
        entry = _converter(typing.get_args(annotation)[1])
        if entry is not None:
            return lambda values: {k: None if v is None else entry(v) for k, v in values.items()}
    return None
