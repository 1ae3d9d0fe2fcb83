"""The generic typed client of one resource (client-go's ``gentype.Client``).

Generated clients subclass :class:`AsyncResourceClient` (or its subresource mixins, which
subclass it) and add no logic::

    class AsyncFooClient(AsyncStatusClientMixin[Foo, FooList]):
        \"\"\"Foos in one namespace.\"\"\"

    foos = AsyncFooClient(transport, FOO_RESOURCE, "default")
    foo = await foos.get("example")
    async for event in foos.watch(ListOptions(resource_version=rv)):
        ...

A client is a pure function of its transport, resource and namespace: it holds no other state,
so it is as safe to share as its transport, cheap to create, and behaves the same over the real
HTTP transport, the in-process test API server and the fake clientset. Every verb's request and
decoding come from the sans-I/O :class:`~kgen_runtime.rest._requests.ResourceRequests`.

Contracts shared by every verb:

* Responses are decoded straight from bytes into the resource's model classes; the returned
  objects are new and owned by the caller (safe to mutate).
* Objects passed in are only read (serialised), never modified. An empty ``apiVersion``/``kind``
  is filled in from the resource on the wire.
* An error status raises the matching :class:`~kgen_runtime.rest.errors.ApiError`; network
  failures raise ``ConnectionError``/``TimeoutError`` (see the transport). Cancelling a
  coroutine's call cancels its request.
* A namespaced resource's client without a namespace lists and watches across all namespaces;
  single-object verbs then raise ``ValueError``. For a cluster-scoped resource the namespace is
  ignored.
* Writes accept ``dry_run`` (``dryRun=All``), ``field_manager`` and ``field_validation``
  (``Ignore``/``Warn``/``Strict``).

Decoding a response runs in the caller (for coroutines, on the event loop) in one step: about
20 µs per object, so a list of 500 (the informers' page size) takes ~10 ms, an unpaged list of
5,000 ~100 ms. A worker thread would not help a loop: pydantic-core holds the GIL for a whole
decode. Page big lists (``ListOptions(limit=...)``) where latency matters.
"""

from __future__ import annotations

from typing import Any, TypeVar

from kgen_runtime.apply import ObjectApplyConfiguration
from kgen_runtime.meta import KubeList, KubeModel, KubeObject, WireEventFilter, WireFilter
from kgen_runtime.resource import Resource
from kgen_runtime.rest._request_aio import AsyncResponse, AsyncTransport
from kgen_runtime.rest._requests import (
    FieldValidation,
    PatchBody,
    PatchType,
    Preconditions,
    PropagationPolicy,
    ResourceRequests,
    Verb,
    watch_read_timeout,
)
from kgen_runtime.rest._watch_aio import AsyncStreamWatcher
from kgen_runtime.rest.errors import api_error_from_response
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.rest.scale import Scale

__all__ = ["AsyncResourceClient", "AsyncScaleClientMixin", "AsyncStatusClientMixin"]
# The sans-I/O core's types, re-exported here as the clients' vocabulary (kept apart so that
# both this list and its generated twin's are sorted).
__all__ += [
    "FieldValidation",
    "PatchBody",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "watch_read_timeout",
]

T = TypeVar("T", bound=KubeObject)
TList = TypeVar("TList", bound=KubeList[Any])
R = TypeVar("R", bound=KubeModel)


