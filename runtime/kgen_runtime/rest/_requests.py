"""What every verb of a resource client sends and how its answer is read — without I/O.

:class:`~kgen_runtime.rest.ResourceClient` (blocking) and
:class:`~kgen_runtime.rest.AsyncResourceClient` (asyncio) both subclass
:class:`ResourceRequests`; each verb of theirs is "build the request here, send it, decode it
here", so paths, query parameters, bodies and error mapping cannot differ between the two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast

import orjson

from kgen_runtime.apply import ObjectApplyConfiguration, ObjectMetaApplyConfiguration
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import (
    KubeList,
    KubeModel,
    KubeObject,
    Unstructured,
    UnstructuredList,
    WireFilter,
)
from kgen_runtime.meta._lazy import lazy_list_from_wire_json
from kgen_runtime.resource import Resource
from kgen_runtime.rest._paths import resource_path
from kgen_runtime.rest._request import Request
from kgen_runtime.rest.errors import api_error_from_response
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.rest.scale import Scale

__all__ = [
    "FieldValidation",
    "PatchBody",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "ResourceRequests",
    "Verb",
    "unstructured_resource",
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


@dataclass(frozen=True, slots=True)
class Verb(Generic[M]):
    """One verb's request and the model its 2xx body decodes into (``None``: no body); for
    a list, ``keep`` chooses the items to build (:meth:`KubeList.model_from_wire_json`) and
    ``lazy_items``, if set, is the item class whose lazy instances the items become
    (:func:`~kgen_runtime.meta._lazy.lazy_list_from_wire_json`: an informer's list)."""

    request: Request
    model: type[M] | None
    keep: WireFilter | None = None
    lazy_items: type[Any] | None = None

    def decode(self, status: int, body: bytes, headers: Mapping[str, str]) -> M:
        """The decoded 2xx body; an error status raises the matching ApiError."""
        if not 200 <= status < 300:
            raise api_error_from_response(status, body, headers)
        if self.model is None:
            return None  # type: ignore[return-value]
        if self.lazy_items is not None:
            return lazy_list_from_wire_json(self.model, self.lazy_items, body, self.keep)
        if self.keep is not None:
            list_model = cast(type[KubeList[Any]], self.model)
            return cast(M, list_model.model_from_wire_json(body, keep=self.keep))
        return self.model.model_from_wire_json(body)


class ResourceRequests(Generic[T, TList]):
    """The requests of one resource's verbs in one namespace (``None``: all namespaces).

    The contracts of the verbs are documented on :class:`~kgen_runtime.rest.ResourceClient`.
    """

    def __init__(self, resource: Resource[T], namespace: str | None) -> None:
        self._resource = resource
        self._namespace = namespace or None

    @property
    def resource(self) -> Resource[T]:
        return self._resource

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._resource.plural!r}, namespace={self._namespace!r})"

    # -- the verbs ------------------------------------------------------------------------------

    def _get(self, name: str, resource_version: str | None) -> Verb[T]:
        query = (("resourceVersion", resource_version),) if resource_version is not None else ()
        return Verb(Request("GET", self._object_path(name), query), self._resource.model)

    def _list(
        self, options: ListOptions | None, keep: WireFilter | None, lazy: bool = False,
    ) -> Verb[TList]:
        query = options.to_query() if options is not None else ()
        list_model: type[TList] = self._resource.list_model  # type: ignore[assignment]
        return Verb(Request("GET", self._collection_path(), query), list_model, keep,
                    self._resource.model if lazy else None)

    def _watch(
        self, options: ListOptions | None, read_timeout: float | None
    ) -> tuple[Request, float | None]:
        """The watch request and its read timeout (see ``ResourceClient.watch``)."""
        options = options or ListOptions()
        if read_timeout is None:
            read_timeout = watch_read_timeout(options.timeout_seconds)
        query = (("watch", "true"), *options.to_query())
        return Request("GET", self._collection_path(), query), read_timeout

    def _create(
        self,
        obj: T,
        dry_run: bool,
        field_manager: str | None,
        field_validation: FieldValidation | None,
    ) -> Verb[T]:
        self._require_namespace()
        query = _write_query(dry_run, field_manager, field_validation)
        request = Request("POST", self._collection_path(), query, self._encode(obj))
        return Verb(request, self._resource.model)

    def _put(
        self,
        obj: KubeObject,
        subresource: str | None,
        model: type[M],
        dry_run: bool,
        field_manager: str | None,
        field_validation: FieldValidation | None,
    ) -> Verb[M]:
        path = self._object_path(_name_of(obj), subresource)
        query = _write_query(dry_run, field_manager, field_validation)
        return Verb(Request("PUT", path, query, self._encode(obj)), model)

    def _patch(
        self,
        name: str,
        subresource: str | None,
        patch: PatchBody,
        patch_type: PatchType,
        options: tuple[bool, str | None, FieldValidation | None],
        model: type[M],
    ) -> Verb[M]:
        """``options``: dry_run, field_manager, field_validation."""
        content_type = _PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(f"unknown patch type {patch_type!r}; apply() does server-side apply")
        raw = patch if isinstance(patch, bytes) else orjson.dumps(patch)
        path = self._object_path(name, subresource)
        return Verb(Request("PATCH", path, _write_query(*options), raw, content_type), model)

    def _apply(
        self,
        obj: T | ObjectApplyConfiguration,
        subresource: str | None,
        field_manager: str,
        force: bool,
        dry_run: bool,
        field_validation: FieldValidation | None,
    ) -> Verb[T]:
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
        request = Request("PATCH", path, query, config, _APPLY_CONTENT_TYPE)
        return Verb(request, self._resource.model)

    def _delete(
        self,
        name: str,
        propagation_policy: PropagationPolicy | None,
        grace_period_seconds: int | None,
        preconditions: Preconditions | None,
        dry_run: bool,
    ) -> Verb[Any]:
        body = _delete_options(propagation_policy, grace_period_seconds, preconditions, dry_run)
        return Verb(Request("DELETE", self._object_path(name), (), body), None)

    def _delete_collection(
        self,
        options: ListOptions | None,
        propagation_policy: PropagationPolicy | None,
        grace_period_seconds: int | None,
        dry_run: bool,
    ) -> Verb[Any]:
        query = options.to_query() if options is not None else ()
        body = _delete_options(propagation_policy, grace_period_seconds, None, dry_run)
        return Verb(Request("DELETE", self._collection_path(), query, body), None)

    def _get_scale(self, name: str) -> Verb[Scale]:
        return Verb(Request("GET", self._object_path(name, "scale")), Scale)

    def _update_scale(
        self,
        name: str,
        scale: Scale,
        dry_run: bool,
        field_manager: str | None,
        field_validation: FieldValidation | None,
    ) -> Verb[Scale]:
        if scale.metadata.name not in (None, name):
            raise ValueError(f"scale.metadata.name {scale.metadata.name!r} is not {name!r}")
        if scale.metadata.name is None:
            scale = scale.model_copy(update={"metadata": scale.metadata.model_copy()})
            scale.metadata.name = name
        return self._put(scale, "scale", Scale, dry_run, field_manager, field_validation)

    # -- machinery ------------------------------------------------------------------------------

    def _encode(self, obj: KubeModel) -> bytes:
        """Wire JSON of ``obj`` with apiVersion/kind filled in from the resource if empty."""
        if getattr(obj, "api_version", None) and getattr(obj, "kind", None):
            return obj.model_dump_wire_json()
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


def unstructured_resource(gvr: GroupVersionResource, namespaced: bool) -> Resource[Unstructured]:
    """The resource ``gvr`` served as unstructured objects (the dynamic clients' resource)."""
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
