"""The asyncio twin of :mod:`kgen_runtime.rest.dynamic`: any resource, unstructured, awaited::

foos = AsyncDynamicClient(transport).resource(FOO_GVR).namespace("default")
foo = await foos.get("example")
"""

from __future__ import annotations

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured, UnstructuredList
from kgen_runtime.rest._request_aio import AsyncTransport
from kgen_runtime.rest.client_aio import AsyncScaleClientMixin, AsyncStatusClientMixin
from kgen_runtime.rest.dynamic import unstructured_resource

__all__ = ["AsyncDynamicClient", "AsyncDynamicResourceClient"]


class AsyncDynamicResourceClient(
    AsyncStatusClientMixin[Unstructured, UnstructuredList],
    AsyncScaleClientMixin[Unstructured, UnstructuredList],
):
    """An :class:`AsyncResourceClient` of unstructured objects."""

    def namespace(self, namespace: str) -> AsyncDynamicResourceClient:
        """The same resource in ``namespace`` (client-go's ``Namespace(ns)``)."""
        return AsyncDynamicResourceClient(self._transport, self._resource, namespace)


class AsyncDynamicClient:
    """Entry point of the async dynamic client."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    def resource(
        self, gvr: GroupVersionResource, *, namespaced: bool = True
    ) -> AsyncDynamicResourceClient:
        """The resource ``gvr`` across all namespaces; ``.namespace(ns)`` narrows it."""
        return AsyncDynamicResourceClient(
            self._transport, unstructured_resource(gvr, namespaced), None
        )
