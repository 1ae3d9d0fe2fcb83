"""Cached objects kept as their wire document until first touched (issue 22).

An informer caches every object it lists or watches, and most of them are never read: a
sync whose handlers only enqueue keys, a reconcile that reads one object of thousands. So
the objects an informer caches are decoded to their wire document only (``orjson``'s
dicts, what a hand-written dict informer keeps) and wrapped in an instance of a *lazy
subclass* of their model class (:func:`lazy_model`, one subclass per class, made once):

* **Before the first touch** it holds only the document (in its ``__dict__`` slot).
  ``isinstance(obj, Foo)`` holds and ``obj.__class__`` is ``Foo``; ``type(obj)`` is the lazy
  subclass. Keys, indexes and resourceVersions are read from the document without building
  anything (:func:`namespace_and_name`, :func:`resource_version`).
* **The first touch** — any attribute read, method call or special method (equality,
  ``repr``, ``hash``, iteration, copying, pickling, assignment, ``dir``, ...: every special
  method the model class has, enumerated from its MRO when the subclass is made) — builds
  the model exactly as the eager decode does (``KubeModel.model_from_wire``: same values,
  same validation fallback, same ``ValidationError`` titled with the object's kind and
  ``namespace/name`` and located from the document) *into this instance*, and swaps its
  class to the model class: from then on ``type(obj) is Foo`` and it costs nothing more.
* **Class-level use answers as the model class**: ``obj.__class__`` (what the scheme and
  the clients look kinds up by), the class methods of the lazy class (``model_validate``,
  ``model_from_wire``, ...) and calling it (``type(obj)(**fields)``) all go to the model
  class; only ``type(obj)`` itself tells the difference until the first touch.
* **Thread-safe**: one lock serialises the builds; a thread that finds the object built
  meanwhile uses it as is, so every thread sees the same, fully built values.
* **A document that does not build** leaves the object untouched; every touch raises the
  eager decode's error again (the informer cached it; see docs/architecture.md).
"""

from __future__ import annotations

import threading
import types
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel

from kgen_runtime.meta import _wire
from kgen_runtime.meta._memory import no_gc, set_dict, set_extra, set_fields_set, set_private
from kgen_runtime.meta._object import WireFilter

__all__ = [
    "lazy_list_from_wire_json",
    "lazy_model",
    "namespace_and_name",
    "resource_version",
    "touch",
    "untouched_document",
]

M = TypeVar("M", bound=BaseModel)

#: lazy subclass -> its model class; model class -> its lazy subclass.
_real_of: dict[type[Any], type[Any]] = {}
_lazy_of: dict[type[Any], type[Any]] = {}
_making = threading.Lock()
_building = threading.RLock()

_new = object.__new__
_get_attribute = object.__getattribute__
_set_attribute = object.__setattr__
_get_dict = BaseModel.__dict__["__dict__"].__get__
_get_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__get__
_get_extra = BaseModel.__dict__["__pydantic_extra__"].__get__
_get_private = BaseModel.__dict__["__pydantic_private__"].__get__

# Special methods the lazy subclass does not wrap: construction and class-level hooks
# (never called on a cached instance), and the two it defines itself.
_UNWRAPPED = frozenset({
    "__new__", "__init__", "__init_subclass__", "__subclasshook__", "__class_getitem__",
    "__getattribute__", "__getattr__", "__class__", "__hash__",
})
_METHOD_TYPES = (types.FunctionType, types.WrapperDescriptorType, types.MethodDescriptorType)


def lazy_model(cls: type[M], document: dict[str, Any]) -> M:
    """An instance of ``cls`` that is ``document`` until first touched (module docstring).

    ``document`` must be a ``dict`` (the caller builds anything else eagerly, which raises
    as it always did); it becomes part of the model on the first touch, as with
    ``model_from_wire``.
    """
    lazy = _lazy_of.get(cls)
    if lazy is None:
        lazy = _lazy_class(cls)
    obj: M = _new(lazy)
    set_dict(obj, document)
    return obj


def lazy_list_from_wire_json(
    list_cls: type[M],
    item_cls: type[Any],
    json_data: str | bytes | bytearray | memoryview,
    keep: WireFilter | None = None,
) -> M:
    """A list page (``KubeList.model_from_wire_json``, ``keep`` as there) whose items are
    :func:`lazy_model` instances of ``item_cls``; the page itself is built at once.

    A page with an item that is not a JSON object is built eagerly, so that it raises the
    eager decode's error, and so is the page of a list class with model validators of its
    own, which may change its items (``UnstructuredList`` gives them the list's kind).
    """
    with no_gc(len(json_data)):
        document = orjson.loads(json_data)
        items = document.get("items") if type(document) is dict else None
        if type(items) is list and keep is not None:
            items = document["items"] = [
                item for item in items if item.__class__ is not dict or keep(item)]
        if type(items) is not list or list_cls.__pydantic_decorators__.model_validators:
            return _wire.built(list_cls, document)
        lazy = _lazy_of.get(item_cls)
        if lazy is None:
            lazy = _lazy_class(item_cls)
        cached = []
        for item in items:
            if item.__class__ is not dict:
                return _wire.built(list_cls, document)
            obj = _new(lazy)
            set_dict(obj, item)
            cached.append(obj)
        document["items"] = []
        page = _wire.built(list_cls, document)
        _get_dict(page)["items"] = cached
        return page


