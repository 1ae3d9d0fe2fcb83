"""Reading markers out of annotations, and the construction-time rules they imply.

:class:`~kgen_runtime.meta.KubeModel` calls :func:`collect_marker_rules` for every subclass,
so that a hand-written model checks its markers' constraints when Python code constructs it,
exactly as a generated model checks its ``__kgen_rules__`` table (decoding stays lenient).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator
import sys
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin

from kgen_runtime.markers._fields import (
    Enum,
    Marker,
    Maximum,
    MaxItems,
    MaxLength,
    MaxProperties,
    Minimum,
    MinItems,
    MinLength,
    MinProperties,
    Pattern,
    Required,
)

if TYPE_CHECKING:  # imported late: importing kgen_runtime.meta runs KubeModel's subclass hook
    from pydantic.fields import FieldInfo

    from kgen_runtime.meta import FieldRules

__all__ = [
    "SplitAnnotation",
    "collect_marker_rules",
    "literal_values",
    "rules_of",
    "split_annotation",
]

_UNIONS = (typing.Union, types.UnionType)


@dataclass(frozen=True, slots=True)
class SplitAnnotation:
    """An annotation taken apart: the type without ``None`` and ``Annotated``, its markers
    (outermost first), and whether ``None`` was one of the union's members."""

    type: Any
    markers: tuple[Marker, ...]
    allows_none: bool


def split_annotation(annotation: Any) -> SplitAnnotation:
    """Strip ``Annotated`` layers and ``| None`` from ``annotation``, collecting markers.

    ``Annotated[int, Minimum(1)] | None`` and ``Annotated[int | None, Minimum(1)]`` both
    give ``int``, ``(Minimum(1),)``, ``allows_none=True``. Metadata that is not a
    :class:`Marker` (pydantic's own) is ignored.
    """
    markers: list[Marker] = []
    allows_none = False
    while True:
        if get_origin(annotation) is Annotated:
            annotation, *metadata = get_args(annotation)
            markers.extend(m for m in metadata if isinstance(m, Marker))
            continue
        if get_origin(annotation) in _UNIONS:
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) < len(get_args(annotation)):
                allows_none = True
                if len(members) == 1:
                    annotation = members[0]
                    continue
                annotation = functools.reduce(operator.or_, members)
        return SplitAnnotation(annotation, tuple(markers), allows_none)


def literal_values(annotation: Any) -> tuple[Any, ...] | None:
    """The values of ``Literal[...]`` or of ``Literal[...] | str`` (the lenient spelling)."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    if get_origin(annotation) in _UNIONS:
        literals = [a for a in get_args(annotation) if get_origin(a) is Literal]
        if len(literals) == 1:
            return get_args(literals[0])
    return None


def rules_of(annotation: Any) -> FieldRules | None:
    """The construction-time rules a field annotation's markers imply (``None``: none)."""
    from kgen_runtime.meta import FieldRules

    split = split_annotation(annotation)
    values: dict[str, Any] = {}
    enum = literal_values(split.type)
    if enum is not None:
        values["enum"] = enum
    for marker in split.markers:
        match marker:
            case Required():
                values["required"] = True
            case Enum(values=allowed):
                values["enum"] = allowed
            case Minimum(value=bound, exclusive=exclusive):
                values.update(minimum=bound, exclusive_minimum=exclusive)
            case Maximum(value=bound, exclusive=exclusive):
                values.update(maximum=bound, exclusive_maximum=exclusive)
            case MinLength(value=count):
                values["min_length"] = count
            case MaxLength(value=count):
                values["max_length"] = count
            case MinItems(value=count):
                values["min_items"] = count
            case MaxItems(value=count):
                values["max_items"] = count
            case MinProperties(value=count):
                values["min_properties"] = count
            case MaxProperties(value=count):
                values["max_properties"] = count
            case Pattern(regex=regex):
                values["pattern"] = regex
    return FieldRules(**values) if values else None


def collect_marker_rules(cls: type[Any]) -> None:
    """Fill ``cls.__kgen_rules__`` from the markers of the fields ``cls`` declares.

    A class that writes its own ``__kgen_rules__`` table (generated code) is left alone.
    Annotations are read as written (strings under ``from __future__ import annotations``)
    and evaluated leniently: a name that is not defined yet (a model declared further down)
    stands for an unknown type, which is all the rules need.
    """
    if "__kgen_rules__" in cls.__dict__:
        return
    fields = cls.__pydantic_fields__
    found = {}
    for name, annotation in inspect.get_annotations(cls).items():
        if name not in fields:
            continue
        if isinstance(annotation, str):
            if "Annotated" not in annotation and "Literal" not in annotation:
                continue
            annotation = _lenient_eval(annotation, cls, fields[name])
        rules = rules_of(annotation)
        if rules is not None:
            found[name] = rules
    if found:
        cls.__kgen_rules__ = {**cls.__kgen_rules__, **found}


class _Undefined:
    """Stands for a name an annotation uses before it is defined."""


class _LenientNames(dict[str, Any]):
    def __init__(self, module_globals: dict[str, Any], cls: type[Any]) -> None:
        super().__init__()
        self._globals = module_globals
        self._cls = cls

    def __missing__(self, key: str) -> Any:
        if key in self._globals:
            return self._globals[key]
        if key == self._cls.__name__:
            return self._cls
        return getattr(builtins, key, _Undefined)


def _lenient_eval(annotation: str, cls: type[Any], field: FieldInfo) -> Any:
    module = sys.modules.get(cls.__module__)
    module_globals = vars(module) if module is not None else {}
    try:
        return eval(annotation, module_globals, _LenientNames(module_globals, cls))
    except Exception:  # names local to a function: what pydantic resolved from its frame
        if field.metadata:
            return Annotated[(field.annotation, *field.metadata)]
        return field.annotation
