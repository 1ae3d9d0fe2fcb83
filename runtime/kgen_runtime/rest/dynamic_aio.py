"""The dynamic client: any resource, as :class:`~kgen_runtime.meta.Unstructured` objects.

client-go's ``dynamic`` package. The verbs are :class:`AsyncResourceClient`'s (plus the status
and scale subresources, which the server refuses with 404 for kinds that lack them); only the
object type differs::

    foos = AsyncDynamicClient(transport).resource(FOO_GVR).namespace("default")
    foo = await foos.get("example")
    foo["spec"]["replicas"] = 3
    await foos.update(foo)

Objects written through it must carry their own ``apiVersion`` and ``kind``.
"""

from __future__ import annotations

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured, UnstructuredList
from kgen_runtime.rest._request_aio import AsyncTransport
from kgen_runtime.rest._requests import unstructured_resource
from kgen_runtime.rest.client_aio import AsyncScaleClientMixin, AsyncStatusClientMixin

__all__ = ["AsyncDynamicClient", "AsyncDynamicResourceClient"]


class AsyncDynamicResourceClient(
    AsyncStatusClientMixin[Unstructured, UnstructuredList],
    AsyncScaleClientMixin[Unstructured, UnstructuredList],
):
    """A :class:`AsyncResourceClient` of unstructured objects; see the module docstring."""

    def namespace(self, namespace: str) -> AsyncDynamicResourceClient:
        """The same resource in ``namespace`` (client-go's ``Namespace(ns)``)."""
        return AsyncDynamicResourceClient(self._transport, self._resource, namespace)


class AsyncDynamicClient:
    """Entry point of the dynamic client; as safe to share as its transport."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    def resource(
        self, gvr: GroupVersionResource, *, namespaced: bool = True
    ) -> AsyncDynamicResourceClient:
        """The resource ``gvr``; ``namespaced`` says whether paths carry a namespace.

        The returned client works across all namespaces (or on a cluster-scoped resource);
        call ``.namespace(ns)`` on it for one namespace.
        """
        return AsyncDynamicResourceClient(
            self._transport, unstructured_resource(gvr, namespaced), None
        )
