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
* **fieldsV1 trees** (in ``managedFields``; read by server-side apply only) are mostly equal
  from object to object: equal trees become one dict (keyed by their JSON, pool bounded), which
  is both smaller and much cheaper than interning each of their keys. ``deepcopy()`` still
  copies them; as with everything an informer hands out, they must not be changed in place.
* **fields sets**: pydantic keeps, per model, the set of fields the JSON carried (~200 bytes,
  ~700 from five fields up: the object, ``ObjectMeta``, each ``managedFields`` entry). Every
  model gets the process-wide :func:`~kgen_runtime.meta._memory.shared_fields_set` of the
  same fields; a model assigned to later takes a private copy first. A top-level object's set
  first gets the fields its dumps always mark as set (``apiVersion``, ``kind``, ``metadata``),
  as the first dump would have done.
* **empty extras**: every model of ``extra="allow"`` holds a dict of unknown fields, nearly
  always empty (64 bytes). Nested models get ``None`` instead (top-level ones keep theirs),
  which pydantic treats as empty (dumps, attribute reads, and an assignment of an unknown
  field makes a new dict; ``model_extra`` makes one on first use).

Numbers (bench/informer.py, ~1.1 KB Foos with managedFields): see bench/README.md.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import orjson

from kgen_runtime.meta import APIObject, KubeModel, ManagedFieldsEntry, ObjectMeta
from kgen_runtime.meta._lazy import untouched_document
from kgen_runtime.meta._memory import shared_fields_set

__all__ = ["Compactor", "compact"]

#: ObjectMeta attributes whose values are unique per object: not worth interning.
_UNIQUE_META = frozenset({"name", "generate_name", "uid", "resource_version", "self_link"})


class Compactor:
    """A :data:`~kgen_runtime.cache.TransformFunc` that compacts objects in place (see the
    module docstring); the ready-made :data:`compact` does all three.

    Values, equality and every serialisation are unchanged; only identity changes (equal
    strings become the same object, models share a read-only fields set) and nested
    models hold no extras dict until one is needed, so it is safe for anything that does not
    compare strings with ``is`` or mutate ``model_fields_set``/``model_extra`` in place.
    Objects that are not models are returned as they are.
    Stateless and thread-safe; costs a few microseconds per object.
    """

    def __init__(
        self,
        *,
        intern_strings: bool = True,
        share_fields_sets: bool = True,
        drop_empty_extras: bool = True,
    ) -> None:
        self._intern = intern_strings
        self._share = share_fields_sets
        self._drop_extras = drop_empty_extras

    def __call__(self, obj: Any) -> Any:
        if isinstance(obj, KubeModel):
            self._model(obj)
        return obj

    def _model(self, model: KubeModel) -> None:
        values = model.__dict__
        intern = self._intern
        skip, always = _plan(type(model))
        if skip is _FIELDS_V1 and intern:
            tree = values["fields_v1"]
            if type(tree) is dict:
                values["fields_v1"] = _pooled_tree(tree, self._value)
        # Fields never set hold their class defaults, already shared; extras are handled below.
        for name in model.__pydantic_fields_set__:
            value = values.get(name)
            if value is None or name in skip:
                continue
            kind = type(value)
            if kind is str:
                if intern:
                    values[name] = sys.intern(value)
            elif kind is not int and kind is not bool and kind is not float:
                values[name] = self._value(value)
        extra = model.__pydantic_extra__
        if extra:
            for name, value in extra.items():
                extra[name] = self._value(value)
        if self._share:
            fields = model.__pydantic_fields_set__
            if always is not None:  # marked now as every dump marks them (idempotent)
                fields = fields | always
            object.__setattr__(model, "__pydantic_fields_set__", shared_fields_set(fields))
        if always is None and self._drop_extras and extra is not None and not extra:
            object.__setattr__(model, "__pydantic_extra__", None)

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


def _plan(cls: type[KubeModel]) -> tuple[frozenset[str], frozenset[str] | None]:
    """(attributes not to walk, the always-dumped fields of a top-level object) of a class."""
    plan = _plans.get(cls)
    if plan is None:
        skip = frozenset[str]()
        if issubclass(cls, ObjectMeta):
            skip = _UNIQUE_META
        elif issubclass(cls, ManagedFieldsEntry):
            skip = _FIELDS_V1
        always = cls.__kgen_always__ if issubclass(cls, APIObject) else None
        plan = _plans.setdefault(cls, (skip, always))
    return plan


_plans: dict[type[KubeModel], tuple[frozenset[str], frozenset[str] | None]] = {}

#: Shared ``fieldsV1`` trees by their JSON, bounded: past the limit trees are only interned.
_trees: dict[bytes, dict[str, Any]] = {}
_TREES_LIMIT = 4096
_FIELDS_V1 = frozenset({"fields_v1"})


compact = Compactor()
"""Interns repeated strings, shares nested fields sets, drops empty extras (:class:`Compactor`)."""


def share_fields_v1(obj: Any) -> Any:
    """A :data:`~kgen_runtime.cache.TransformFunc` that gives each ``managedFields`` entry the
    process-wide equal of its ``fieldsV1`` tree (the pool :data:`compact` uses), changing no
    value; objects that are not models are returned as they are.

    Every informer applies it to the objects of watch events, after its own transform
    (issue 22): a tree is ~6 dicts of dicts, which the cyclic collector tracks for as long
    as the object is cached (it never untracks a dict holding dicts), about a third of what
    it walks per cached object; equal trees are the rule (the same managers write the same
    fields). Shared trees are read-only like everything in a cache; ``deepcopy()`` copies
    them on first read. Costs ~0.3 µs per entry (``orjson.dumps`` as the pool's key) and
    the freeing of the duplicate (~1 µs per entry of bench/informer.py's Foos).

    An untouched cached object (:mod:`kgen_runtime.meta._lazy`) has the trees of its wire
    document shared instead, without building it: its model keeps the document's trees.
    """
    document = untouched_document(obj)
    if document is not None:
        meta = document.get("metadata")
        entries = meta.get("managedFields") if type(meta) is dict else None
        if type(entries) is list:
            for entry in entries:
                tree = entry.get("fieldsV1") if type(entry) is dict else None
                if type(tree) is dict:
                    entry["fieldsV1"] = _pooled_tree(tree)
        return obj
    if not isinstance(obj, KubeModel):
        return obj
    meta = obj.__dict__.get("metadata")  # not the attributes: no copy-on-read, no exposure
    if not isinstance(meta, KubeModel):
        return obj
    entries = meta.__dict__.get("managed_fields")
    if type(entries) is list:
        for entry in entries:
            values = getattr(entry, "__dict__", None)
            tree = values.get("fields_v1") if values is not None else None
            if type(tree) is dict:
                values["fields_v1"] = _pooled_tree(tree)  # type: ignore[index]
    return obj


def _pooled_tree(
    tree: dict[str, Any], prepare: Callable[[Any], Any] | None = None
) -> dict[str, Any]:
    """The process-wide equal of a ``fieldsV1`` tree (keyed by its JSON). On a miss the tree,
    after ``prepare`` if given (:data:`compact` interns its strings), joins the pool while
    there is room, and is returned either way."""
    key = orjson.dumps(tree)
    shared = _trees.get(key)
    if shared is None:
        shared = prepare(tree) if prepare is not None else tree
        if len(_trees) < _TREES_LIMIT:
            shared = _trees.setdefault(key, shared)
    return shared
