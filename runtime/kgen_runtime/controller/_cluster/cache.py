"""The manager's informer cache, a :class:`Reader` over shared informers started on demand
(controller-runtime's ``cache`` package: ``informerCache`` + ``multiNamespaceCache``).

::

    cache = InformerCache(transport, kinds, CacheOptions(
        namespaces=["team-a", "team-b"],                       # DefaultNamespaces
        by_object={Secret: ByObject(labels={"app": "foo"})},   # ByObject
    ))
    cache.start(stop)
    cache.get(Foo, "team-a", "x")       # first read of Foo: starts its informers, waits for sync
    cache.get(Foo, "team-c", "x")       # NamespaceNotCachedError: not a watched namespace

Contract:

* **One informer per kind and namespace**: a kind is watched in every namespace of its
  ``ByObject.namespaces`` (else the cache's ``namespaces``; none means all), with its label
  and field selectors; cluster-scoped kinds are watched cluster-wide. Nothing else is ever
  listed or watched.
* **Lazy**: an informer is made the first time a kind is read or handed to a controller.
  Made before :meth:`start`, it starts with the cache; made after, it starts at once, and a
  read waits for it to sync (at most ``CacheOptions.sync_timeout``, then ``TimeoutError``).
  Reading before :meth:`start` raises :class:`CacheNotStartedError`.
* **Reads** return deep copies, sorted by namespace and name. Reading a namespace the cache
  does not watch raises :class:`NamespaceNotCachedError` (no request is made). Objects a
  selector excludes are simply absent.
* Thread-safe. :meth:`shutdown` stops every informer and joins its threads.
"""

from __future__ import annotations

import builtins
import dataclasses
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from kgen_runtime.cache import (
    ClusterLister,
    Indexer,
    NamespaceLister,
    ReflectorOptions,
    ResourceEventHandler,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
    SharedInformerFactory,
    TransformFunc,
    TweakListOptions,
    wait_for_cache_sync,
)
from kgen_runtime.controller._cluster.client import (
    Kinds,
    LabelsLike,
    require_namespace,
    sort_by_key,
)
from kgen_runtime.controller._cluster.shards import CacheShards
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.labels import as_selector
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import ListOptions, Transport
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = [
    "ByObject",
    "CacheLayout",
    "CacheNotStartedError",
    "CacheOptions",
    "InformerCache",
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
        if self._made(kind) and not self.shards.sharded(kind):
            raise ValueError(f"{kind.__qualname__}'s informers were made unsharded before "
                             "sharded() marked it: mark it before anything reads or watches it")
        self.shards.mark(kind)

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


class InformerCache(CacheLayout):
    """Shared informers per kind and namespace behind a :class:`Reader` (module docstring).

    Implements what a :class:`~kgen_runtime.controller.Manager` runs of an informer factory
    (``start``, ``wait_for_cache_sync``, ``shutdown``).
    """

    def __init__(
        self,
        transport: Transport,
        kinds: Kinds,
        options: CacheOptions | None = None,
        *,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        super().__init__(kinds, options)
        self.transport = transport
        self._clock = clock
        self._lock = threading.Lock()
        # (kind, namespace or None) → the factory holding that informer (one each).
        self._factories: dict[tuple[type[Any], str | None], SharedInformerFactory] = {}
        self._stop: threading.Event | None = None
        self._shut_down = False

    # -- informers --------------------------------------------------------------------------

    def informers_for(self, kind: type[T]) -> list[SharedIndexInformer[T]]:
        """``kind``'s informers, one per watched namespace, made (and, if the cache runs,
        started) on first request."""
        resource = self.kinds.resource_for(kind)
        informers: list[SharedIndexInformer[T]] = []
        for namespace in self.namespaces_of(kind):
            with self._lock:
                factory = self._factories.get((kind, namespace))
                if factory is None:
                    factory = self._new_factory(kind, namespace)
                    self._factories[(kind, namespace)] = factory
                informers.append(factory.informer_for(resource))
                if self._stop is not None and not self._shut_down:
                    factory.start(self._stop)
        return informers

    def add_handler(
        self, kind: type[KubeObject], handler: ResourceEventHandler
    ) -> list[ResourceEventHandlerRegistration]:
        """Register ``handler`` on every informer of ``kind``."""
        return [informer.add_handler(handler) for informer in self.informers_for(kind)]

    def _made(self, kind: type[Any]) -> bool:
        with self._lock:
            return any(made is kind for made, _ in self._factories)

    def _new_factory(self, kind: type[Any], namespace: str | None) -> SharedInformerFactory:
        tweak, transform = self._factory_settings(kind)
        return SharedInformerFactory(
            self.transport,
            resync_period=self.options.resync_period,
            namespace=namespace,
            tweak_list_options=tweak,
            transform=transform,
            reflector_options=self.options.reflector_options,
            clock=self._clock,
            wrap_list_watch=self.shards.wrap if self.shards.sharded(kind) else None,
        )

    # -- Reader -----------------------------------------------------------------------------

    def get(self, kind: type[T], namespace: str, name: str) -> T:
        """A copy of the cached object ``namespace/name`` (see the module docstring).

        Raises:
            NotFoundError: it is not in the cache.
            NamespaceNotCachedError: ``namespace`` is not watched.
            CacheNotStartedError: the cache has not been started.
            TimeoutError: ``kind``'s informer did not sync within ``sync_timeout``.
        """
        resource = self.kinds.resource_for(kind)
        require_namespace(resource, namespace)
        informer = self._synced(kind, resource, namespace if resource.namespaced else None)[0]
        return self._get_from(informer, resource, namespace, name)

    def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """Copies of the cached objects matching ``labels`` in ``namespace`` (``None``: every
        watched namespace), sorted by namespace and name (errors as :meth:`get`)."""
        resource = self.kinds.resource_for(kind)
        namespace = namespace if resource.namespaced else None
        return self._list_from(self._synced(kind, resource, namespace), namespace, labels)

    def _synced(
        self, kind: type[T], resource: Resource[T], namespace: str | None
    ) -> builtins.list[SharedIndexInformer[T]]:
        """The informers holding ``namespace`` (all of them for ``None``), synced."""
        watched = self._watched(kind, resource, namespace)
        with self._lock:
            stop, shut_down = self._stop, self._shut_down
        if stop is None or shut_down:
            raise self._not_started(resource, shut_down)
        informers = self._holding(self.informers_for(kind), watched, namespace)
        timeout = self.options.sync_timeout
        if not wait_for_cache_sync(stop, *(i.has_synced for i in informers), timeout=timeout,
                                   clock=self._clock):
            raise TimeoutError(f"the cache of {resource.plural} did not sync within {timeout}s")
        return informers

    # -- running ----------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Start the informers made so far (later ones start when made); returns at once."""
        with self._lock:
            if self._shut_down:
                return
            self._stop = stop
            factories = list(self._factories.values())
        for factory in factories:
            factory.start(stop)

    def wait_for_cache_sync(
        self, stop: threading.Event, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """Wait for the started informers to sync; the outcome per resource."""
        with self._lock:
            factories = list(self._factories.values())
        result: dict[GroupVersionResource, bool] = {}
        for factory in factories:
            for gvr, ok in factory.wait_for_cache_sync(stop, timeout).items():
                result[gvr] = result.get(gvr, True) and ok
        return result

    def shutdown(self) -> None:
        """Stop every informer and join its threads; later informers never start."""
        with self._lock:
            self._shut_down = True
            factories = list(self._factories.values())
        for factory in factories:
            factory.shutdown()
