"""Bases of generated async clientsets: the asyncio twin of :mod:`kgen_runtime.rest.clientset`.

A generated package has an ``AsyncClientset`` beside its ``Clientset``, naming the same
group-versions with their async clients::

    async with AsyncClientset.for_config(Config.load()) as clientset:
        foo = await clientset.samplecontroller_v1alpha1.foos("default").get("example")
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from kgen_runtime.rest._request_aio import AsyncTransport
from kgen_runtime.rest.config import Config
from kgen_runtime.rest.dynamic_aio import AsyncDynamicClient
from kgen_runtime.rest.transport_aio import AsyncHTTPTransport

__all__ = ["AsyncBaseClientset", "AsyncGroupVersionClient"]


class AsyncGroupVersionClient:
    """The async clients of one API group-version, over a shared transport."""

    def __init__(self, transport: AsyncTransport) -> None:
        self.transport = transport


class AsyncBaseClientset:
    """Holds the async transport every group-version client of a clientset uses.

    Construct over any :class:`AsyncTransport` (the async fake), or with :meth:`for_config`
    over a new :class:`AsyncHTTPTransport`, which :meth:`aclose` (or leaving an
    ``async with`` block) then closes. Use it from one event loop.
    """

    def __init__(self, transport: AsyncTransport) -> None:
        self.transport = transport
        self._owned: AsyncHTTPTransport | None = None

    @classmethod
    def for_config(cls, config: Config) -> Self:
        """A clientset over one new async HTTP transport to ``config.host``."""
        transport = AsyncHTTPTransport(config)
        clientset = cls(transport)
        clientset._owned = transport
        return clientset

    @property
    def dynamic(self) -> AsyncDynamicClient:
        """An async dynamic client over the same transport."""
        return AsyncDynamicClient(self.transport)

    async def aclose(self) -> None:
        """Close the transport if :meth:`for_config` created it; otherwise do nothing."""
        if self._owned is not None:
            await self._owned.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
