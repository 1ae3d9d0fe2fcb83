"""A client typed by model class, whose reads may come from a cache (controller-runtime's
``client`` package).

Reads are split from writes. A :class:`AsyncReader` has ``get`` and ``list``; the informer
cache (:class:`~kgen_runtime.controller.AsyncInformerCache`), the live
:class:`AsyncAPIReader` and :class:`AsyncClient` itself all are one, so a reconciler does not
care which it reads from. A :class:`AsyncClient` reads from the reader it was given (the
manager's cache) and writes to the API server::

    foo = await client.get(Foo, "default", "example-foo")      # a copy: safe to change
    deployments = await client.list(Deployment, namespace="default", labels={"app": "nginx"})
    foo.metadata.labels = {"seen": "yes"}
    foo = await client.update(foo)                              # the server's copy
    foo.status = FooStatus(available_replicas=1)
    await client.update_status(foo)
    await client.patch(foo, {"metadata": {"annotations": {"a": "b"}}})
    await client.delete(foo)

Contract:

* The kind of a call comes from the model class (``client.get(Foo, ...)``) or the object
  (writes), mapped to its resource by the :class:`~kgen_runtime.controller.Kinds` (the
  scheme and REST mapper).
* Objects returned are the caller's (copies when read from a cache); objects passed in are
  only read.
* ``get`` raises :class:`~kgen_runtime.rest.errors.NotFoundError`; ``list`` returns the
  objects sorted by namespace and name, as the API server does, from every reader.
* A namespaced kind needs a namespace for ``get`` and the writes (``ValueError``);
  ``list`` without one lists every namespace the reader sees. A cluster-scoped kind ignores
  the namespace.

What the blocking and the asyncio client share without I/O is in :mod:`.kinds`.
"""

from __future__ import annotations

import builtins
from typing import Any, Protocol, TypeVar

from kgen_runtime.controller._cluster.kinds import (
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
    ListOptions,
    PatchBody,
    PatchType,
    Preconditions,
    PropagationPolicy,
)
from kgen_runtime.rest._request_aio import AsyncTransport
from kgen_runtime.rest.client_aio import AsyncResourceClient, AsyncStatusClientMixin

__all__ = ["AsyncAPIReader", "AsyncClient", "AsyncReader"]

T = TypeVar("T", bound=KubeObject)


class AsyncReader(Protocol):
    """Reads objects by model class (``client.Reader``)."""

    async def get(self, kind: type[T], namespace: str, name: str) -> T:
        """The object ``namespace/name``; ``NotFoundError`` if there is none."""
        ...

    async def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """The objects matching ``labels`` in ``namespace`` (``None``: all), sorted."""
        ...


class AsyncAPIReader:
    """A :class:`AsyncReader` asking the API server every time (``manager.GetAPIReader()``):
    consistent, but a request per call. As safe to share as its transport."""

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
        found = await self._client(resource, namespace).list(options)
        items: builtins.list[T] = list(found.items)
        return sort_by_key(items)

    def _client(
        self, resource: Resource[T], namespace: str | None
    ) -> AsyncResourceClient[T, Any]:
        return AsyncResourceClient(self.transport, resource, namespace or None)


class AsyncClient:
    """Reads from ``reader`` (the live API by default), writes to the API server
    (``client.Client``). See the module docstring. As safe to share as its transport (and
    reader).

    Args:
        transport: Where writes (and default reads) go.
        kinds: Maps model classes to resources.
        reader: Where ``get``/``list`` read; an :class:`AsyncAPIReader` when ``None``.
        field_manager: Sent with every write unless a call names its own.
    """

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
            reader if reader is not None else AsyncAPIReader(transport, kinds)
        )
        self.field_manager = field_manager

    # -- reads ------------------------------------------------------------------------------

    async def get(self, kind: type[T], namespace: str, name: str) -> T:
        """The object ``namespace/name`` from the reader (see :class:`AsyncReader`)."""
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
        return await self._for(obj).create(
            obj, dry_run=dry_run, field_manager=field_manager or self.field_manager
        )

    async def update(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """Replace ``obj``; a stale ``resourceVersion`` raises ``ConflictError``."""
        return await self._for(obj).update(
            obj, dry_run=dry_run, field_manager=field_manager or self.field_manager
        )

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
            field_manager=field_manager or self.field_manager,
        )

    async def update_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """Replace ``obj``'s status through the status subresource."""
        return await self._status(obj).update_status(
            obj, dry_run=dry_run, field_manager=field_manager or self.field_manager
        )

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
            field_manager=field_manager or self.field_manager,
        )

    async def delete(
        self,
        obj: KubeObject,
        *,
        propagation_policy: PropagationPolicy | None = None,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete the object named like ``obj`` (it may linger while it has finalizers)."""
        await self._for(obj).delete(
            object_name(obj), propagation_policy=propagation_policy,
            preconditions=preconditions, dry_run=dry_run,
        )

    # -- machinery --------------------------------------------------------------------------

    def _for(self, obj: T) -> AsyncStatusClientMixin[T, Any]:
        resource = self.kinds.resource_for(obj.__class__)  # a lazy object: its model class
        require_namespace(resource, obj.metadata.namespace)
        return AsyncStatusClientMixin(self.transport, resource, obj.metadata.namespace)

    def _status(self, obj: T) -> AsyncStatusClientMixin[T, Any]:
        client = self._for(obj)
        if not client.resource.status_subresource:
            raise ValueError(f"{client.resource.plural} have no status subresource")
        return client
