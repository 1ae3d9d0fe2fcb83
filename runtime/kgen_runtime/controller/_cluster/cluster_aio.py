"""What a manager knows of the cluster it works on (controller-runtime's ``cluster.Cluster``):
the scheme, the informer cache, and clients over one transport.

::

    scheme = Scheme()
    kgen_runtime.api.scheme.add_to_scheme(scheme)     # built-in kinds
    foo_api.scheme.add_to_scheme(scheme)               # your kinds
    cluster = AsyncCluster(kube.transport, scheme, cache=CacheOptions(namespaces=["team-a"]))
    manager = AsyncManager(cluster=cluster)
    await manager.cluster.client.get(Foo, "team-a", "x")   # from the cache, started on demand

The transport belongs to the caller (close it after the manager stopped).
"""

from __future__ import annotations

from kgen_runtime.controller._cluster.cache_aio import AsyncInformerCache
from kgen_runtime.controller._cluster.cache_core import CacheOptions
from kgen_runtime.controller._cluster.client_aio import AsyncAPIReader, AsyncClient
from kgen_runtime.controller._cluster.kinds import Kinds, builtin_scheme
from kgen_runtime.rest._request_aio import AsyncTransport
from kgen_runtime.scheme import RESTMapper, Scheme
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncCluster"]


class AsyncCluster:
    """A transport, a scheme and what is built on them (see the module docstring).

    Args:
        transport: Where every request goes (one connection pool and rate limit).
        scheme: Maps model classes to kinds; by default one with every built-in kind of
            :mod:`kgen_runtime.api` (add your package's kinds to it).
        mapper: Maps kinds to resources; by default built from the scheme's resources.
        cache: What the informer cache watches (namespaces, per-kind selectors).
        field_manager: Sent with every write of :attr:`client`.
        clock: Time of the informers and the cache's waits.

    Attributes:
        cache: The :class:`AsyncInformerCache`; the manager starts it and stops it last.
        client: Reads from :attr:`cache`, writes to the API server.
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
        self.client = AsyncClient(
            transport, self.kinds, reader=self.cache, field_manager=field_manager
        )

    @property
    def scheme(self) -> Scheme:
        return self.kinds.scheme
