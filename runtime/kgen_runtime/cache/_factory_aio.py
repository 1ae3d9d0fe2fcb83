"""The asyncio twin of :mod:`kgen_runtime.cache._factory`: one async informer per resource.

::

    factory = AsyncSharedInformerFactory(async_clientset.transport)
    foos = factory.informer_for(FOO_RESOURCE)
    foos.add_event_handler(on_add=enqueue, on_delete=enqueue)      # plain or async def
    factory.start()                                                 # tasks on this loop
    assert all((await factory.wait_for_cache_sync(timeout=60)).values())
    NamespacedLister(foos.indexer, FOO_RESOURCE.gvr)                # reads never await
    ...
    await factory.shutdown()

The contract is :class:`~kgen_runtime.cache.SharedInformerFactory`'s (the same informer for
the same resource; options for every informer; ``start`` idempotent, starting only what is
new), with tasks instead of threads: ``start`` needs a running loop, ``shutdown`` cancels and
awaits every informer task. Use a factory from one event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

from kgen_runtime.cache._fifo import TransformFunc
from kgen_runtime.cache._informer_aio import AsyncSharedIndexInformer
from kgen_runtime.cache._lister import GenericLister
from kgen_runtime.cache._listwatch import TweakListOptions
from kgen_runtime.cache._reflector import ReflectorOptions
from kgen_runtime.cache._reflector_aio import AsyncListerWatcher, AsyncListWatch
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeObject, Unstructured
from kgen_runtime.resource import Resource
from kgen_runtime.rest import AsyncDynamicClient, AsyncResourceClient, AsyncTransport
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncGenericInformer", "AsyncResourceInformer", "AsyncSharedInformerFactory"]

ObjT = TypeVar("ObjT", bound=KubeObject)
T = TypeVar("T")
L = TypeVar("L")

#: An informer is shared per resource and object type: a typed and a dynamic informer of one
#: resource are two informers, as in the blocking factory.
_Key = tuple[GroupVersionResource, type]

#: How often ``wait_for_cache_sync`` looks at the informers (client-go polls every 100 ms).
_SYNC_POLL_SECONDS = 0.01


class AsyncSharedInformerFactory:
    """Makes and runs the async informers of one process (see the module docstring).

    Args:
        transport: Where the informers list and watch.
        resync_period: Default resync period of every informer (0: never).
        namespace: Watch one namespace (``None``: all).
        tweak_list_options: Applied to every list and watch (e.g. a label selector).
        reflector_options: How every reflector lists, watches and backs off.
        transform: Applied to every object before it is cached.
        clock: Time of the reflectors' backoff and resync.
        wrap_list_watch: Wraps every informer's list-watch (e.g. in an
            :class:`~kgen_runtime.sharding.AsyncShardedListWatch`).
    """

    def __init__(
        self,
        transport: AsyncTransport,
        *,
        resync_period: float = 0.0,
        namespace: str | None = None,
        tweak_list_options: TweakListOptions | None = None,
        reflector_options: ReflectorOptions | None = None,
        transform: TransformFunc | None = None,
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        wrap_list_watch: (
            Callable[[AsyncListerWatcher[Any]], AsyncListerWatcher[Any]] | None
        ) = None,
    ) -> None:
        self._transport = transport
        self._wrap = wrap_list_watch
        self._resync_period = resync_period
        self._namespace = namespace
        self._tweak = tweak_list_options
        self._reflector_options = reflector_options
        self._transform = transform
        self._clock = clock
        self._informers: dict[_Key, AsyncSharedIndexInformer[Any]] = {}
        self._tasks: dict[_Key, asyncio.Task[None]] = {}
        self._shut_down = False

    def informer_for(self, resource: Resource[ObjT]) -> AsyncSharedIndexInformer[ObjT]:
        """The informer of ``resource``, made on first request and shared afterwards."""
        client = AsyncResourceClient[Any, Any](self._transport, resource, self._namespace)
        return self._informer((resource.gvr, resource.model), client)

    def for_resource(self, gvr: GroupVersionResource) -> AsyncGenericInformer[Unstructured]:
        """An informer and lister for any resource, through the dynamic client.

        Objects are :class:`~kgen_runtime.meta.Unstructured`.
        """
        dynamic = AsyncDynamicClient(self._transport).resource(gvr)
        client = dynamic.namespace(self._namespace) if self._namespace else dynamic
        informer: AsyncSharedIndexInformer[Unstructured] = self._informer(
            (gvr, Unstructured), client
        )
        return AsyncGenericInformer(informer, GenericLister(informer.indexer, gvr))

    def _informer(self, key: _Key, client: Any) -> AsyncSharedIndexInformer[Any]:
        informer = self._informers.get(key)
        if informer is None:
            gvr = key[0]
            list_watch: AsyncListerWatcher[Any] = AsyncListWatch.from_client(client,
                                                                           tweak=self._tweak)
            if self._wrap is not None:
                list_watch = self._wrap(list_watch)
            informer = AsyncSharedIndexInformer(
                list_watch,
                resync_period=self._resync_period,
                name=f"{gvr.resource}.{gvr.group or 'core'}",
                clock=self._clock,
                reflector_options=self._reflector_options,
            )
            if self._transform is not None:
                informer.set_transform(self._transform)
            self._informers[key] = informer
        return informer

    def start(self) -> None:
        """Start every informer not started yet, each as a task of the running loop."""
        if self._shut_down:
            return
        loop = asyncio.get_running_loop()
        for key, informer in self._informers.items():
            if key not in self._tasks:
                self._tasks[key] = loop.create_task(informer.run(), name=informer.name)

    async def wait_for_cache_sync(
        self, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """Wait until every started informer synced, or ``timeout`` seconds passed; which
        synced. Reads only; never holds the loop.

        A resource with both a typed and a dynamic informer counts as synced when both are.
        """
        started = [(key, self._informers[key]) for key in self._tasks]
        try:
            async with asyncio.timeout(timeout):
                while not all(informer.has_synced() for _, informer in started):
                    await asyncio.sleep(_SYNC_POLL_SECONDS)
        except TimeoutError:
            pass
        result: dict[GroupVersionResource, bool] = {}
        for (gvr, _), informer in started:
            result[gvr] = result.get(gvr, True) and informer.has_synced()
        return result

    async def shutdown(self) -> None:
        """Cancel every informer task and wait for them; later ``start`` calls do nothing."""
        self._shut_down = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass(frozen=True, slots=True)
class AsyncGenericInformer(Generic[T]):
    """An async informer with a generic lister (client-go's ``GenericInformer``)."""

    informer: AsyncSharedIndexInformer[T]
    lister: GenericLister[T]


class AsyncResourceInformer(Generic[T, L]):
    """Base of generated per-kind async informers: ``.informer`` and ``.lister`` from an
    async factory (the twin of :class:`~kgen_runtime.cache.ResourceInformer`; the listers
    are the same classes, over the async informer's indexer)."""

    resource: ClassVar[Resource[Any]]
    lister_class: ClassVar[Callable[..., Any]]

    def __init__(self, factory: AsyncSharedInformerFactory) -> None:
        self._factory = factory

    @property
    def informer(self) -> AsyncSharedIndexInformer[T]:
        """The shared informer (registered with the factory on first access)."""
        return cast(AsyncSharedIndexInformer[T], self._factory.informer_for(self.resource))

    @property
    def lister(self) -> L:
        """A lister over the shared informer's cache; reads never await."""
        return cast(L, self.lister_class(self.informer.indexer))
