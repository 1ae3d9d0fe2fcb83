"""The asyncio twin of :mod:`.cluster`: what an
:class:`~kgen_runtime.controller.AsyncManager` knows of its cluster.

::

    async with AsyncClientset.for_config(config) as clientset:
        cluster = AsyncCluster(clientset.transport, scheme, cache=CacheOptions(namespaces=["a"]))
        manager = AsyncManager(cluster=cluster)
        ...
        foo = await manager.cluster.client.get(Foo, "a", "x")   # from the cache

The transport belongs to the caller (close it after the manager stopped), as for
:class:`~kgen_runtime.controller.Cluster`.
"""

from __future__ import annotations

from kgen_runtime.controller._cluster.cache import CacheOptions
from kgen_runtime.controller._cluster.cache_aio import AsyncInformerCache
from kgen_runtime.controller._cluster.client import Kinds
from kgen_runtime.controller._cluster.client_aio import AsyncAPIReader, AsyncClient
from kgen_runtime.controller._cluster.cluster import builtin_scheme
from kgen_runtime.rest import AsyncTransport
from kgen_runtime.scheme import RESTMapper, Scheme
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncCluster"]


class AsyncCluster:
    """An async transport, a scheme and what is built on them; arguments as
    :class:`~kgen_runtime.controller.Cluster`'s, with an :class:`AsyncClock`.

    Attributes:
        cache: The :class:`AsyncInformerCache`; the manager starts it and stops it last.
        client: An :class:`AsyncClient` reading from :attr:`cache`, writing to the server.
        api_reader: Reads from the API server (consistent, a request per read).
    """

    def __init__(
        self,
        transport: AsyncTransport,
        scheme: Scheme | None = None,
        *,
        mapper: RESTMapper | None = None,
        cache: CacheOptions | None = None,
        field_manager: str | None = None,
        clock: AsyncClock = ASYNC_REAL_CLOCK,
    ) -> None:
        self.transport = transport
        self.kinds = Kinds(scheme if scheme is not None else builtin_scheme(), mapper)
        self.cache = AsyncInformerCache(transport, self.kinds, cache, clock=clock)
        self.api_reader = AsyncAPIReader(transport, self.kinds)
        self.client = AsyncClient(transport, self.kinds, reader=self.cache,
                                  field_manager=field_manager)

    @property
    def scheme(self) -> Scheme:
        return self.kinds.scheme
