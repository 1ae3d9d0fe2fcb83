"""The generic typed client of one resource (client-go's ``gentype.Client``).

Generated clients subclass :class:`ResourceClient` and add no logic::

    class FooClient(StatusClientMixin[Foo, FooList]):  # the mixins subclass ResourceClient
        \"\"\"Foos in one namespace.\"\"\"

    foos = FooClient(transport, FOO_RESOURCE, "default")

A client is a pure function of its transport, resource and namespace: it holds no other state,
so it is thread-safe, cheap to create, and behaves the same over the real HTTP transport, the
in-process test API server and the fake clientset.

Contracts shared by every verb:

* Responses are decoded straight from bytes into the resource's model classes; the returned
  objects are new and owned by the caller (safe to mutate).
* Objects passed in are only read (serialised), never modified. An empty ``apiVersion``/``kind``
  is filled in from the resource on the wire.
* An error status raises the matching :class:`~kgen_runtime.rest.errors.ApiError`; network
  failures raise ``ConnectionError``/``TimeoutError`` (see the transport).
* A namespaced resource's client without a namespace lists and watches across all namespaces;
  single-object verbs then raise ``ValueError``. For a cluster-scoped resource the namespace is
  ignored.
* Writes accept ``dry_run`` (``dryRun=All``), ``field_manager`` and ``field_validation``
  (``Ignore``/``Warn``/``Strict``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import orjson

from kgen_runtime.apply import ObjectApplyConfiguration, ObjectMetaApplyConfiguration
from kgen_runtime.meta import KubeList, KubeModel, KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest._paths import resource_path
from kgen_runtime.rest._request import Request, Transport
from kgen_runtime.rest._watch import StreamWatcher
from kgen_runtime.rest.errors import api_error_from_response
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.rest.scale import Scale

__all__ = [
    "FieldValidation",
    "PatchBody",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "ResourceClient",
    "ScaleClientMixin",
    "StatusClientMixin",
    "watch_read_timeout",
]

T = TypeVar("T", bound=KubeObject)
TList = TypeVar("TList", bound=KubeList[Any])
M = TypeVar("M", bound=KubeModel)

#: ``merge``: JSON merge patch (RFC 7386); ``json``: JSON patch (RFC 6902); ``strategic``:
#: strategic merge patch, which the server supports for built-in kinds only (a CRD answers 415).
PatchType = Literal["merge", "json", "strategic"]
PropagationPolicy = Literal["Orphan", "Background", "Foreground"]
FieldValidation = Literal["Ignore", "Warn", "Strict"]
#: A patch document: raw bytes, or a JSON value (a mapping, or a list of JSON-patch operations).
PatchBody = bytes | Mapping[str, Any] | Sequence[Mapping[str, Any]]

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
_APPLY_CONTENT_TYPE = "application/apply-patch+yaml"


def watch_read_timeout(timeout_seconds: int | None) -> float | None:
    """The client-side read timeout of a watch asking the server for ``timeout_seconds``.

    A little above the server's own timeout (10 %, at least 10 s), so the server normally
    ends the watch and a silent, dead connection is still noticed. ``None`` without one.
    """
    if timeout_seconds is None:
        return None
    return timeout_seconds + max(10.0, timeout_seconds * 0.1)


@dataclass(frozen=True, slots=True)
class Preconditions:
    """Delete only if the object still has this uid and/or resourceVersion (else 409)."""

    uid: str | None = None
    resource_version: str | None = None


class ResourceClient(Generic[T, TList]):
    """Get, list, watch, create, update, patch, apply and delete one resource's objects.

    Args:
        transport: Where requests go (HTTP, test server or fake).
        resource: The kind served; its ``model``/``list_model`` decode responses.
        namespace: The namespace of every request; ``None`` or ``""`` for all namespaces.
    """

    def __init__(
        self, transport: Transport, resource: Resource[T], namespace: str | None = None
    ) -> None:
        self._transport = transport
        self._resource = resource
        self._namespace = namespace or None

    @property
    def resource(self) -> Resource[T]:
        return self._resource

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._resource.plural!r}, namespace={self._namespace!r})"

    # -- reads ------------------------------------------------------------------------------

    def get(self, name: str, *, resource_version: str | None = None) -> T:
        """The object called ``name``; ``resource_version="0"`` allows a cached answer."""
        query = (("resourceVersion", resource_version),) if resource_version is not None else ()
        body = self._call("GET", self._object_path(name), query)
        return self._resource.model.model_validate_json(body)

    def list(self, options: ListOptions | None = None) -> TList:
        """One page of objects, in the server's order.

        Everything matching unless ``options.limit`` is set; then pass the returned
        ``metadata.continue_`` back as ``continue_`` for the next page.
        """
        query = options.to_query() if options is not None else ()
        body = self._call("GET", self._collection_path(), query)
        list_model: type[TList] = self._resource.list_model  # type: ignore[assignment]
        return list_model.model_validate_json(body)

    def watch(
        self, options: ListOptions | None = None, *, read_timeout: float | None = None
    ) -> StreamWatcher[T]:
        """Open a watch; iterate the returned watcher for events, ``stop()`` it from anywhere.

        Blocks until the server accepted the watch (errors such as 410 Gone raise here).
        ``read_timeout`` bounds the silence on the stream before ``TimeoutError``; by default
        it is :func:`watch_read_timeout` of ``options.timeout_seconds`` (none if that is unset,
        like client-go; set ``allow_watch_bookmarks`` or a timeout to detect dead peers).
        """
        options = options or ListOptions()
        if read_timeout is None:
            read_timeout = watch_read_timeout(options.timeout_seconds)
        request = Request("GET", self._collection_path(), (("watch", "true"), *options.to_query()))
        response = self._transport.send(request, stream=True, read_timeout=read_timeout)
        if response.status != 200:
            try:
                body = response.read()
            finally:
                response.close()
            raise api_error_from_response(response.status, body, response.headers)
        return StreamWatcher(response, self._resource.model)

    # -- writes -----------------------------------------------------------------------------

    def create(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Create ``obj`` (``metadata.name`` or ``generateName``); the server's copy is returned."""
        self._require_namespace()
        query = _write_query(dry_run, field_manager, field_validation)
        body = self._call("POST", self._collection_path(), query, self._encode(obj))
        return self._resource.model.model_validate_json(body)

    def update(
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
        return self._put(obj, None, self._resource.model, dry_run, field_manager, field_validation)

    def patch(
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
        query = _write_query(dry_run, field_manager, field_validation)
        return self._patch(name, None, patch, patch_type, query, self._resource.model)

    def apply(
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
        return self._apply(obj, None, field_manager, force, dry_run, field_validation)

    def delete(
        self,
        name: str,
        *,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete the object called ``name``. With finalizers it may linger until they are done."""
        body = _delete_options(propagation_policy, grace_period_seconds, preconditions, dry_run)
        self._call("DELETE", self._object_path(name), (), body)

    def delete_collection(
        self,
        options: ListOptions | None = None,
        *,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete every object matching ``options`` (selectors) in this client's namespace."""
        query = options.to_query() if options is not None else ()
        body = _delete_options(propagation_policy, grace_period_seconds, None, dry_run)
        self._call("DELETE", self._collection_path(), query, body)

    # -- machinery shared with the subresource mixins -------------------------------------

    def _put(
        self,
        obj: KubeObject,
        subresource: str | None,
        model: type[M],
        dry_run: bool,
        field_manager: str | None,
        field_validation: FieldValidation | None,
    ) -> M:
        path = self._object_path(_name_of(obj), subresource)
        query = _write_query(dry_run, field_manager, field_validation)
        return model.model_validate_json(self._call("PUT", path, query, self._encode(obj)))

    def _patch(
        self,
        name: str,
        subresource: str | None,
        patch: PatchBody,
        patch_type: PatchType,
        query: tuple[tuple[str, str], ...],
        model: type[M],
    ) -> M:
        content_type = _PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(f"unknown patch type {patch_type!r}; apply() does server-side apply")
        raw = patch if isinstance(patch, bytes) else orjson.dumps(patch)
        path = self._object_path(name, subresource)
        return model.model_validate_json(self._call("PATCH", path, query, raw, content_type))

    def _apply(
        self,
        obj: T | ObjectApplyConfiguration,
        subresource: str | None,
        field_manager: str,
        force: bool,
        dry_run: bool,
        field_validation: FieldValidation | None,
    ) -> T:
        if not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        query = _write_query(dry_run, field_manager, field_validation)
        if force:
            query += (("force", "true"),)
        if isinstance(obj, ObjectApplyConfiguration):
            path = self._object_path(_configured_name(obj), subresource)
            config = orjson.dumps(obj.model_dump())
        else:
            path = self._object_path(_name_of(obj), subresource)
            config = self._encode(obj)
        body = self._call("PATCH", path, query, config, _APPLY_CONTENT_TYPE)
        return self._resource.model.model_validate_json(body)

    def _call(
        self,
        method: str,
        path: str,
        query: tuple[tuple[str, str], ...] = (),
        body: bytes | None = None,
        content_type: str | None = None,
    ) -> bytes:
        """Send one request and return the body of a 2xx response; raise ApiError otherwise."""
        response = self._transport.send(Request(method, path, query, body, content_type))
        try:
            data = response.read()
        finally:
            response.close()
        if not 200 <= response.status < 300:
            raise api_error_from_response(response.status, data, response.headers)
        return data

    def _encode(self, obj: KubeModel) -> bytes:
        """Wire JSON of ``obj`` with apiVersion/kind filled in from the resource if empty."""
        if getattr(obj, "api_version", None) and getattr(obj, "kind", None):
            return obj.model_dump_json().encode()
        wire = obj.model_dump()
        if not wire.get("apiVersion"):
            wire["apiVersion"] = self._resource.api_version
        if not wire.get("kind") and self._resource.kind:
            wire["kind"] = self._resource.kind
        return orjson.dumps(wire)

    def _object_path(self, name: str, subresource: str | None = None) -> str:
        self._require_namespace()
        return self._path(name, subresource)

    def _collection_path(self) -> str:
        return self._path(None, None)

    def _require_namespace(self) -> None:
        if self._resource.namespaced and self._namespace is None:
            raise ValueError(
                f"{self._resource.plural} are namespaced: a client for one namespace is needed"
            )

    def _path(self, name: str | None, subresource: str | None) -> str:
        resource = self._resource
        return resource_path(
            resource.group,
            resource.version,
            resource.plural,
            namespace=self._namespace if resource.namespaced else None,
            name=name,
            subresource=subresource,
        )


class StatusClientMixin(ResourceClient[T, TList]):
    """The ``/status`` subresource: generated clients include it when the CRD declares one."""

    def update_status(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Replace ``obj``'s status (only; spec changes are ignored by the server)."""
        return self._put(
            obj, "status", self._resource.model, dry_run, field_manager, field_validation
        )

    def patch_status(
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
        query = _write_query(dry_run, field_manager, field_validation)
        return self._patch(name, "status", patch, patch_type, query, self._resource.model)

    def apply_status(
        self,
        obj: T | ObjectApplyConfiguration,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> T:
        """Server-side apply of ``obj``'s status as ``field_manager``."""
        return self._apply(obj, "status", field_manager, force, dry_run, field_validation)


class ScaleClientMixin(ResourceClient[T, TList]):
    """The ``/scale`` subresource (autoscaling/v1 :class:`Scale`), for CRDs that declare it."""

    def get_scale(self, name: str) -> Scale:
        """The current replicas (desired and observed) and selector of ``name``."""
        return Scale.model_validate_json(self._call("GET", self._object_path(name, "scale")))

    def update_scale(
        self,
        name: str,
        scale: Scale,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> Scale:
        """Set ``scale.spec.replicas`` of ``name``; ``scale.metadata.name`` must be ``name``."""
        if scale.metadata.name not in (None, name):
            raise ValueError(f"scale.metadata.name {scale.metadata.name!r} is not {name!r}")
        if scale.metadata.name is None:
            scale = scale.model_copy(update={"metadata": scale.metadata.model_copy()})
            scale.metadata.name = name
        return self._put(scale, "scale", Scale, dry_run, field_manager, field_validation)

    def patch_scale(
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
        query = _write_query(dry_run, field_manager, field_validation)
        return self._patch(name, "scale", patch, patch_type, query, Scale)


def _name_of(obj: KubeObject) -> str:
    name = obj.metadata.name
    if not name:
        raise ValueError(f"{type(obj).__name__} has no metadata.name")
    return name


def _configured_name(config: ObjectApplyConfiguration) -> str:
    metadata = config.metadata
    name = metadata.name if isinstance(metadata, ObjectMetaApplyConfiguration) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{type(config).__name__} has no metadata.name")
    return name


def _write_query(
    dry_run: bool, field_manager: str | None, field_validation: FieldValidation | None
) -> tuple[tuple[str, str], ...]:
    query: list[tuple[str, str]] = []
    if dry_run:
        query.append(("dryRun", "All"))
    if field_manager is not None:
        query.append(("fieldManager", field_manager))
    if field_validation is not None:
        query.append(("fieldValidation", field_validation))
    return tuple(query)


def _delete_options(
    propagation_policy: PropagationPolicy | None,
    grace_period_seconds: int | None,
    preconditions: Preconditions | None,
    dry_run: bool,
) -> bytes:
    """A metav1.DeleteOptions body (client-go always sends one)."""
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if propagation_policy is not None:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if preconditions is not None:
        wanted = {"uid": preconditions.uid, "resourceVersion": preconditions.resource_version}
        options["preconditions"] = {k: v for k, v in wanted.items() if v is not None}
    if dry_run:
        options["dryRun"] = ["All"]
    return orjson.dumps(options)
