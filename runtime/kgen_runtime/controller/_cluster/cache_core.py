"""What the blocking :class:`~kgen_runtime.controller.InformerCache` and the
:class:`~kgen_runtime.controller.AsyncInformerCache` share, none of it I/O or waiting: what a
cache watches (:class:`CacheOptions`, :class:`ByObject`), its errors, and
:class:`CacheLayout`: which informers a kind has, their list options, and reads from synced
informers. The two caches differ only in how informers run (threads stopped by an event,
tasks on one loop) and how a read waits for a lazily started informer's sync.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from kgen_runtime.cache import (
    ClusterLister,
    Indexer,
    NamespaceLister,
    ReflectorOptions,
    TransformFunc,
    TweakListOptions,
)
from kgen_runtime.controller._cluster.kinds import Kinds, LabelsLike, sort_by_key
from kgen_runtime.controller._cluster.shards import CacheShards
from kgen_runtime.labels import as_selector
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import ListOptions

__all__ = [
    "ByObject",
    "CacheLayout",
    "CacheNotStartedError",
    "CacheOptions",
    "NamespaceNotCachedError",
]

T = TypeVar("T", bound=KubeObject)
InformerT = TypeVar("InformerT")


class CacheNotStartedError(RuntimeError):
    """The cache was read before it was started, or after it was shut down
    (``cache.ErrCacheNotStarted``)."""


class NamespaceNotCachedError(ValueError):
    """A read of a namespace the cache does not watch."""


@dataclass(frozen=True, slots=True)
class ByObject:
    """What the cache watches of one kind (``cache.ByObject``).

    Attributes:
        namespaces: Watch only these namespaces (overrides ``CacheOptions.namespaces``);
            ``None`` follows the cache's.
        labels: Cache only objects matching this label selector.
        fields: Cache only objects matching this field selector (``"metadata.name=x"``).
        transform: Applied to every object before it is cached (overrides the default).
    """

    namespaces: Sequence[str] | None = None
    labels: LabelsLike = None
    fields: str | None = None
    transform: TransformFunc | None = None

    def __post_init__(self) -> None:
        _check_namespaces(self.namespaces)


@dataclass(frozen=True, slots=True)
class CacheOptions:
    """What an :class:`InformerCache` watches (``cache.Options``).

    Attributes:
        namespaces: The namespaces namespaced kinds are watched in; empty: all of them.
        by_object: Per-kind settings (see :class:`ByObject`).
        resync_period: Seconds between informer resyncs; 0: none.
        transform: Applied to every object before it is cached.
        sync_timeout: Bound, in seconds, on waiting for a lazily started informer's sync.
        reflector_options: How every informer's reflector lists, watches and backs off, as
            a :class:`~kgen_runtime.cache.SharedInformerFactory` takes them (page size,
            watch timeouts, backoff, streaming lists); ``None``: client-go's defaults
            (e.g. a watch silent for 120 s is re-opened).
    """

    namespaces: Sequence[str] = ()
    by_object: Mapping[type[KubeObject], ByObject] = field(default_factory=dict)
    resync_period: float = 0.0
    transform: TransformFunc | None = None
    sync_timeout: float = 60.0
    reflector_options: ReflectorOptions | None = None

    def __post_init__(self) -> None:
        _check_namespaces(self.namespaces)


def _check_namespaces(namespaces: Sequence[str] | None) -> None:
    if isinstance(namespaces, str):  # a str is a Sequence[str] too: of one-letter names
        raise TypeError(f"namespaces must be a list of names, not the string {namespaces!r}")


class CacheLayout:
    """What the blocking :class:`InformerCache` and the :class:`AsyncInformerCache` share:
    which informers a kind has, their list options, and reads from synced informers.
    None of it does I/O or waits."""

    def __init__(self, kinds: Kinds, options: CacheOptions | None) -> None:
        self.kinds = kinds
        self.options = options or CacheOptions()
        self.shards = CacheShards()
        """Which kinds are sharded and the ranges they serve (see :class:`CacheShards`)."""

    def shard(self, kind: type[KubeObject]) -> None:
        """Serve ``kind`` through sharded list-watches (a builder's ``sharded()``).

        Raises:
            ValueError: the cache does not shard (no manager with sharding), or ``kind``'s
                informers were already made unsharded.
        """
        self._refuse_made(kind)
        self.shards.mark(kind)

    def shard_owned(self, kind: type[KubeObject]) -> None:
        """Serve ``kind`` through list-watches of the objects whose controller owner is in
        the member's ranges (the ``owns()`` kinds of a ``sharded()`` builder).

        Raises:
            ValueError: the cache does not shard, ``kind`` is a sharded primary kind, or its
                informers were already made unsharded.
        """
        self._refuse_made(kind)
        self.shards.mark_owned(kind)

    def _refuse_made(self, kind: type[KubeObject]) -> None:
        if self._made(kind) and not self.shards.sharded(kind):
            raise ValueError(f"{kind.__qualname__}'s informers were made unsharded before "
                             "sharded() marked it: mark it before anything reads or watches it")

    def _made(self, kind: type[Any]) -> bool:
        """Whether an informer of ``kind`` exists."""
        raise NotImplementedError

    def namespaces_of(self, kind: type[KubeObject]) -> tuple[str | None, ...]:
        """The namespaces ``kind`` is watched in; ``(None,)`` for all (or cluster-scoped)."""
        if not self.kinds.resource_for(kind).namespaced:
            return (None,)
        by_object = self.options.by_object.get(kind)
        chosen = by_object.namespaces if by_object and by_object.namespaces is not None else None
        namespaces = self.options.namespaces if chosen is None else chosen
        return tuple(sorted(set(namespaces))) or (None,)

    def _factory_settings(self, kind: type[Any]) -> tuple[TweakListOptions | None,
                                                          TransformFunc | None]:
        """The list-option tweak (selectors) and transform of ``kind``'s informers."""
        by_object = self.options.by_object.get(kind) or ByObject()
        selector = as_selector(by_object.labels)
        labels = None if selector.empty() else str(selector)

        def tweak(options: ListOptions) -> ListOptions:
            return dataclasses.replace(options, label_selector=labels,
                                       field_selector=by_object.fields)

        return (tweak if labels or by_object.fields else None,
                by_object.transform or self.options.transform)

    def _watched(
        self, kind: type[Any], resource: Resource[Any], namespace: str | None
    ) -> tuple[str | None, ...]:
        """``kind``'s watched namespaces; ``NamespaceNotCachedError`` if ``namespace`` is
        not one of them."""
        watched = self.namespaces_of(kind)
        if namespace and None not in watched and namespace not in watched:
            raise NamespaceNotCachedError(
                f"{resource.plural} in namespace {namespace!r} are not cached: the cache "
                f"watches namespaces {', '.join(map(repr, watched))}"
            )
        return watched

    @staticmethod
    def _not_started(resource: Resource[Any], shut_down: bool) -> CacheNotStartedError:
        when = "after the cache was shut down" if shut_down else "before the cache was started"
        return CacheNotStartedError(f"read {resource.plural} {when}")

    @staticmethod
    def _holding(
        informers: builtins.list[InformerT], watched: tuple[str | None, ...], namespace: str | None
    ) -> builtins.list[InformerT]:
        """Of one informer per watched namespace, those holding ``namespace``."""
        if namespace and None not in watched:
            return [informers[watched.index(namespace)]]
        return informers

    @staticmethod
    def _get_from(informer: _Cached[T], resource: Resource[T], namespace: str, name: str) -> T:
        if not resource.namespaced:
            return ClusterLister(informer.indexer, resource.gvr).get(name).deepcopy()
        lister: NamespaceLister[T] = NamespaceLister(informer.indexer, namespace, resource.gvr)
        return lister.get(name).deepcopy()

    @staticmethod
    def _list_from(
        informers: Sequence[_Cached[T]], namespace: str | None, labels: LabelsLike
    ) -> builtins.list[T]:
        selector = as_selector(labels)
        found: builtins.list[T] = []
        for informer in informers:
            if namespace:
                found += NamespaceLister(informer.indexer, namespace).list(selector)
            else:
                found += [o for o in informer.indexer.list()
                          if selector.matches(o.metadata.labels or {})]
        return sort_by_key([o.deepcopy() for o in found])


class _Cached(Protocol[T]):
    """An informer's cache, blocking or async."""

    @property
    def indexer(self) -> Indexer[T]: ...
