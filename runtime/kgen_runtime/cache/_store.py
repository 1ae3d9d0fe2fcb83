"""The informer's local cache: a thread-safe keyed store with secondary indices.

client-go's ``store.go``, ``thread_safe_store.go`` and ``index.go`` in one class,
:class:`Indexer`. Objects are stored by key (``"namespace/name"``, or ``"name"`` for
cluster-scoped objects, see :func:`meta_namespace_key_func`); each index function maps an
object to the index values it is filed under (the built-in ``"namespace"`` index files it under
its namespace).

Contract:

* Every method is thread-safe and atomic: readers see an object and its index entries change
  together. Index functions run under the store's lock, so they must be quick and must not
  call back into the store. If an index function raises, the operation raises and the store
  is left unchanged.
* Objects are stored and returned *as is*, not copied: they are shared with every reader of
  the cache and must be treated as read-only (``deepcopy()`` before changing one).
* Returned lists are fresh lists (safe to keep or mutate as lists); their order is unspecified.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kgen_runtime.meta._lazy import namespace_and_name

__all__ = [
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "IndexFunc",
    "Indexer",
    "KeyFunc",
    "KeyFuncError",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
]

T = TypeVar("T")

KeyFunc = Callable[[Any], str]
"""Computes an object's store key; raises :class:`KeyFuncError` when it cannot."""

IndexFunc = Callable[[Any], list[str]]
"""Computes the index values an object is filed under (possibly none)."""

NAMESPACE_INDEX = "namespace"
"""The name of the built-in index by namespace."""

_Index = dict[str, dict[str, None]]
"""Index value -> the keys filed under it. The inner dicts are insertion-ordered sets: a set
costs about five times the memory per key (it over-allocates far more), which matters for the
namespace index of a 50,000-object cache."""


class KeyFuncError(ValueError):
    """An object (or key) from which a store key cannot be computed (client-go's KeyError)."""


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """A tombstone: the object was deleted while the watch was down (delete event missed).

    ``obj`` is the last state the cache had, possibly stale. Delete handlers receive either
    the object or one of these; ``key`` is its store key.
    """

    key: str
    obj: Any


def meta_namespace_key_func(obj: Any) -> str:
    """``"namespace/name"``, or ``"name"`` for objects without a namespace.

    A :class:`DeletedFinalStateUnknown` yields its own key, so delete handlers can key
    whatever they receive (client-go's ``DeletionHandlingMetaNamespaceKeyFunc`` in one). An
    untouched cached object is keyed from its wire document (:mod:`kgen_runtime.meta._lazy`).

    Raises:
        KeyFuncError: the object has no ``metadata.name``.
    """
    try:
        namespace, name = namespace_and_name(obj)  # an untouched cached object stays so
    except AttributeError as err:
        # Asked only of what has no metadata: isinstance on an untouched cached object
        # reads its __class__ property (~0.2 µs per listed object).
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        raise KeyFuncError(f"object has no metadata: {obj!r}") from err
    if not name:
        raise KeyFuncError(f"object has no metadata.name: {obj!r}")
    return f"{namespace}/{name}" if namespace else name


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """Split a store key into ``(namespace, name)``; the namespace is ``""`` if absent.

    Raises:
        KeyFuncError: the key has more than one ``/`` or an empty name.
    """
    parts = key.split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0]
    if len(parts) == 2 and parts[1]:
        return parts[0], parts[1]
    raise KeyFuncError(f"unexpected key format: {key!r}")


def meta_namespace_index_func(obj: Any) -> list[str]:
    """Index by ``metadata.namespace`` (cluster-scoped objects are filed under ``""``); an
    untouched cached object is indexed from its wire document (:mod:`kgen_runtime.meta._lazy`).

    An :class:`Indexer` keyed by :func:`meta_namespace_key_func` reads the namespace from the
    key instead, which is the same value (a name never holds a ``/``: the API server rejects
    one) without reading the object again: filing a listed object in the namespace index
    cost ~1.2 µs, mostly the cache misses of a second walk through its metadata.
    """
    return [namespace_and_name(obj)[0] or ""]


