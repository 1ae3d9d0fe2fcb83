"""Nested models built on first use: *shells* over the decoded wire document (private).

Building a model costs ~1-2 µs; a decoded Prometheus object or Deployment holds ~35-40 of
them, most of which no controller ever reads. So the wire decode (:mod:`._wire`) builds
the document's own model and leaves every nested model a *shell*: an instance of a private
subclass of the model's class (same name, same layout, no fields of its own) that holds
only the decoded dict, in the ``__pydantic_private__`` slot. The first touch of a shell
*materialises* it in place — builds the model from the dict (whose own nested models become
shells in turn), installs pydantic's four slots and switches the instance's class to the
real one — after which it is an ordinary model and costs nothing extra.

What counts as a touch is reading the instance's state: a field or extra (``__getattr__``:
a shell's own dict is empty), or any of ``__dict__`` and pydantic's three slots, which a
shell's class turns into materialising properties. Everything pydantic does goes through
these — its serialiser (which reads a nested model's ``__dict__`` and fields set as
attributes, whatever the parent model is), ``model_dump``, ``==``, ``repr``, ``copy``,
``pickle``, assignment — so it sees a complete model; special methods Python looks up on
the type (``==``, ``repr``, ``copy.copy``, attribute assignment and deletion, iteration,
pickling) materialise first as well. Looking up a method or a class attribute does not,
nor does ``isinstance`` (pydantic's validator then keeps the shell as it is, as it keeps
any instance of the class): only ``type(shell)`` (and ``__class__``) tells a shell apart.

Two things are cheaper on a shell than on a model:

* ``deepcopy()`` (and ``copy.deepcopy``) make a new shell that shares the document, copy on
  write: each shell sharing a document copies it when it materialises (one C-level JSON
  round trip, :func:`~kgen_runtime.meta.copy_json`, however deep it is) and builds from its
  copy, so no two models ever share a container, and parts never read are never copied;
* ``==`` between two shells of one class whose dicts are equal is true without building.

**Errors.** Decoding checks the JSON type of a nested model's value (an object or null) at
the parent; what is inside is checked when the shell materialises. A value of the wrong type
there is handed to pydantic as the wire decode does everywhere: the shell materialises from
``model_validate`` of its dict (so coercion is pydantic's), or, if that fails, the access
raises pydantic's ``ValidationError`` for the nested model (locations relative to it) and
the shell stays a shell; every later access raises it again.

**Threads.** Materialising and copying are safe from any number of threads at once: each
materialising thread builds from the (unchanged) dict, and the first to take the lock
installs its result (unless a copy started sharing the document meanwhile: then it builds
again from a copy); the others find the instance materialised and discard theirs, so every
thread sees the same nested objects.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from kgen_runtime.meta._memory import set_dict, set_extra, set_fields_set, set_private

__all__ = ["document_of", "shell_class"]

M = TypeVar("M", bound=BaseModel)

_get_private = BaseModel.__dict__["__pydantic_private__"].__get__
_get_dict = BaseModel.__dict__["__dict__"].__get__
_get_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__get__
_get_extra = BaseModel.__dict__["__pydantic_extra__"].__get__
_set_class = object.__dict__["__class__"].__set__

_install = threading.Lock()
_shell_classes: dict[type[Any], type[Any]] = {}
_shells: set[type[Any]] = set()

# Special methods Python finds on the type: a shell's versions materialise and then call
# the model's. (deepcopy() and __deepcopy__ are the shell's own.)
_SPECIAL = (
    "__repr__",
    "__str__",
    "__iter__",
    "__copy__",
    "__setattr__",
    "__delattr__",
    "__format__",
    "__dir__",
    "__sizeof__",
    "__reduce__",
    "__reduce_ex__",
)
# The instance state pydantic keeps: a shell's class makes each a property that materialises
# and then reads (or writes) the slot.
_STATE = {
    name: BaseModel.__dict__[name]
    for name in (
        "__dict__",
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
    )
}


class _Shared:
    """A document that a shell and its deep copies share (copy on write): each of them
    copies it when it materialises, and builds from its own copy."""

    __slots__ = ("document",)

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document


def _document(held: Any) -> dict[str, Any] | None:
    return held.document if type(held) is _Shared else held


def document_of(model: Any) -> dict[str, Any] | None:
    """The decoded document of a shell not yet materialised, else ``None``.

    The dict is the shell's own (a document shared with deep copies is copied first):
    changing it changes what the shell will build (the informer cache's transforms use that,
    before the object is shared).
    """
    shell = type(model)
    if shell not in _shells:
        return None
    while True:
        held = _get_private(model)
        if type(held) is not _Shared:
            return held  # type: ignore[no-any-return]  # None once materialised
        own = shell.__kgen_copy__(held.document)
        with _install:
            if _get_private(model) is held:
                set_private(model, own)
                return own  # type: ignore[no-any-return]


def shell_class(
    cls: type[M], build: Callable[[dict[str, Any]], M], copy_document: Callable[[Any], Any]
) -> type[M]:
    """The shell class of ``cls`` (made once; thread-safe).

    Args:
        cls: a model class without private attributes (their slot holds the document).
        build: builds a ``cls`` from a document, raising pydantic's ``ValidationError``.
        copy_document: deep-copies a document (for ``deepcopy()`` of a shell).
    """
    made = _shell_classes.get(cls)
    if made is None:
        with _install:
            made = _shell_classes.get(cls)
            if made is None:
                made = _shell_classes[cls] = _make_shell_class(cls, build, copy_document)
                _shells.add(made)
    return made


def _make_shell_class(
    cls: type[M], build: Callable[[dict[str, Any]], M], copy_document: Callable[[Any], Any]
) -> type[M]:
    if cls.__private_attributes__:
        raise TypeError(f"{cls.__qualname__} has private attributes: it cannot be a shell")
    shell: type[M]

    def materialise(self: M) -> None:
        while True:
            held = _get_private(self)
            if type(self) is not shell:
                return
            if held is None:  # another thread is installing it right now: wait, re-check
                with _install:
                    continue
            shared = type(held) is _Shared
            built = build(copy_document(held.document) if shared else held)
            with _install:
                if type(self) is not shell:
                    return
                if _get_private(self) is not held:  # copied meanwhile: the document is shared
                    continue
                set_dict(self, _get_dict(built))
                set_fields_set(self, _get_fields_set(built))
                set_extra(self, _get_extra(built))
                set_private(self, None)
                _set_class(self, cls)
                return

    def __getattr__(self: M, name: str) -> Any:  # a field, an extra: not in the (empty) dict
        materialise(self)
        return getattr(self, name)

    def deepcopy(self: M) -> M:
        held = _get_private(self)
        if type(held) is not _Shared:  # not shared yet: share it (or it is being built)
            with _install:
                held = _get_private(self)
                if type(self) is shell and held is not None and type(held) is not _Shared:
                    held = _Shared(held)
                    set_private(self, held)
            if type(held) is not _Shared:  # built meanwhile (being built: this waits)
                return cls.deepcopy(self)  # type: ignore[attr-defined,no-any-return]
        copied = object.__new__(shell)
        set_private(copied, held)
        return copied

    def __deepcopy__(self: M, memo: dict[int, Any] | None = None) -> M:
        return deepcopy(self)

    def __eq__(self: M, other: Any) -> bool:
        if type(other) is shell:
            mine, theirs = _document(_get_private(self)), _document(_get_private(other))
            if mine is not None and (mine is theirs or mine == theirs):
                return True
        materialise(self)
        if type(other) in _shells:  # pydantic compares classes through __class__
            type(other).__kgen_materialise__(other)
        return cls.__eq__(self, other)

    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "__getattr__": __getattr__,
        "__eq__": __eq__,
        "__hash__": cls.__hash__,
        "deepcopy": deepcopy,
        "__deepcopy__": __deepcopy__,
        "__kgen_shell_of__": cls,
        "__kgen_copy__": staticmethod(copy_document),
        "__kgen_materialise__": staticmethod(materialise),
    }
    for name in _SPECIAL:
        namespace[name] = _materialising(name, cls, materialise)
    for name, slot in _STATE.items():
        namespace[name] = _state(slot, materialise)
    # Past pydantic's metaclass on purpose: the shell must not become a model class of its
    # own (fields, schema, validator); every class attribute resolves to ``cls``'s.
    shell = type.__new__(type(cls), cls.__name__, (cls,), namespace)
    abc._abc_init(shell)  # type: ignore[attr-defined]  # its own ABC caches, not cls's
    return shell


def _state(slot: Any, materialise: Callable[[Any], None]) -> property:
    def get(self: Any) -> Any:
        materialise(self)
        return slot.__get__(self)

    def set_(self: Any, value: Any) -> None:
        materialise(self)
        slot.__set__(self, value)

    return property(get, set_)


def _materialising(name: str, cls: type[Any], materialise: Callable[[Any], None]) -> Any:
    method = getattr(cls, name)

    def special(self: Any, *args: Any) -> Any:
        materialise(self)
        return method(self, *args)

    special.__name__ = name
    return special
