"""The asyncio twin of :mod:`.cache`: the async manager's informer cache.

::

    cache = AsyncInformerCache(async_transport, kinds, CacheOptions(namespaces=["team-a"]))
    cache.start()                         # on the running loop
    foo = await cache.get(Foo, "team-a", "x")   # no suspension once Foo's informer synced

The contract is :class:`~kgen_runtime.controller.InformerCache`'s (one informer per kind and
namespace, made lazily, started with the cache or at once; reads return sorted deep copies;
:class:`NamespaceNotCachedError`, :class:`CacheNotStartedError`), with the same layout and
read code (:class:`~kgen_runtime.controller._cluster.cache_core.CacheLayout`). Reads are
coroutines only because the first read of a kind may have to wait for its informer to sync;
a read of a synced kind returns without suspending and never does I/O. Use it from one
event loop.
"""

from __future__ import annotations

import asyncio
import builtins
from typing import Any, TypeVar

from kgen_runtime.cache import (
    AsyncSharedIndexInformer,
    AsyncSharedInformerFactory,
    ResourceEventHandler,
    ResourceEventHandlerRegistration,
)
from kgen_runtime.controller._cluster.cache_core import CacheLayout, CacheOptions
from kgen_runtime.controller._cluster.kinds import Kinds, LabelsLike, require_namespace
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import AsyncTransport
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncInformerCache"]

T = TypeVar("T", bound=KubeObject)

#: How often a read waiting for a lazily started informer looks at it.
_SYNC_POLL_SECONDS = 0.01


class AsyncInformerCache(CacheLayout):
    """Async shared informers per kind and namespace behind an
    :class:`~kgen_runtime.controller.AsyncReader` (see the module docstring).

    Implements what an :class:`~kgen_runtime.controller.AsyncManager` runs of an async
    informer factory (``start``, ``wait_for_cache_sync``, ``shutdown``).
    """

    def __init__(
        self,
        transport: AsyncTransport,
        kinds: Kinds,
        options: CacheOptions | None = None,
        *,
        clock: AsyncClock = ASYNC_REAL_CLOCK,
    ) -> None:
        super().__init__(kinds, options)
        self.transport = transport
        self._clock = clock
        self._factories: dict[tuple[type[Any], str | None], AsyncSharedInformerFactory] = {}
        self._started = False
        self._shut_down = False

    # -- informers --------------------------------------------------------------------------

    def informers_for(self, kind: type[T]) -> list[AsyncSharedIndexInformer[T]]:
        """``kind``'s informers, one per watched namespace, made (and, if the cache runs,
        started on the running loop) on first request."""
        resource = self.kinds.resource_for(kind)
        informers: list[AsyncSharedIndexInformer[T]] = []
        for namespace in self.namespaces_of(kind):
            factory = self._factories.get((kind, namespace))
            if factory is None:
                factory = self._new_factory(kind, namespace)
                self._factories[(kind, namespace)] = factory
            informers.append(factory.informer_for(resource))
            if self._started and not self._shut_down:
                factory.start()
        return informers

    def add_handler(
        self, kind: type[KubeObject], handler: ResourceEventHandler
    ) -> list[ResourceEventHandlerRegistration]:
        """Register ``handler`` on every informer of ``kind`` (its methods are called on the
        loop: plain ones must not block)."""
        return [informer.add_handler(handler) for informer in self.informers_for(kind)]

    def _made(self, kind: type[Any]) -> bool:
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
            wrap_list_watch=self.shards.wrap_async if self.shards.sharded(kind) else None,
        )

    # -- AsyncReader ------------------------------------------------------------------------

    async def get(self, kind: type[T], namespace: str, name: str) -> T:
        """A copy of the cached object ``namespace/name`` (errors as
        :meth:`InformerCache.get <kgen_runtime.controller.InformerCache.get>`)."""
        resource = self.kinds.resource_for(kind)
        require_namespace(resource, namespace)
        informers = await self._synced(kind, resource, namespace if resource.namespaced else None)
        return self._get_from(informers[0], resource, namespace, name)

    async def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """Copies of the cached objects matching ``labels`` in ``namespace`` (``None``: every
        watched namespace), sorted by namespace and name."""
        resource = self.kinds.resource_for(kind)
        namespace = namespace if resource.namespaced else None
        return self._list_from(await self._synced(kind, resource, namespace), namespace, labels)

    async def _synced(
        self, kind: type[T], resource: Resource[T], namespace: str | None
    ) -> builtins.list[AsyncSharedIndexInformer[T]]:
        """The informers holding ``namespace`` (all of them for ``None``), synced; awaits
        only while one of them has not synced yet."""
        watched = self._watched(kind, resource, namespace)
        if not self._started or self._shut_down:
            raise self._not_started(resource, self._shut_down)
        informers = self._holding(self.informers_for(kind), watched, namespace)
        if all(i.has_synced() for i in informers):
            return informers
        timeout = self.options.sync_timeout
        try:
            async with asyncio.timeout(timeout):
                while not all(i.has_synced() for i in informers):
                    await asyncio.sleep(_SYNC_POLL_SECONDS)
        except TimeoutError:
            raise TimeoutError(
                f"the cache of {resource.plural} did not sync within {timeout}s") from None
        return informers

    # -- running ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the informers made so far on the running loop (later ones start when made)."""
        if self._shut_down:
            return
        self._started = True
        for factory in list(self._factories.values()):
            factory.start()

    async def wait_for_cache_sync(
        self, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """Wait for the started informers to sync; the outcome per resource."""
        result: dict[GroupVersionResource, bool] = {}
        for factory in list(self._factories.values()):
            for gvr, ok in (await factory.wait_for_cache_sync(timeout)).items():
                result[gvr] = result.get(gvr, True) and ok
        return result

    async def shutdown(self) -> None:
        """Cancel every informer and wait for it; later informers never start."""
        self._shut_down = True
        for factory in list(self._factories.values()):
            await factory.shutdown()
