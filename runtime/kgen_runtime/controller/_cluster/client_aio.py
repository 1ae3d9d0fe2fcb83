"""The asyncio twin of :mod:`.client`: a client typed by model class,
reading from the async informer cache and writing through the async transport.

::

    foo = await client.get(Foo, "default", "example-foo")    # from the cache: a copy
    foo.status = FooStatus(available_replicas=1)
    await client.update_status(foo)

The contract is :class:`~kgen_runtime.controller.Client`'s (kinds from model classes through
the same :class:`Kinds`, copies returned, sorted lists, namespaces required alike). Reads
from an :class:`~kgen_runtime.controller.AsyncInformerCache` do no I/O; writes, and reads
from :class:`AsyncAPIReader`, are requests on the async transport.
"""

from __future__ import annotations

import builtins
from typing import Any, Protocol, TypeVar

from kgen_runtime.controller._cluster.client import (
    Kinds,
    LabelsLike,
    object_name,
    require_namespace,
    sort_by_key,
)
from kgen_runtime.labels import as_selector
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import (
    AsyncResourceClient,
    AsyncStatusClientMixin,
    AsyncTransport,
    ListOptions,
    PatchBody,
    PatchType,
    Preconditions,
    PropagationPolicy,
)

__all__ = ["AsyncAPIReader", "AsyncClient", "AsyncReader"]

T = TypeVar("T", bound=KubeObject)


class AsyncReader(Protocol):
    """Reads objects by model class, awaited (the twin of ``Reader``)."""

    async def get(self, kind: type[T], namespace: str, name: str) -> T:
        """The object ``namespace/name``; ``NotFoundError`` if there is none."""
        ...

    async def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """The objects matching ``labels`` in ``namespace`` (``None``: all), sorted."""
        ...


class AsyncAPIReader:
    """An :class:`AsyncReader` asking the API server every time: consistent, a request per
    call (the twin of :class:`~kgen_runtime.controller.APIReader`)."""

    def __init__(self, transport: AsyncTransport, kinds: Kinds) -> None:
        self.transport = transport
        self.kinds = kinds

    async def get(self, kind: type[T], namespace: str, name: str) -> T:
        resource = self.kinds.resource_for(kind)
        require_namespace(resource, namespace)
        return await self._client(resource, namespace).get(name)

    async def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        resource = self.kinds.resource_for(kind)
        selector = as_selector(labels)
        options = ListOptions(label_selector=None if selector.empty() else str(selector))
        items: builtins.list[T] = list((await self._client(resource, namespace).list(options))
                                       .items)
        return sort_by_key(items)

    def _client(
        self, resource: Resource[T], namespace: str | None
    ) -> AsyncResourceClient[T, Any]:
        return AsyncResourceClient(self.transport, resource, namespace or None)


class AsyncClient:
    """Reads from ``reader`` (the live API by default), writes to the API server; arguments
    and errors as :class:`~kgen_runtime.controller.Client`'s. Use it from one event loop
    (its transport's)."""

    def __init__(
        self,
        transport: AsyncTransport,
        kinds: Kinds,
        *,
        reader: AsyncReader | None = None,
        field_manager: str | None = None,
    ) -> None:
        self.transport = transport
        self.kinds = kinds
        self.reader: AsyncReader = (
            reader if reader is not None else AsyncAPIReader(transport, kinds))
        self.field_manager = field_manager

    # -- reads ------------------------------------------------------------------------------

    async def get(self, kind: type[T], namespace: str, name: str) -> T:
        """The object ``namespace/name`` from the reader."""
        return await self.reader.get(kind, namespace, name)

    async def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """The objects matching ``labels`` in ``namespace`` from the reader, sorted."""
        return await self.reader.list(kind, namespace=namespace, labels=labels)

    # -- writes -----------------------------------------------------------------------------

    async def create(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """Create ``obj``; the server's copy is returned."""
        return await self._for(obj).create(obj, dry_run=dry_run,
                                           field_manager=field_manager or self.field_manager)

    async def update(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """Replace ``obj``; a stale ``resourceVersion`` raises ``ConflictError``."""
        return await self._for(obj).update(obj, dry_run=dry_run,
                                           field_manager=field_manager or self.field_manager)

    async def patch(
        self,
        obj: T,
        patch: PatchBody,
        *,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        """Patch the object named like ``obj`` (kind, namespace, name) with ``patch``."""
        return await self._for(obj).patch(
            object_name(obj), patch, patch_type=patch_type, dry_run=dry_run,
            field_manager=field_manager or self.field_manager)

    async def update_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """Replace ``obj``'s status through the status subresource."""
        return await self._status(obj).update_status(
            obj, dry_run=dry_run, field_manager=field_manager or self.field_manager)

    async def patch_status(
        self,
        obj: T,
        patch: PatchBody,
        *,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        """Patch the status of the object named like ``obj``."""
        return await self._status(obj).patch_status(
            object_name(obj), patch, patch_type=patch_type, dry_run=dry_run,
            field_manager=field_manager or self.field_manager)

    async def delete(
        self,
        obj: KubeObject,
        *,
        propagation_policy: PropagationPolicy | None = None,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete the object named like ``obj`` (it may linger while it has finalizers)."""
        await self._for(obj).delete(object_name(obj), propagation_policy=propagation_policy,
                                    preconditions=preconditions, dry_run=dry_run)

    # -- machinery --------------------------------------------------------------------------

    def _for(self, obj: T) -> AsyncStatusClientMixin[T, Any]:
        resource = self.kinds.resource_for(type(obj))
        require_namespace(resource, obj.metadata.namespace)
        return AsyncStatusClientMixin(self.transport, resource, obj.metadata.namespace)

    def _status(self, obj: T) -> AsyncStatusClientMixin[T, Any]:
        client = self._for(obj)
        if not client.resource.status_subresource:
            raise ValueError(f"{client.resource.plural} have no status subresource")
        return client
