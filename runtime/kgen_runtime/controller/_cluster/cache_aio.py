"""The asyncio twin of :mod:`.cache`: the async manager's informer cache.

::

    cache = AsyncInformerCache(async_transport, kinds, CacheOptions(namespaces=["team-a"]))
    cache.start()                         # on the running loop
    foo = await cache.get(Foo, "team-a", "x")   # no suspension once Foo's informer synced

The contract is :class:`~kgen_runtime.controller.InformerCache`'s (one informer per kind and
namespace, made lazily, started with the cache or at once; reads return sorted deep copies;
:class:`NamespaceNotCachedError`, :class:`CacheNotStartedError`): both are the same
informers and reads (:class:`~.cache_reads_aio.AsyncCacheReads`, from which the blocking
one is generated), run on tasks here. Reads are coroutines only because the first read of a
kind may have to wait for its informer to sync; a read of a synced kind returns without
suspending and never does I/O. Use it from one event loop.
"""

from __future__ import annotations

import asyncio
import builtins
from typing import Any, TypeVar

from kgen_runtime.cache import (
    AsyncListerWatcher,
    AsyncSharedIndexInformer,
    AsyncSharedInformerFactory,
)
from kgen_runtime.controller._cluster.cache_core import CacheOptions
from kgen_runtime.controller._cluster.cache_reads_aio import AsyncCacheReads
from kgen_runtime.controller._cluster.kinds import Kinds
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import AsyncTransport
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncInformerCache"]

T = TypeVar("T", bound=KubeObject)

#: How often a read waiting for a lazily started informer looks at it.
_SYNC_POLL_SECONDS = 0.01


class AsyncInformerCache(AsyncCacheReads):
    """Async shared informers per kind and namespace behind an
    :class:`~kgen_runtime.controller.AsyncReader` (see the module docstring). Handlers added
    with :meth:`add_handler` are called on the loop: plain ones must not block.

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
        super().__init__(transport, kinds, options, clock)

    def start(self) -> None:
        """Start the informers made so far on the running loop (later ones start when made)."""
        with self._lock:
            if self._shut_down:
                return
            self._started = True
            factories = list(self._factories.values())
        for factory in factories:
            factory.start()

    async def wait_for_cache_sync(
        self, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """Wait for the started informers to sync; the outcome per resource."""
        result: dict[GroupVersionResource, bool] = {}
        for factory in self._factories_now():
            for gvr, ok in (await factory.wait_for_cache_sync(timeout)).items():
                result[gvr] = result.get(gvr, True) and ok
        return result

    async def shutdown(self) -> None:
        """Cancel every informer and wait for it; later informers never start."""
        with self._lock:
            self._shut_down = True
            factories = list(self._factories.values())
        for factory in factories:
            await factory.shutdown()

    def _start(self, factory: AsyncSharedInformerFactory) -> None:
        factory.start()

    def _wrap(self, kind: type[Any], list_watch: AsyncListerWatcher[Any],
              ) -> AsyncListerWatcher[Any]:
        return self.shards.wrap_async(kind, list_watch)

    async def _wait_synced(
        self, informers: builtins.list[AsyncSharedIndexInformer[T]], resource: Resource[T]
    ) -> None:
        """Returns without suspending once every informer synced; polls until then."""
        if all(i.has_synced() for i in informers):
            return
        timeout = self.options.sync_timeout
        try:
            async with asyncio.timeout(timeout):
                while not all(i.has_synced() for i in informers):
                    await asyncio.sleep(_SYNC_POLL_SECONDS)
        except TimeoutError:
            raise TimeoutError(
                f"the cache of {resource.plural} did not sync within {timeout}s") from None