def _namespace_of_key(key: str, obj: Any) -> list[str]:
    """:func:`meta_namespace_index_func` of an object keyed ``key`` by
    :func:`meta_namespace_key_func`."""
    namespace, slash, _ = key.partition("/")
    return [namespace if slash else ""]


_KeyedIndexFunc = Callable[[str, Any], list[str]]
"""An index function given the object's key too; see :meth:`Indexer._keyed`."""


class Indexer(Generic[T]):
    """A thread-safe object store with named indices (client-go's ``cache.Indexer``).

    See the module docstring for the concurrency and sharing contract.
    """

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key_func,
        indexers: Mapping[str, IndexFunc] | None = None,
    ) -> None:
        self._key_func = key_func
        self._lock = threading.Lock()
        self._items: dict[str, T] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._keyed_indexers = {name: self._keyed(fn) for name, fn in self._indexers.items()}
        self._indices: dict[str, _Index] = {n: {} for n in self._indexers}

    @property
    def key_func(self) -> KeyFunc:
        return self._key_func

    # --- writes ---------------------------------------------------------------------------

    def add(self, obj: T) -> None:
        """Insert or replace the object under its key."""
        self.put(obj)

    def update(self, obj: T) -> None:
        """Same as :meth:`add` (client-go's ``Update``)."""
        self.put(obj)

    def put(self, obj: T) -> T | None:
        """Insert or replace the object under its key; return the object it replaced."""
        return self.put_by_key(self._key_func(obj), obj)

    def put_by_key(self, key: str, obj: T) -> T | None:
        """:meth:`put` under a key the caller computed with this store's key function
        (client-go's ``ThreadSafeStore.Update``); return the object it replaced."""
        with self._lock:
            return self._put(key, obj)

    def delete(self, obj: T | DeletedFinalStateUnknown) -> None:
        """Remove the object with ``obj``'s key; a missing key is not an error."""
        self.delete_by_key(self._key_func(obj))

    def delete_by_key(self, key: str) -> None:
        """Remove the object with this key; a missing key is not an error."""
        with self._lock:
            self._remove(key)

    def replace(self, objects: Iterable[T], resource_version: str = "") -> None:
        """Atomically swap the whole content for ``objects`` and rebuild every index."""
        self.replace_by_keys({self._key_func(obj): obj for obj in objects})

    def replace_by_keys(self, items: dict[str, T]) -> dict[str, T]:
        """:meth:`replace` with objects under keys the caller computed with this store's key
        function; return the content it replaced. If an index function raises, the store is
        left unchanged. ``items`` becomes the store's own: the caller must not keep it."""
        indexers = self._keyed_indexers  # add_indexers swaps in a new dict, never changes it
        indices = {name: self._build_index(fn, items) for name, fn in indexers.items()}
        with self._lock:
            if self._keyed_indexers is not indexers:  # indexers were added meanwhile
                indexers = self._keyed_indexers
                indices = {name: self._build_index(fn, items) for name, fn in indexers.items()}
            old, self._items, self._indices = self._items, items, indices
        return old

    def resync(self) -> None:
        """Nothing to do for a plain store (kept for the ``Store`` interface)."""

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions, at any time; existing objects are indexed at once.

        Raises:
            ValueError: an index with one of these names already exists.
        """
        with self._lock:
            clash = sorted(set(indexers) & set(self._indexers))
            if clash:
                raise ValueError(f"indexer conflict: {', '.join(clash)}")
            keyed = {name: self._keyed(fn) for name, fn in indexers.items()}
            built = {name: self._build_index(fn, self._items) for name, fn in keyed.items()}
            self._indexers.update(indexers)
            self._keyed_indexers = {**self._keyed_indexers, **keyed}
            self._indices.update(built)

    # --- reads ----------------------------------------------------------------------------

    def get(self, obj: T) -> T | None:
        """The stored object with ``obj``'s key, or ``None``."""
        return self.get_by_key(self._key_func(obj))

    def get_by_key(self, key: str) -> T | None:
        """The stored object with this key, or ``None``."""
        with self._lock:
            return self._items.get(key)

    def list(self) -> list[T]:
        """Every stored object."""
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        """Every key."""
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def get_indexers(self) -> dict[str, IndexFunc]:
        """A copy of the index functions by name."""
        with self._lock:
            return dict(self._indexers)

    def index(self, index_name: str, obj: T) -> builtins.list[T]:
        """Objects sharing at least one of ``obj``'s values in the named index."""
        with self._lock:
            values = self._index_fn(index_name)(obj)
            index = self._indices[index_name]
            keys: dict[str, None] = {}
            for value in values:
                keys.update(index.get(value, {}))
            return [self._items[k] for k in keys]

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """Keys of the objects filed under ``value`` in the named index."""
        with self._lock:
            self._index_fn(index_name)
            return list(self._indices[index_name].get(value, ()))

    def by_index(self, index_name: str, value: str) -> builtins.list[T]:
        """Objects filed under ``value`` in the named index."""
        with self._lock:
            self._index_fn(index_name)
            return [self._items[k] for k in self._indices[index_name].get(value, ())]

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value the named index currently has objects under."""
        with self._lock:
            self._index_fn(index_name)
            return list(self._indices[index_name])

    # --- machinery (caller holds the lock) -------------------------------------------------

    def _index_fn(self, index_name: str) -> IndexFunc:
        try:
            return self._indexers[index_name]
        except KeyError:
            raise KeyError(f"index {index_name!r} does not exist") from None

    def _put(self, key: str, obj: T) -> T | None:
        old = self._items.get(key)
        if old is None and self._indexers:  # a new key: nothing to take out of the indices
            # Every value first: an index function that raises changes nothing. (A loop, not
            # a comprehension: its frame costs ~0.1 µs per listed object on 3.11.)
            filed = []
            indices = self._indices
            for name, fn in self._keyed_indexers.items():
                filed.append((indices[name], fn(key, obj)))
            for index, values in filed:
                for value in values:
                    keys = index.get(value)
                    if keys is None:
                        index[value] = {key: None}
                    else:
                        keys[key] = None
        elif self._indexers:  # filed anew only where its values changed
            changes: list[tuple[str, list[str], list[str]]] = []
            for name, fn in self._keyed_indexers.items():
                values = fn(key, obj)
                old_values = fn(key, old)
                if values != old_values:
                    changes.append((name, old_values, values))
            for name, old_values, values in changes:
                index = self._indices[name]
                for value in old_values:
                    self._discard(index, value, key)
                for value in values:
                    index.setdefault(value, {})[key] = None
        self._items[key] = obj
        return old

    def _remove(self, key: str) -> None:
        old = self._items.pop(key, None)
        if old is not None and self._indexers:
            self._unindex(key, old)

    def _unindex(self, key: str, obj: T) -> None:
        for name, fn in self._keyed_indexers.items():
            index = self._indices[name]
            for value in fn(key, obj):
                self._discard(index, value, key)

    @staticmethod
    def _discard(index: _Index, value: str, key: str) -> None:
        keys = index.get(value)
        if keys is not None:
            keys.pop(key, None)
            if not keys:
                del index[value]

    def _keyed(self, fn: IndexFunc) -> _KeyedIndexFunc:
        """``fn`` as the store files with it: given the key too, so that the namespace index
        of a store keyed by namespace/name reads the key (:func:`meta_namespace_index_func`)."""
        if fn is meta_namespace_index_func and self._key_func is meta_namespace_key_func:
            return _namespace_of_key
        return lambda key, obj: fn(obj)

    @staticmethod
    def _build_index(fn: _KeyedIndexFunc, items: Mapping[str, Any]) -> _Index:
        index: _Index = {}
        for key, obj in items.items():
            for value in fn(key, obj):
                keys = index.get(value)
                if keys is None:
                    index[value] = {key: None}
                else:
                    keys[key] = None
        return index
