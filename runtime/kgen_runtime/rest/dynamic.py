"""The dynamic client: any resource, as :class:`~kgen_runtime.meta.Unstructured` objects.

client-go's ``dynamic`` package. The verbs are :class:`ResourceClient`'s (plus the status and
scale subresources, which the server refuses with 404 for kinds that lack them); only the
object type differs::

    foos = DynamicClient(transport).resource(FOO_GVR).namespace("default")
    foo = foos.get("example")
    foo["spec"]["replicas"] = 3
    foos.update(foo)

Objects written through it must carry their own ``apiVersion`` and ``kind``.
"""

from __future__ import annotations

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured, UnstructuredList
from kgen_runtime.resource import Resource
from kgen_runtime.rest._request import Transport
from kgen_runtime.rest.client import ScaleClientMixin, StatusClientMixin

__all__ = ["DynamicClient", "DynamicResourceClient"]


class DynamicResourceClient(
    StatusClientMixin[Unstructured, UnstructuredList],
    ScaleClientMixin[Unstructured, UnstructuredList],
):
    """A :class:`ResourceClient` of unstructured objects; see the module docstring."""

    def namespace(self, namespace: str) -> DynamicResourceClient:
        """The same resource in ``namespace`` (client-go's ``Namespace(ns)``)."""
        return DynamicResourceClient(self._transport, self._resource, namespace)


class DynamicClient:
    """Entry point of the dynamic client; as thread-safe as its transport."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def resource(
        self, gvr: GroupVersionResource, *, namespaced: bool = True
    ) -> DynamicResourceClient:
        """The resource ``gvr``; ``namespaced`` says whether paths carry a namespace.

        The returned client works across all namespaces (or on a cluster-scoped resource);
        call ``.namespace(ns)`` on it for one namespace.
        """
        return DynamicResourceClient(self._transport, unstructured_resource(gvr, namespaced), None)


def unstructured_resource(gvr: GroupVersionResource, namespaced: bool) -> Resource[Unstructured]:
    """The resource ``gvr`` served as unstructured objects (shared with the async client)."""
    return Resource(
        group=gvr.group,
        version=gvr.version,
        kind="",
        plural=gvr.resource,
        singular="",
        namespaced=namespaced,
        model=Unstructured,
        list_model=UnstructuredList,
    )
