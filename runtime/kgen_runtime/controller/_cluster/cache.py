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
import threading
from typing import Any, TypeVar

from kgen_runtime.cache import (
    ResourceEventHandler,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
    SharedInformerFactory,
    wait_for_cache_sync,
)
from kgen_runtime.controller._cluster.cache_core import CacheLayout, CacheOptions
from kgen_runtime.controller._cluster.kinds import Kinds, LabelsLike, require_namespace
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import Transport
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = ["InformerCache"]

T = TypeVar("T", bound=KubeObject)


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
