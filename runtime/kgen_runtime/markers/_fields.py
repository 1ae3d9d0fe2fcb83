"""Field markers: schema facts attached to a type with ``typing.Annotated``.

The Python spelling of controller-gen's ``+kubebuilder:validation:…`` comments. Each marker is
plain data that knows the OpenAPI v3 keywords it stands for (:meth:`Marker.keywords`) and
the JSON types it may annotate; ``kgen crd`` writes the keywords into the CRD, and the
constraints :class:`~kgen_runtime.meta.FieldRules` knows are also checked when Python code
constructs a model (see :func:`rules_of`)::

    replicas: Annotated[int, Minimum(1), Maximum(10)] | None = None
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

__all__ = [
    "Default",
    "EmbeddedResource",
    "Enum",
    "Format",
    "IntOrString",
    "ListMapKeys",
    "ListType",
    "MapType",
    "Marker",
    "MaxItems",
    "MaxLength",
    "MaxProperties",
    "Maximum",
    "MinItems",
    "MinLength",
    "MinProperties",
    "Minimum",
    "Nullable",
    "Optional",
    "Pattern",
    "PreserveUnknownFields",
    "Required",
    "XValidation",
]

_NUMBERS = frozenset({"integer", "number"})


class Marker:
    """Base of every marker: the OpenAPI keywords it adds and the JSON types it fits."""

    __slots__ = ()

    #: JSON schema types the marker may annotate; ``None`` means any type.
    applies_to: ClassVar[frozenset[str] | None] = None

    def keywords(self) -> dict[str, Any]:
        """The OpenAPI v3 schema keywords this marker stands for."""
        return {}


@dataclass(frozen=True, slots=True)
class Minimum(Marker):
    """``+kubebuilder:validation:Minimum`` (with ``ExclusiveMinimum`` if ``exclusive``)."""

    applies_to: ClassVar[frozenset[str] | None] = _NUMBERS
    value: float
    exclusive: bool = False

    def keywords(self) -> dict[str, Any]:
        return {"minimum": self.value, **({"exclusiveMinimum": True} if self.exclusive else {})}


@dataclass(frozen=True, slots=True)
class Maximum(Marker):
    """``+kubebuilder:validation:Maximum`` (with ``ExclusiveMaximum`` if ``exclusive``)."""

    applies_to: ClassVar[frozenset[str] | None] = _NUMBERS
    value: float
    exclusive: bool = False

    def keywords(self) -> dict[str, Any]:
        return {"maximum": self.value, **({"exclusiveMaximum": True} if self.exclusive else {})}


@dataclass(frozen=True, slots=True)
class MinLength(Marker):
    """Minimum length of a string."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"string"})
    value: int

    def keywords(self) -> dict[str, Any]:
        return {"minLength": self.value}


@dataclass(frozen=True, slots=True)
class MaxLength(Marker):
    """Maximum length of a string."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"string"})
    value: int

    def keywords(self) -> dict[str, Any]:
        return {"maxLength": self.value}


@dataclass(frozen=True, slots=True)
class Pattern(Marker):
    """A regular expression (ECMA 262) a string must match."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"string"})
    regex: str

    def keywords(self) -> dict[str, Any]:
        return {"pattern": self.regex}


@dataclass(frozen=True, slots=True, init=False)
class Enum(Marker):
    """The allowed values (``Literal[...]`` annotations give them too)."""

    values: tuple[Any, ...]

    def __init__(self, *values: Any) -> None:
        object.__setattr__(self, "values", values)

    def keywords(self) -> dict[str, Any]:
        return {"enum": list(self.values)}


@dataclass(frozen=True, slots=True)
class Format(Marker):
    """An OpenAPI ``format`` (``date-time``, ``int64``, ``uri``…); informative to clients."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"string", "integer", "number"})
    name: str

    def keywords(self) -> dict[str, Any]:
        return {"format": self.name}


@dataclass(frozen=True, slots=True)
class MinItems(Marker):
    """Minimum number of items of a list."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"array"})
    value: int

    def keywords(self) -> dict[str, Any]:
        return {"minItems": self.value}


@dataclass(frozen=True, slots=True)
class MaxItems(Marker):
    """Maximum number of items of a list."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"array"})
    value: int

    def keywords(self) -> dict[str, Any]:
        return {"maxItems": self.value}


@dataclass(frozen=True, slots=True)
class MinProperties(Marker):
    """Minimum number of keys of a mapping or object."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"object"})
    value: int

    def keywords(self) -> dict[str, Any]:
        return {"minProperties": self.value}


@dataclass(frozen=True, slots=True)
class MaxProperties(Marker):
    """Maximum number of keys of a mapping or object."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"object"})
    value: int

    def keywords(self) -> dict[str, Any]:
        return {"maxProperties": self.value}


@dataclass(frozen=True, slots=True)
class ListType(Marker):
    """``+listType``: how server-side apply merges the list."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"array"})
    type: Literal["atomic", "set", "map"]

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-list-type": self.type}


@dataclass(frozen=True, slots=True, init=False)
class ListMapKeys(Marker):
    """``+listMapKey``: the keys identifying an item of a ``ListType("map")`` list."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"array"})
    keys: tuple[str, ...]

    def __init__(self, *keys: str) -> None:
        object.__setattr__(self, "keys", keys)

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-list-map-keys": list(self.keys)}


@dataclass(frozen=True, slots=True)
class MapType(Marker):
    """``+mapType``: whether server-side apply merges the object key by key."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"object"})
    type: Literal["atomic", "granular"]

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-map-type": self.type}


@dataclass(frozen=True, slots=True)
class XValidation(Marker):
    """A CEL validation rule (``x-kubernetes-validations``); markers add up."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: (
        Literal[
            "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"
        ]
        | None
    ) = None
    field_path: str | None = None
    optional_old_self: bool | None = None

    def keywords(self) -> dict[str, Any]:
        rule: dict[str, Any] = {"rule": self.rule}
        for key, value in (
            ("message", self.message),
            ("messageExpression", self.message_expression),
            ("reason", self.reason),
            ("fieldPath", self.field_path),
            ("optionalOldSelf", self.optional_old_self),
        ):
            if value is not None:
                rule[key] = value
        return {"x-kubernetes-validations": [rule]}


@dataclass(frozen=True, slots=True)
class Default(Marker):
    """The value the API server fills in when the field is absent (any JSON value)."""

    value: Any

    def keywords(self) -> dict[str, Any]:
        return {"default": self.value}


@dataclass(frozen=True, slots=True)
class Nullable(Marker):
    """``null`` is a valid value (kept by the server rather than pruned)."""

    def keywords(self) -> dict[str, Any]:
        return {"nullable": True}


@dataclass(frozen=True, slots=True)
class PreserveUnknownFields(Marker):
    """The server keeps fields the schema does not declare (no pruning below here)."""

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-preserve-unknown-fields": True}


@dataclass(frozen=True, slots=True)
class EmbeddedResource(Marker):
    """The object is a whole Kubernetes object (apiVersion, kind, metadata are checked)."""

    applies_to: ClassVar[frozenset[str] | None] = frozenset({"object"})

    def keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-embedded-resource": True}


@dataclass(frozen=True, slots=True)
class IntOrString(Marker):
    """An integer or a string (Kubernetes' IntOrString); ``int | str`` implies it."""

    def keywords(self) -> dict[str, Any]:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": True,
        }


@dataclass(frozen=True, slots=True)
class Required(Marker):
    """The field is required even though it has a Python default (``T | None = None``)."""


@dataclass(frozen=True, slots=True)
class Optional(Marker):
    """The field is optional even though it has no Python default."""
