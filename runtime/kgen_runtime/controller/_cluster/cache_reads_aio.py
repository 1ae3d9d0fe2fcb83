"""The informers of an informer cache and the reads over them: one shared informer per kind
and namespace, made the first time a kind is read or handed to a controller (and started at
once if the cache runs), and ``get``/``list`` answered from them once synced.

How informers run and how a read waits for one to sync are the only things the blocking and
the asyncio cache do differently: each cache supplies them (:meth:`AsyncCacheReads._start`,
:meth:`AsyncCacheReads._wait_synced`, :meth:`AsyncCacheReads._wrap`) and its ``start``,
``wait_for_cache_sync`` and ``shutdown``.
"""

from __future__ import annotations

import builtins
import threading
from functools import partial
from typing import Any, TypeVar

from kgen_runtime.cache import (
    AsyncListerWatcher,
    AsyncSharedIndexInformer,
    AsyncSharedInformerFactory,
)
from kgen_runtime.cache._informer import ResourceEventHandlerRegistration
from kgen_runtime.cache._processor import ResourceEventHandler
from kgen_runtime.controller._cluster.cache_core import CacheLayout, CacheOptions
from kgen_runtime.controller._cluster.kinds import Kinds, LabelsLike, require_namespace
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest._request_aio import AsyncTransport
from kgen_runtime.util.clock_aio import AsyncClock

__all__ = ["AsyncCacheReads"]

T = TypeVar("T", bound=KubeObject)


class AsyncCacheReads(CacheLayout):
    """Shared informers per kind and namespace behind a reader (see the module docstring)."""

    def __init__(
        self,
        transport: AsyncTransport,
        kinds: Kinds,
        options: CacheOptions | None,
        clock: AsyncClock,
    ) -> None:
        super().__init__(kinds, options)
        self.transport = transport
        self._clock = clock
        self._lock = threading.Lock()
        """Guards the factories and the running state (never held across a wait)."""
        # (kind, namespace or None) → the factory holding that informer (one each).
        self._factories: dict[tuple[type[Any], str | None], AsyncSharedInformerFactory] = {}
        self._started = False
        self._shut_down = False

    # -- informers --------------------------------------------------------------------------

    def informers_for(self, kind: type[T]) -> list[AsyncSharedIndexInformer[T]]:
        """``kind``'s informers, one per watched namespace, made (and, if the cache runs,
        started) on first request."""
        resource = self.kinds.resource_for(kind)
        informers: list[AsyncSharedIndexInformer[T]] = []
        for namespace in self.namespaces_of(kind):
            with self._lock:
                factory = self._factories.get((kind, namespace))
                if factory is None:
                    factory = self._new_factory(kind, namespace)
                    self._factories[(kind, namespace)] = factory
                informers.append(factory.informer_for(resource))
                if self._started and not self._shut_down:
                    self._start(factory)
        return informers

    def add_handler(
        self, kind: type[KubeObject], handler: ResourceEventHandler
    ) -> list[ResourceEventHandlerRegistration]:
        """Register ``handler`` on every informer of ``kind``."""
        return [informer.add_handler(handler) for informer in self.informers_for(kind)]

    def _made(self, kind: type[Any]) -> bool:
        with self._lock:
            return any(made is kind for made, _ in self._factories)

    def _new_factory(self, kind: type[Any], namespace: str | None) -> AsyncSharedInformerFactory:
        tweak, transform = self._factory_settings(kind)
        return AsyncSharedInformerFactory(
            self.transport,
            resync_period=self.options.resync_period,
            namespace=namespace,
            tweak_list_options=tweak,
            transform=transform,
            reflector_options=self.options.reflector_options,
            clock=self._clock,
            wrap_list_watch=partial(self._wrap, kind) if self.shards.sharded(kind) else None,
        )

    def _factories_now(self) -> list[AsyncSharedInformerFactory]:
        """The factories made so far."""
        with self._lock:
            return list(self._factories.values())

    def _start(self, factory: AsyncSharedInformerFactory) -> None:
        """Start ``factory``'s informers (the cache runs)."""
        raise NotImplementedError

    def _wrap(self, kind: type[Any], list_watch: AsyncListerWatcher[Any],
              ) -> AsyncListerWatcher[Any]:
        """``list_watch`` of ``kind`` serving this member's ranges (see :class:`CacheShards`)."""
        raise NotImplementedError

    async def _wait_synced(
        self, informers: builtins.list[AsyncSharedIndexInformer[T]], resource: Resource[T]
    ) -> None:
        """Wait for ``informers`` to sync; ``TimeoutError`` after ``sync_timeout``."""
        raise NotImplementedError

    # -- Reader -----------------------------------------------------------------------------

    async def get(self, kind: type[T], namespace: str, name: str) -> T:
        """A copy of the cached object ``namespace/name``.

        Raises:
            NotFoundError: it is not in the cache.
            NamespaceNotCachedError: ``namespace`` is not watched.
            CacheNotStartedError: the cache has not been started.
            TimeoutError: ``kind``'s informer did not sync within ``sync_timeout``.
        """
        resource = self.kinds.resource_for(kind)
        require_namespace(resource, namespace)
        informers = await self._synced(kind, resource, namespace if resource.namespaced else None)
        return self._get_from(informers[0], resource, namespace, name)

    async def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """Copies of the cached objects matching ``labels`` in ``namespace`` (``None``: every
        watched namespace), sorted by namespace and name (errors as :meth:`get`)."""
        resource = self.kinds.resource_for(kind)
        namespace = namespace if resource.namespaced else None
        return self._list_from(await self._synced(kind, resource, namespace), namespace, labels)

    async def _synced(
        self, kind: type[T], resource: Resource[T], namespace: str | None
    ) -> builtins.list[AsyncSharedIndexInformer[T]]:
        """The informers holding ``namespace`` (all of them for ``None``), synced."""
        watched = self._watched(kind, resource, namespace)
        with self._lock:
            started, shut_down = self._started, self._shut_down
        if not started or shut_down:
            raise self._not_started(resource, shut_down)
        informers = self._holding(self.informers_for(kind), watched, namespace)
        await self._wait_synced(informers, resource)
        return informers
