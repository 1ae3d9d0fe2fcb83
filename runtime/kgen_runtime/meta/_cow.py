"""Copy-on-access deep copies of models (private): ``KubeModel.deepcopy()`` in O(top level).

A reconcile copies the cached object, reads and changes a few fields and writes it back;
copying all of a 4.5 KB Deployment (~40 nested models) up front cost more than decoding it.
Instead :func:`deepcopy` copies only the model's own ``__dict__`` and marks the fields that
hold containers or models as *shared* — in the copy **and in the source**, since after the
copy the two hold the same nested values. A shared field is copied (one level: a model's
own fields, again shared; a list's or dict's items) the first time it is read through its
attribute on either side, and that side keeps the copy. So:

* reading a copy, dumping it, comparing it never copies anything below what was read;
* a change made through attributes on one side (``copy.spec.template.spec.containers[0]
  .image = ...``) lands in values that side copied on the way down: never in the other;
* pydantic's own readers (``model_dump``, ``==``, ``repr``, pickling) read ``__dict__`` and
  see the shared values, which are equal on both sides.

The mark lives in the model's ``__dict__``: a :class:`CowDict` (a ``dict`` with the set of
shared names), so models never copied keep plain dicts and pay one type check per read of a
container field (:class:`SharedField`, the data descriptor installed on those fields).

Reading a source after a copy stores the one-level copies into the source: readers of a
shared cache object on several threads may each store one, all equal to what was there,
so what any of them reads is unchanged (a cache's objects are never changed in place).

The limit: a nested value taken out of the source *before* the copy (``spec = obj.spec;
c = obj.deepcopy(); spec.replicas = 3``) is the object the copy still shares until it
reads that field; and values reached through ``__dict__`` itself bypass the mark.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, TypeVar

from kgen_runtime.meta._checked import EXPOSED, GENERATION
from kgen_runtime.meta._memory import set_dict, set_extra, set_fields_set, set_private

__all__ = ["CowDict", "SharedField", "container_fields", "deepcopy", "unshare_all"]

_IMMUTABLE = frozenset({str, int, float, bool, bytes, type(None)})

M = TypeVar("M")


class CowDict(dict[str, Any]):
    """A model's ``__dict__`` whose ``shared`` fields hold values another model holds too."""

    __slots__ = ("shared",)

    shared: frozenset[str]

    def __copy__(self) -> CowDict:
        new = CowDict(self)
        new.shared = self.shared
        return new

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy

        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)


def _marked(values: dict[str, Any], shared: frozenset[str]) -> CowDict:
    new = CowDict(values)
    new.shared = shared
    return new


class SharedField:
    """Data descriptor of a field that may hold a container: copies a shared value on its
    first read (see the module docstring); otherwise the instance's value as is."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:  # no class attribute, as pydantic leaves none for a field: its
            # field collection would take one for a default (subclasses, generic parameters)
            raise AttributeError(self.name)
        d = obj.__dict__
        name = self.name
        if type(d) is CowDict and name in d.shared:
            value = _unshare(d, name)
        else:
            try:
                value = d[name]
            except KeyError:
                raise AttributeError(
                    f"{type(obj).__name__!r} object has no attribute {name!r}"
                ) from None
        kind = type(value)
        if kind is list or kind is dict:  # the caller may change it in place: see _checked
            object.__setattr__(obj, "_kgen_checked", EXPOSED)
            GENERATION[0] += 1
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        d = obj.__dict__
        d[self.name] = value
        if type(d) is CowDict:
            d.shared = d.shared - {self.name}

    def __delete__(self, obj: Any) -> None:
        d = obj.__dict__
        del d[self.name]
        if type(d) is CowDict:
            d.shared = d.shared - {self.name}


def _unshare(d: CowDict, name: str) -> Any:
    value = copy_value(d[name])
    d[name] = value
    d.shared = d.shared - {name}
    return value


def copy_value(value: Any) -> Any:
    """A copy of a field's value that shares nothing mutable with it (models lazily)."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if kind is list:
        return [v if type(v) in _IMMUTABLE else copy_value(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _IMMUTABLE else copy_value(v) for k, v in value.items()}
    deep = getattr(value, "deepcopy", None)
    if deep is not None and hasattr(value, "__pydantic_fields_set__"):
        return deep()
    from kgen_runtime.meta._model import copy_json

    return copy_json(value)


def deepcopy(source: M) -> M:
    """A copy of the model ``source`` that shares its nested values until first read."""
    cls = type(source)
    shared: frozenset[str] = cls.__kgen_containers__  # type: ignore[attr-defined]
    values = source.__dict__
    new = object.__new__(cls)
    if shared:
        set_dict(new, _marked(values, shared))
        if type(values) is CowDict:
            values.shared = shared
        else:
            set_dict(source, _marked(values, shared))
    else:
        set_dict(new, values.copy())
    fields_set = source.__pydantic_fields_set__  # type: ignore[attr-defined]
    # A shared fields set is read-only, so the copy may keep sharing it.
    set_fields_set(new, fields_set if type(fields_set) is not set else fields_set.copy())
    extra = source.__pydantic_extra__  # type: ignore[attr-defined]
    if extra:
        extra = {k: v if type(v) in _IMMUTABLE else copy_value(v) for k, v in extra.items()}
    elif extra is not None:
        extra = {}
    set_extra(new, extra)
    private = source.__pydantic_private__  # type: ignore[attr-defined]
    if private:
        import copy

        private = copy.deepcopy(private)
    set_private(new, private)
    return new  # never marked by the rule checks (kgen_runtime.meta._checked): no __init__


def unshare_all(model: Any) -> None:
    """Copy every still-shared field of ``model`` (before handing out its raw values)."""
    d = model.__dict__
    if type(d) is CowDict:
        for name in d.shared:
            if name in d:
                d[name] = copy_value(d[name])
        set_dict(model, dict(d))


def container_fields(cls: type) -> frozenset[str]:
    """The fields of a model class whose values may be containers or models."""
    fields = getattr(cls, "__pydantic_fields__", {})
    return frozenset(
        name for name, info in fields.items() if not _immutable_annotation(info.annotation)
    )


def _immutable_annotation(annotation: Any) -> bool:
    if annotation in _IMMUTABLE:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _immutable_annotation(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return all(_immutable_annotation(a) for a in typing.get_args(annotation))
    if origin is typing.Literal:
        return True
    return isinstance(annotation, type) and issubclass(annotation, enum.Enum)


def install(cls: type) -> None:
    """Give ``cls`` its :class:`SharedField` descriptors and ``__kgen_containers__``."""
    names = container_fields(cls)
    cls.__kgen_containers__ = names  # type: ignore[attr-defined]
    for name in names:
        if not isinstance(cls.__dict__.get(name), SharedField):
            setattr(cls, name, SharedField(name))


def carry_mark(model: Any, before: CowDict, name: str) -> None:
    """After ``name`` was assigned or deleted: keep the other fields' mark on ``__dict__``
    (pydantic's assignment replaces it with a plain copy); ``name`` is no longer shared."""
    values = model.__dict__
    shared = before.shared - {name}
    if values is before:
        before.shared = shared
    elif shared:
        set_dict(model, _marked(values, shared))
