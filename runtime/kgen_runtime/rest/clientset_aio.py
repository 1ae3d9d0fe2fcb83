"""Bases of generated clientsets (client-go's ``kubernetes.Clientset`` and group clients).

A generated clientset names its group-versions and nothing else::

    class AsyncSamplecontrollerV1alpha1Client(AsyncGroupVersionClient):
        def foos(self, namespace: str) -> AsyncFooClient:
            return AsyncFooClient(self.transport, FOO_RESOURCE, namespace)

    class AsyncClientset(AsyncBaseClientset):
        @cached_property
        def samplecontroller_v1alpha1(self) -> AsyncSamplecontrollerV1alpha1Client:
            return AsyncSamplecontrollerV1alpha1Client(self.transport)

Every client of one clientset shares its transport, hence one connection pool and one
client-side rate limit, like client-go's clientsets built from one ``rest.Config``.
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
    """The clients of one API group-version, over a shared transport."""

    def __init__(self, transport: AsyncTransport) -> None:
        self.transport = transport


class AsyncBaseClientset:
    """Holds the transport every group-version client of a clientset uses.

    Construct over any transport (a fake, the test API server), or with :meth:`for_config`
    over a new :class:`AsyncHTTPTransport`, which :meth:`aclose` (or leaving its ``async with``
    block) then closes. As safe to share as that transport.
    """

    def __init__(self, transport: AsyncTransport) -> None:
        self.transport = transport
        self._owned: AsyncHTTPTransport | None = None

    @classmethod
    def for_config(cls, config: Config) -> Self:
        """A clientset over one new HTTP transport to ``config.host``."""
        transport = AsyncHTTPTransport(config)
        clientset = cls(transport)
        clientset._owned = transport
        return clientset

    @property
    def dynamic(self) -> AsyncDynamicClient:
        """A dynamic client over the same transport."""
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
