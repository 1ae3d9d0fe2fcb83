"""Transforms that shrink cached objects without changing their value: :class:`Compactor`.

A cache of decoded objects holds the same things many times over:

* **strings**: every Foo carries its own copy of ``"Foo"``, its apiVersion, namespace, label
  keys and values, timestamps of objects written in the same second, managers and
  ``fieldsV1`` keys — the JSON decoder makes a fresh ``str`` for each (pydantic caches dict
  keys only). Interning (``sys.intern``) keeps one copy per distinct text, process-wide.
  Strings unique to an object by construction (``metadata.name``, ``generateName``, ``uid``,
  ``resourceVersion``, ``selfLink``) are left alone: interning them would only add an entry
  per object to the interpreter's table. Interned strings are still freed when the last
  object using them goes (CPython 3.11 interns are mortal).
* **fields sets**: pydantic keeps, per model, the set of fields the JSON carried (~200 bytes,
  ~700 from six fields up: ``ObjectMeta``, each ``managedFields`` entry). Nested models get the
  process-wide :func:`~kgen_runtime.meta._model.shared_fields_set` of the same fields; a
  model assigned to later takes a private copy first. Top-level objects keep their own set
  (their dumps add ``apiVersion``/``kind``/``metadata`` to it).

Numbers (bench/informer.py, ~1.1 KB Foos with managedFields): see bench/README.md.
"""

from __future__ import annotations

import sys
from typing import Any

from kgen_runtime.meta import APIObject, KubeModel, ObjectMeta
from kgen_runtime.meta._model import shared_fields_set

__all__ = ["Compactor", "compact"]

#: ObjectMeta attributes whose values are unique per object: not worth interning.
_UNIQUE_META = frozenset({"name", "generate_name", "uid", "resource_version", "self_link"})


class Compactor:
    """A :data:`~kgen_runtime.cache.TransformFunc` that compacts objects in place (see the
    module docstring); the ready-made :data:`compact` does both kinds of sharing.

    Values, equality and every serialisation are unchanged; only identity changes (equal
    strings become the same object, nested models share a read-only fields set), so it is
    safe for anything that does not compare strings with ``is`` or mutate
    ``model_fields_set`` in place. Objects that are not models are returned as they are.
    Stateless and thread-safe; costs a few microseconds per object.
    """

    def __init__(self, *, intern_strings: bool = True, share_fields_sets: bool = True) -> None:
        self._intern = intern_strings
        self._share = share_fields_sets

    def __call__(self, obj: Any) -> Any:
        if isinstance(obj, KubeModel):
            self._model(obj)
        return obj

    def _model(self, model: KubeModel) -> None:
        values = model.__dict__
        skip = _UNIQUE_META if isinstance(model, ObjectMeta) else ()
        for name, value in values.items():
            if name not in skip and value is not None:
                values[name] = self._value(value)
        extra = model.__pydantic_extra__
        if extra:
            for name, value in extra.items():
                extra[name] = self._value(value)
        if self._share and not isinstance(model, APIObject):
            object.__setattr__(
                model, "__pydantic_fields_set__", shared_fields_set(model.__pydantic_fields_set__)
            )

    def _value(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return sys.intern(value) if self._intern else value
        if kind is dict:
            if not self._intern:
                for key, item in value.items():
                    value[key] = self._value(item)
                return value
            intern = sys.intern
            return {intern(k) if type(k) is str else k: self._value(v) for k, v in value.items()}
        if kind is list:
            value[:] = [self._value(item) for item in value]
            return value
        if isinstance(value, KubeModel):
            self._model(value)
        return value


compact = Compactor()
"""Interns repeated strings and shares nested fields sets (see :class:`Compactor`)."""