class AsyncResourceClient(ResourceRequests[T, TList]):
    """Get, list, watch, create, update, patch, apply and delete one resource's objects.

    Args:
        transport: Where requests go (HTTP, test server or fake).
        resource: The kind served; its ``model``/``list_model`` decode responses.
        namespace: The namespace of every request; ``None`` or ``""`` for all namespaces.
    """

    def __init__(
        self, transport: AsyncTransport, resource: Resource[T], namespace: str | None = None
    ) -> None:
        super().__init__(resource, namespace)
        self._transport = transport

    # -- reads ------------------------------------------------------------------------------

    async def get(self, name: str, *, resource_version: str | None = None) -> T:
        """The object called ``name``; ``resource_version="0"`` allows a cached answer."""
        return await self._send(self._get(name, resource_version))

    async def list(
        self,
        options: ListOptions | None = None,
        *,
        keep: WireFilter | None = None,
        lazy: bool = False,
    ) -> TList:
        """One page of objects, in the server's order.

        Everything matching unless ``options.limit`` is set; then pass the returned
        ``metadata.continue_`` back as ``continue_`` for the next page. ``keep``, if given,
        is asked with each object's wire document before it is built: the objects it
        rejects are left out, never built (a client-side filter's, e.g.
        :class:`~kgen_runtime.sharding.OwnerShardedListWatch`). With ``lazy`` the items
        stay their wire documents until first touched (what informers cache:
        :mod:`kgen_runtime.meta._lazy`), and a document that does not build raises on that
        touch instead of here.
        """
        return await self._send(self._list(options, keep, lazy))

    def watch(
        self,
        options: ListOptions | None = None,
        *,
        read_timeout: float | None = None,
        keep: WireEventFilter | None = None,
        lazy: bool = False,
    ) -> AsyncStreamWatcher[T]:
        """Open a watch; iterate the returned watcher for events, ``stop()`` it to end them.

        The request goes out as :meth:`AsyncStreamWatcher.opening` says: the blocking watch
        returns once the server accepted it, the asyncio one when the watcher is first awaited,
        entered or iterated. Errors such as 410 Gone raise there. ``read_timeout`` bounds the
        silence on the stream before ``TimeoutError``; by default it is
        :func:`watch_read_timeout` of ``options.timeout_seconds`` (none if that is unset, like
        client-go; set ``allow_watch_bookmarks`` or a timeout to detect dead peers).
        ``keep``, if given, is asked with the type and wire object of each ``ADDED``,
        ``MODIFIED`` and ``DELETED`` event before the object is built: the events it rejects
        are skipped unbuilt (see :class:`~kgen_runtime.rest.StreamWatcher`). ``lazy``
        leaves the objects of those events lazy, as :meth:`list` does.
        """
        request, read_timeout = self._watch(options, read_timeout)

        async def open_() -> AsyncResponse:
            response = await self._transport.send(request, stream=True, read_timeout=read_timeout)
            if response.status != 200:
                try:
                    body = await response.read()
                finally:
                    response.close()
                raise api_error_from_response(response.status, body, response.headers)
            return response

        return AsyncStreamWatcher.opening(open_, self._resource.model, keep, lazy)

    # -- writes -----------------------------------------------------------------------------

    async def create(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Create ``obj`` (``metadata.name`` or ``generateName``); the server's copy is returned."""
        return await self._send(self._create(obj, dry_run, field_manager, field_validation))

    async def update(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Replace ``obj`` (by ``metadata.name``); a stale ``resourceVersion`` raises Conflict.

        The status subresource, if the kind has one, ignores status changes made here.
        """
        model = self._resource.model
        return await self._send(
            self._put(obj, None, model, dry_run, field_manager, field_validation)
        )

    async def patch(
        self,
        name: str,
        patch: PatchBody,
        *,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Patch the object called ``name`` with a merge, JSON or strategic merge patch."""
        options = (dry_run, field_manager, field_validation)
        return await self._send(
            self._patch(name, None, patch, patch_type, options, self._resource.model)
        )

    async def apply(
        self,
        obj: T | ObjectApplyConfiguration,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Server-side apply ``obj`` as ``field_manager``; ``force`` takes over conflicting fields.

        ``obj`` is an apply configuration (``extract_foo`` reads one back from an object) or
        a model. Only the fields set on ``obj`` are sent (fields set to ``None`` as null).
        """
        return await self._send(
            self._apply(obj, None, field_manager, force, dry_run, field_validation)
        )

    async def delete(
        self,
        name: str,
        *,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete the object called ``name``. With finalizers it may linger until they are done."""
        await self._send(
            self._delete(name, propagation_policy, grace_period_seconds, preconditions, dry_run)
        )

    async def delete_collection(
        self,
        options: ListOptions | None = None,
        *,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete every object matching ``options`` (selectors) in this client's namespace."""
        await self._send(
            self._delete_collection(options, propagation_policy, grace_period_seconds, dry_run)
        )

    async def _send(self, verb: Verb[R]) -> R:
        """Send one verb's request; its decoded 2xx body, or the matching ApiError raised."""
        response = await self._transport.send(verb.request)
        try:
            data = await response.read()
        finally:
            response.close()
        return verb.decode(response.status, data, response.headers)


class AsyncStatusClientMixin(AsyncResourceClient[T, TList]):
    """The ``/status`` subresource: generated clients include it when the CRD declares one."""

    async def update_status(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Replace ``obj``'s status (only; spec changes are ignored by the server)."""
        model = self._resource.model
        return await self._send(
            self._put(obj, "status", model, dry_run, field_manager, field_validation)
        )

    async def patch_status(
        self,
        name: str,
        patch: PatchBody,
        *,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Patch the status of the object called ``name``."""
        options = (dry_run, field_manager, field_validation)
        return await self._send(
            self._patch(name, "status", patch, patch_type, options, self._resource.model)
        )

    async def apply_status(
        self,
        obj: T | ObjectApplyConfiguration,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Server-side apply of ``obj``'s status as ``field_manager``."""
        return await self._send(
            self._apply(obj, "status", field_manager, force, dry_run, field_validation)
        )


class AsyncScaleClientMixin(AsyncResourceClient[T, TList]):
    """The ``/scale`` subresource (autoscaling/v1 :class:`Scale`), for CRDs that declare it."""

    async def get_scale(self, name: str) -> Scale:
        """The current replicas (desired and observed) and selector of ``name``."""
        return await self._send(self._get_scale(name))

    async def update_scale(
        self,
        name: str,
        scale: Scale,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> Scale:
        """Set ``scale.spec.replicas`` of ``name``; ``scale.metadata.name`` must be ``name``."""
        return await self._send(
            self._update_scale(name, scale, dry_run, field_manager, field_validation)
        )

    async def patch_scale(
        self,
        name: str,
        patch: PatchBody,
        *,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> Scale:
        """Patch the Scale of ``name`` (``{"spec": {"replicas": 3}}``)."""
        options = (dry_run, field_manager, field_validation)
        return await self._send(self._patch(name, "scale", patch, patch_type, options, Scale))