def untouched_document(obj: Any) -> dict[str, Any] | None:
    """The wire document of a lazy object not touched yet (``None`` for anything else), for
    code that reads or shares parts of it without building the model; it becomes the
    model's on the first touch, so only value-preserving changes are allowed."""
    if type(obj) in _real_of:
        document: dict[str, Any] = _get_dict(obj)
        return document
    return None


def touch(obj: M) -> M:
    """Build a lazy ``obj`` into its model now (a no-op for anything else); returns it.

    Raises:
        pydantic.ValidationError: the document does not build, as ``model_from_wire``
            raises it; ``obj`` stays untouched.
    """
    if type(obj) in _real_of:
        with _building:
            real = _real_of.get(type(obj))
            if real is not None:  # not built by another thread while this one waited
                built = _wire.built(real, _get_dict(obj))
                set_dict(obj, _get_dict(built))
                set_fields_set(obj, _get_fields_set(built))
                set_extra(obj, _get_extra(built))
                set_private(obj, _get_private(built))
                _set_attribute(obj, "__class__", real)
    return obj


def namespace_and_name(obj: Any) -> tuple[str | None, str | None]:
    """``(metadata.namespace, metadata.name)`` of a model, read from the wire document of an
    untouched one (so keying and indexing a cached object builds nothing).

    A document whose metadata does not have those as strings (or absent) is touched, so
    that it raises (or coerces) exactly as the eager decode would.

    Raises:
        AttributeError: ``obj`` has no ``metadata``.
    """
    if type(obj) in _real_of:
        metadata = _get_dict(obj).get("metadata")
        if metadata.__class__ is dict:
            namespace = metadata.get("namespace")
            name = metadata.get("name")
            if ((namespace is None or namespace.__class__ is str)
                    and (name is None or name.__class__ is str)):
                return namespace, name
    meta = obj.metadata
    return meta.namespace, meta.name


def resource_version(obj: Any) -> str | None:
    """``metadata.resourceVersion`` of a model, read from the document of an untouched one
    (touched if the document's value is not a string or absent, as in
    :func:`namespace_and_name`)."""
    if type(obj) in _real_of:
        metadata = _get_dict(obj).get("metadata")
        if metadata.__class__ is dict:
            version = metadata.get("resourceVersion")
            if version is None or version.__class__ is str:
                return version
    version_: str | None = obj.metadata.resource_version
    return version_


def _lazy_class(cls: type[Any]) -> type[Any]:
    """Make (once) the lazy subclass of ``cls``: the same instance layout, so that
    ``touch`` may swap an instance's class; every special method of ``cls`` wrapped."""
    with _making:
        lazy = _lazy_of.get(cls)
        if lazy is not None:
            return lazy
        namespace: dict[str, Any] = {
            "__slots__": (),
            "__module__": cls.__module__,
            "__qualname__": f"Lazy{cls.__qualname__}",
            "__doc__": f"A cached {cls.__name__} held as its wire document until first "
                       "touched (kgen_runtime.meta._lazy).",
            "__getattribute__": _make_getattribute(cls),
            "__hash__": _hash,
        }
        for name in _special_methods(cls):
            namespace[name] = _wrapped(name)
        for name in _class_methods(cls):  # model_validate, model_from_wire, ...: the model's
            namespace[name] = _delegated(cls, name)
        namespace["__new__"] = _constructing(cls)
        # type.__new__ of the model's metaclass, not the metaclass itself: this is no new
        # pydantic model (no schema, no fields of its own), it inherits everything from cls.
        lazy = type.__new__(type(cls), f"Lazy{cls.__name__}", (cls,), namespace)
        _real_of[lazy] = cls
        _lazy_of[cls] = lazy
        return lazy


def _special_methods(cls: type[Any]) -> set[str]:
    """The special instance methods ``cls`` has, from its whole MRO (``object``'s too)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            if (name.startswith("__") and name.endswith("__") and name not in _UNWRAPPED
                    and isinstance(value, _METHOD_TYPES)):
                names.add(name)
    return names


def _class_methods(cls: type[Any]) -> set[str]:
    """The class methods ``cls`` has, from its whole MRO, but the class-creation hooks."""
    return {
        name for klass in cls.__mro__ for name, value in vars(klass).items()
        if isinstance(value, classmethod) and name not in _UNWRAPPED
    }


def _delegated(cls: type[Any], name: str) -> Any:
    def delegated(_lazy: type[Any], /, *args: Any, **kwargs: Any) -> Any:
        return getattr(cls, name)(*args, **kwargs)

    delegated.__name__ = delegated.__qualname__ = name
    return classmethod(delegated)


def _constructing(cls: type[Any]) -> Any:
    def __new__(_lazy: type[Any], /, *args: Any, **kwargs: Any) -> Any:
        return cls(*args, **kwargs)  # not an instance of the lazy class: no second __init__

    return __new__


def _make_getattribute(cls: type[Any]) -> Any:
    def __getattribute__(self: Any, name: str) -> Any:
        if name == "__class__":  # isinstance's fallback and the like: no build
            return cls
        touch(self)
        return _get_attribute(self, name)

    return __getattribute__


def _wrapped(name: str) -> Any:
    def special(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        touch(self)
        return getattr(self, name)(*args, **kwargs)

    special.__name__ = special.__qualname__ = name
    return special


def _hash(self: Any) -> int:
    touch(self)
    return hash(self)  # the model's own: unhashable unless frozen, as pydantic makes it
