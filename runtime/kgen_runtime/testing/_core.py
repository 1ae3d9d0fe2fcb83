"""The transport-independent API server: ``handle(Request) -> Response`` over the store.

One implementation of the Kubernetes REST protocol serves both the threaded HTTP server and
the fake clientset's in-process transport: URL routing (core ``/api/v1`` and ``/apis/{g}/{v}``
paths, namespaced and cluster-scoped, ``/status``), the verbs (get, list, watch, create,
update, patch in all four content types, delete, deletecollection), discovery, CRD
installation and fault injection. Objects are read and written through
:class:`~kgen_runtime.testing.apiserver.admission._admitted.AdmittedStore`, which adds the
admission webhooks and CRD version conversion where they are configured.

Thread-safe: requests may be handled concurrently from any number of threads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kgen_runtime.meta import copy_json
from kgen_runtime.rest import Request
from kgen_runtime.testing._sharding import ShardedListAndWatch, ShardFilter
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.admission._admitted import AdmittedStore
from kgen_runtime.testing.apiserver.admission._pod_admission import ENVTEST_DISABLED, PodAdmission
from kgen_runtime.testing.apiserver.discovery._discovery import (
    aggregated_discovery,
    asks_for_aggregated,
)
from kgen_runtime.testing.apiserver.discovery._openapi_endpoints import OpenAPIEndpoints
from kgen_runtime.testing.apiserver.endpoints._bodies import check_body_size, decode_object
from kgen_runtime.testing.apiserver.endpoints._bodies import decode_json as _decode
from kgen_runtime.testing.apiserver.endpoints._bodies import decode_yaml as _decode_yaml
from kgen_runtime.testing.apiserver.endpoints._protobuf import negotiated
from kgen_runtime.testing.apiserver.endpoints._query import (
    delete_options as requested_delete_options,
)
from kgen_runtime.testing.apiserver.endpoints._query import (
    int_param,
    query_flag,
    write_options,
    written,
)
from kgen_runtime.testing.apiserver.endpoints._responses import (
    BufferedResponse,
    CoreResponse,
    WatchResponse,
    json_response,
)
from kgen_runtime.testing.apiserver.fieldmanager._apply import apply
from kgen_runtime.testing.apiserver.fieldmanager._managed_fields import FieldManager
from kgen_runtime.testing.apiserver.openapi._openapi import (
    builtin_kinds,
    group_version_path,
    patch_schema,
)
from kgen_runtime.testing.apiserver.patch._patch import json_patch, merge_patch
from kgen_runtime.testing.apiserver.patch._strategicpatch import (
    StrategicMergePatchError,
    strategic_merge_patch,
)
from kgen_runtime.testing.apiserver.reviews._reviews import REVIEW_PATHS, Reviews
from kgen_runtime.testing.apiserver.reviews._self_access_review import (
    SELF_SUBJECT_ACCESS_REVIEWS,
)
from kgen_runtime.testing.apiserver.reviews._self_access_review import (
    review as self_subject_access_review,
)
from kgen_runtime.testing.apiserver.storage._bootstrap import create_system_objects
from kgen_runtime.testing.apiserver.storage._crd_status import controlled_status
from kgen_runtime.testing.apiserver.storage._deletion import delete_response, delete_warnings
from kgen_runtime.testing.apiserver.storage._namespaces import NamespaceLifecycle
from kgen_runtime.testing.apiserver.storage._registry import Registry
from kgen_runtime.testing.apiserver.storage._resources import (
    BUILTINS,
    ServedResource,
    WriteOptions,
    from_crd,
)
from kgen_runtime.testing.apiserver.storage._selectors import WatchFilter, parse_filter
from kgen_runtime.testing.apiserver.storage._services import ServiceAllocator
from kgen_runtime.testing.apiserver.storage._store import ObjectStore, utc_now
from kgen_runtime.testing.apiserver.storage._strategy import CRD_CLEANUP_FINALIZER, is_namespace
from kgen_runtime.testing.apiserver.subresources._pod_connect import CONNECT_SUBRESOURCES, connect
from kgen_runtime.testing.apiserver.tables._partial import (
    as_partial_metadata,
    partial_metadata_version,
)
from kgen_runtime.testing.apiserver.tables._tables import include_option, table_version, to_table
from kgen_runtime.testing.apiserver.validation._builtins import decode_error
from kgen_runtime.testing.apiserver.validation._duplicate_fields import duplicate_fields
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = ["APIServerCore", "Target"]

Obj = dict[str, Any]

#: ``/version``: the fields of apimachinery's pkg/version Info, in its order, with the values
#: of the kube-apiserver release the test server follows (v1.36.2, as recorded in
#: ../shared/fidelity/transcripts/server.json); component-base/compatibility puts the minimum
#: compatibility version one minor below the binary's.
_VERSION = {
    "major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
    "minCompatibilityMajor": "1", "minCompatibilityMinor": "35", "gitVersion": "v1.36.2",
    "gitCommit": "98b35193b2ac7a23a673325f5e9b830ecd5ba406", "gitTreeState": "clean",
    "buildDate": "2026-11-28T01:27:01Z", "goVersion": "go1.26.4", "compiler": "gc",
    "platform": "linux/amd64",
}
_CRD_GROUP = "apiextensions.k8s.io"
_CRD_PLURAL = "customresourcedefinitions"


_PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
_PROPAGATION = ("Orphan", "Background", "Foreground")
_PLAIN_TEXT = {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}


@dataclass(frozen=True, slots=True)
class Target:
    """What a request path addresses; ``name`` empty for a collection."""

    resource: ServedResource
    namespace: str
    name: str
    subresource: str


class APIServerCore:
    """The API server's behaviour, independent of how requests arrive.

    Attributes:
        store: The objects (an :class:`ObjectStore`), for direct inspection and ``compact``.
        registry: What is served, and the discovery documents built from it.
        namespaces: The namespace lifecycle (admission and the namespace controller).

    Args:
        history_size: Write events retained for watches and past reads (see ObjectStore).
        bookmark_interval: Seconds of watch silence before a BOOKMARK (when allowed).
        wall_clock: Source of object timestamps.
        clock: Time of watch bookmarks, read timeouts, ``timeoutSeconds`` and
            :meth:`delay`.
        namespace_lifecycle: Refuse creations in a namespace that does not exist (404), as the
            apiserver's NamespaceLifecycle admission does. Off by default, as in client-go's
            fake. Creations in a namespace being deleted are refused (403) either way.
        namespace_controller: Play the namespace controller: a deleted namespace is emptied
            and goes once empty. Off: it stays Terminating for good, as on a bare
            kube-apiserver (envtest). See
            :mod:`~kgen_runtime.testing.apiserver.storage._namespaces`.
        disabled_admission_plugins: The Pod admission plugins not to run, as
            kube-apiserver's ``--disable-admission-plugins``: by default ``ServiceAccount``,
            as envtest disables it (no controller creates ``default`` ServiceAccounts); see
            :mod:`~kgen_runtime.testing.apiserver.admission._pod_admission`.
        system_objects: Start with what a bare kube-apiserver creates itself: the
            ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease`` namespaces,
            the ``kubernetes`` Service and the system PriorityClasses (see
            :mod:`~kgen_runtime.testing.apiserver.storage._bootstrap`). Off by default, as in
            client-go's fake;
            the test server turns it on.
        sharded_list_and_watch: The ``ShardedListAndWatch`` feature gate (v1.36, alpha): lists
            and watches honour ``shardSelector`` and lists echo it in ``shardInfo``; off, the
            parameter is ignored. Either way ``sharding.requests()`` logs every list and watch
            (see :mod:`~kgen_runtime.testing._sharding`).
    """

    def __init__(
        self,
        *,
        history_size: int = 10_000,
        bookmark_interval: float = 1.0,
        wall_clock: Callable[[], datetime] = utc_now,
        clock: Clock = REAL_CLOCK,
        namespace_lifecycle: bool = False,
        namespace_controller: bool = True,
        disabled_admission_plugins: Iterable[str] = ENVTEST_DISABLED,
        system_objects: bool = False,
        sharded_list_and_watch: bool = False,
    ) -> None:
        self._clock = clock
        #: The ShardedListAndWatch gate and the log of lists and watches.
        self.sharding = ShardedListAndWatch(sharded_list_and_watch)
        self._wall_clock = wall_clock
        self.store = ObjectStore(history_size=history_size, bookmark_interval=bookmark_interval,
                                 wall_clock=wall_clock, clock=clock,
                                 on_write=self._on_write)
        self.registry = Registry((*BUILTINS, SELF_SUBJECT_ACCESS_REVIEWS))
        self.namespaces = NamespaceLifecycle(self.store, self.registry,
                                              strict=namespace_lifecycle,
                                              controller=namespace_controller)
        self._field_manager = FieldManager(self.store.timestamp)
        self._openapi = OpenAPIEndpoints(self.registry, wall_clock)
        #: The spec each served CRD was last established with (its storage's).
        self._served_specs: dict[str, Obj] = {}
        self._services = ServiceAllocator()
        self.pod_admission = PodAdmission(self.store, self.registry,
                                          disabled_admission_plugins)
        self._lock = threading.Lock()
        self._failures: list[StatusError] = []
        self._delay = 0.0
        self._in_flight = 0
        self._stopping = threading.Event()
        #: The store as requests see it: through admission and conversion where configured.
        self.objects = AdmittedStore(self.store, self.registry, self._field_manager)
        #: Admission webhooks (``admission.webhook_service_resolver``).
        self.admission = self.objects.admission
        #: CRD version conversion (webhooks, or :meth:`Conversions.register` in-process).
        self.conversions = self.objects.conversions
        if system_objects:
            create_system_objects(self.store, self.registry)
        # The server starts as a running cluster: kube-apiserver's compactor
        # (storage/etcd3/compact.go, every 5 minutes) has long compacted the revisions of
        # whatever it created for itself, so a read at one of them is 410 Expired.
        self.store.compact()
        #: TokenReviews and SubjectAccessReviews (``reviews.add_token`` names the users).
        self.reviews = Reviews(self.store)

    # -- configuration ------------------------------------------------------------------------

    def serve(self, resource: ServedResource) -> None:
        """Serve one more resource (stored without a schema unless ``resource.schema``)."""
        self.registry.add(resource)

    def install_crd(self, manifest: Obj) -> Obj:
        """Create a CustomResourceDefinition as if POSTed; returns it with Established set.

        ``manifest`` is copied, never modified, so one manifest can install many servers.
        """
        crd_info = self._lookup(_CRD_GROUP, "v1", _CRD_PLURAL)
        created = self._create(crd_info, "", copy_json(manifest), WriteOptions())
        return self.store.get(crd_info, "", created["metadata"]["name"])

    # -- fault injection ----------------------------------------------------------------------

    def fail_next(
        self, count: int = 1, status_code: int = 500, reason: str = "InternalError",
        *, message: str = "injected failure", retry_after: int | None = None,
    ) -> None:
        """Answer the next ``count`` requests (any verb) with this error Status."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        details = {"retryAfterSeconds": retry_after} if retry_after is not None else None
        with self._lock:
            self._failures.extend(
                StatusError(status_code, reason, message,
                            None if details is None else dict(details), dict(headers))
                for _ in range(count))

    def delay(self, seconds: float) -> None:
        """Hold every request ``seconds`` before answering (0 turns it off)."""
        with self._lock:
            self._delay = seconds

    def in_flight(self) -> int:
        """How many requests are being handled right now (held by ``delay`` included)."""
        with self._lock:
            return self._in_flight

    def shutdown(self) -> None:
        """End open watches and release delayed requests (for good: later requests are
        answered, but :meth:`delay` no longer holds them)."""
        self._stopping.set()
        self.store.drop_watches()

    # -- requests -----------------------------------------------------------------------------

    def handle(self, request: Request, *, read_timeout: float | None = None) -> CoreResponse:
        """Answer one request. Never raises for API errors: they become Status responses.

        ``read_timeout`` applies to a watch's ``iter_lines`` (see WatchResponse).
        """
        with self._lock:
            delay = self._delay
            failure = self._failures.pop(0) if self._failures else None
            self._in_flight += 1
        try:
            if delay:
                self._clock.sleep(self._stopping, delay)
            if failure is not None:
                raise failure
            return negotiated(request, self._route(request, dict(request.query), read_timeout))
        except StatusError as error:
            if error.details == {} and error.reason == "NotFound" and not self._claimed(
                    request.path):
                return BufferedResponse(404, b"404 page not found\n", _PLAIN_TEXT)
            return negotiated(request, json_response(error.code, error.status(), error.headers))
        except Exception as error:  # a real server answers 500 rather than dropping the request
            internal = StatusError.internal(f"{type(error).__name__}: {error}")
            return json_response(internal.code, internal.status())
        finally:
            with self._lock:
                self._in_flight -= 1

    def _route(
        self, request: Request, query: dict[str, str], read_timeout: float | None
    ) -> CoreResponse:
        path = request.path.split("?", 1)[0].rstrip("/")
        parts = [p for p in path.split("/") if p]
        if parts[:1] in (["healthz"], ["livez"], ["readyz"]) and len(parts) <= 2:
            return BufferedResponse(200, b"ok", _PLAIN_TEXT)
        check_body_size(len(request.body or b""))
        if request.method == "GET":
            openapi = self._openapi.handle(parts, query, request.header)
            if openapi is not None:
                return openapi
            if parts in (["api"], ["apis"]) and asks_for_aggregated(request.header("Accept")):
                return aggregated_discovery(self.registry, core=parts == ["api"],
                                            if_none_match=request.header("If-None-Match"))
            discovery = self._discovery(parts)
            if discovery is not None:
                return json_response(200, discovery)
        review_path = _review_path(parts)
        if review_path is not None and request.method == "POST":
            resource, namespace = review_path
            answer = self.reviews.create(resource, namespace, decode_object(request))
            return json_response(201, answer)
        legacy_watch = _legacy_watch(parts)
        if legacy_watch is not None and request.method == "GET":
            parts = legacy_watch
        target = self.resolve(parts)
        if target.subresource not in CONNECT_SUBRESOURCES:
            _check_acceptable(request.header("Accept"))
        method = request.method
        if target.resource == SELF_SUBJECT_ACCESS_REVIEWS:
            if method != "POST" or target.name:
                raise StatusError.method_not_allowed()
            return json_response(201, self_subject_access_review(decode_object(request)))
        if target.subresource == "scale":
            return self._scale(target, request, query)
        if target.subresource == "finalize":
            return self._finalize(target, request, query)
        if target.subresource in CONNECT_SUBRESOURCES:
            pod = self.objects.get(target.resource, target.namespace, target.name)
            return connect(target.subresource, request.method, pod, query, self._node_exists)
        if method == "GET":
            table = table_version(request.header("Accept"))
            if legacy_watch is not None and not target.subresource:
                return self._watch(*_named_watch(target, query), read_timeout, table)
            if not target.name and query_flag(query, "watch"):
                return self._watch(target, query, read_timeout, table)
            body = (self.objects.get(target.resource, target.namespace, target.name)
                    if target.name else self._list(target, query))
            partial = partial_metadata_version(request.header("Accept"),
                                               listing=not target.name)
            if table is None and partial is not None:
                return json_response(200, as_partial_metadata(body, partial))
            if table is not None:
                body = to_table(target.resource, body, table, query.get("includeObject", ""),
                                self._wall_clock())
            return json_response(200, body)
        if method not in ("POST", "PUT", "PATCH", "DELETE"):
            raise StatusError.method_not_allowed()
        options = write_options(query, request)
        options.api_version = target.resource.api_version
        if method in ("POST", "PUT") and _is_json(request):
            options.duplicates = duplicate_fields(request.body)
        if method == "POST" and not target.name:
            if target.resource.namespaced and not target.namespace:
                raise StatusError.method_not_allowed()
            created = self._create(target.resource, target.namespace,
                                   self._checked_body(target, request), options)
            return written(201, created, options)
        if method == "PUT" and target.name:
            updated = self._update(target, self._checked_body(target, request), options)
            return written(200, updated, options)
        if method == "PATCH" and target.name:
            return self._patch(target, request, query, options)
        if method == "DELETE":
            return self._delete(target, request, query, options)
        raise StatusError.method_not_allowed()

    def _discovery(self, parts: list[str]) -> Obj | None:
        if parts == ["version"]:
            return dict(_VERSION)
        if parts == ["api"]:
            return self.registry.api_versions()
        if parts == ["apis"]:
            return self.registry.api_group_list()
        if len(parts) == 2 and parts[0] == "apis":
            api_group = self.registry.api_group(parts[1])
            if api_group is None:
                raise StatusError.no_route()
            return api_group
        if (len(parts) == 2 and parts[0] == "api") or (len(parts) == 3 and parts[0] == "apis"):
            group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
            resources = self.registry.api_resource_list(group, version)
            if resources is None:
                raise StatusError.no_route()
            return resources
        return None

    def _claimed(self, path: str) -> bool:
        """Whether kube-apiserver answers an unknown ``path`` with a JSON Status rather than
        Go's ``404 page not found`` text.

        Its director (apiserver pkg/server/handler.go) hands go-restful every path under a
        web service root: ``/api``, ``/version`` and ``/apis/<group>`` of each built-in
        group, whose unknown routes get the Status. Everything else goes to the non-go-restful
        mux: the CRD handler (apiextensions-apiserver customresource_handler.go) answers a
        served custom resource's paths and passes the rest to the not-found handler
        (apiserver pkg/util/notfoundhandler), which writes the text.
        """
        parts = [part for part in path.split("?", 1)[0].split("/") if part]
        if parts[:1] in (["api"], ["version"], ["openapi"]):  # /openapi: its own 404s
            return True
        if parts[:1] != ["apis"] or len(parts) < 2:
            return False
        served = self.registry.served()
        if any(r.group == parts[1] and not r.custom for r in served):
            return True
        resource = parts[5:6] if parts[3:4] == ["namespaces"] else parts[3:4]
        return bool(resource) and any((r.group, r.version, r.plural) == (
            parts[1], parts[2], resource[0]) for r in served)

    def resolve(self, parts: list[str]) -> Target:
        """The resource a path (split on ``/``) addresses; 404 if it is not served."""
        if len(parts) >= 3 and parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif len(parts) >= 4 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise StatusError.no_route()
        namespace = ""
        if (len(rest) >= 3 and rest[0] == "namespaces"
                and (info := self.registry.lookup(group, version, rest[2])) is not None
                and info.namespaced):
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            raise StatusError.no_route()
        info = self._lookup(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else ""
        subresource = rest[2] if len(rest) > 2 else ""
        if (namespace and not info.namespaced) or (name and info.namespaced and not namespace):
            raise StatusError.no_route()
        if subresource and not ((subresource == "status" and info.status_subresource)
                                or (subresource == "scale" and info.scale is not None)
                                or (subresource == "finalize" and is_namespace(info))
                                or (subresource in CONNECT_SUBRESOURCES and _is_pods(info))):
            raise StatusError.no_route()
        return Target(info, namespace, name, subresource)

    def _checked_body(self, target: Target, request: Request) -> Obj:
        """A create or update body whose ``apiVersion``, if given, is one the resource
        accepts: its own, or another served version of the same group and resource."""
        obj = decode_object(request, target.resource.kind)
        info = target.resource
        given = obj.get("apiVersion")
        if not info.custom:
            _refuse_other_builtin_kind(info, obj)
        if given and given != info.api_version:
            group, _, version = given.rpartition("/")
            if group != info.group or self.registry.lookup(group, version, info.plural) is None:
                raise StatusError.bad_request(
                    f"the API version in the data ({given}) does not match the expected API "
                    f"version ({info.api_version})")
        return obj

    def _lookup(self, group: str, version: str, plural: str) -> ServedResource:
        info = self.registry.lookup(group, version, plural)
        if info is None:
            raise StatusError.no_route()
        return info

    # -- verbs --------------------------------------------------------------------------------

    def _list(self, target: Target, query: dict[str, str]) -> Obj:
        info = target.resource
        shard = self._shard("list", target, query)
        result = self.objects.list_objects(
            info, target.namespace, _filter(target, query, shard),
            resource_version=query.get("resourceVersion", ""),
            match=query.get("resourceVersionMatch", ""),
            limit=max(int_param(query, "limit"), 0),  # the storage pages when limit > 0
            continue_token=query.get("continue", ""),
        )
        metadata: Obj = {"resourceVersion": str(result.resource_version)}
        if result.continue_token or info.custom:
            # A custom resource list is unstructured, whose SetContinue always writes the
            # field (apimachinery meta/v1/unstructured/unstructured_list.go): "" on the last page.
            metadata["continue"] = result.continue_token
        if result.remaining is not None:
            metadata["remainingItemCount"] = result.remaining
        if shard is not None:
            metadata["shardInfo"] = {"selector": shard.selector}
        return {"kind": info.list_kind, "apiVersion": info.api_version, "metadata": metadata,
                "items": result.items if info.custom else [_untyped(item) for item in result.items]}

    def _watch(
        self, target: Target, query: dict[str, str], read_timeout: float | None,
        table: str | None,
    ) -> WatchResponse:
        where = _filter(target, query, self._shard("watch", target, query))
        timeout = int_param(query, "timeoutSeconds")
        include = include_option(query.get("includeObject", "")) if table else ""
        subscription, to_request = self.objects.watch(
            target.resource, where, resource_version=query.get("resourceVersion", ""),
            send_initial_events=query_flag(query, "sendInitialEvents"),
            allow_bookmarks=query_flag(query, "allowWatchBookmarks"),
            timeout=float(timeout) if timeout else None,
        )
        if table is None and to_request is None:
            return WatchResponse(subscription, read_timeout)
        convert = _same if to_request is None else to_request

        def present(obj: Obj, headers: bool) -> Obj:
            """An event's object converted to the request's version, as a Table if asked."""
            converted = convert(obj)
            if table is None:
                return converted
            return to_table(target.resource, converted, table, include, self._wall_clock(),
                            headers=headers)

        return WatchResponse(subscription, read_timeout, present)

    def _shard(self, verb: str, target: Target, query: dict[str, str]) -> ShardFilter | None:
        info = target.resource
        return self.sharding.requested(verb, info.group, info.plural, target.namespace, query)

    def _create(
        self, info: ServedResource, namespace: str, obj: Obj, options: WriteOptions
    ) -> Obj:
        served = from_crd(obj) if _is_crd(info) else []
        self.namespaces.admit_create(info, namespace, obj)
        created = self.objects.create(info, namespace, obj, options)
        if served:  # answered as created: the controllers establish it afterwards
            self._establish(created, served, options)
        return created

    def _update(self, target: Target, obj: Obj, options: WriteOptions) -> Obj:
        updated = self.objects.update(target.resource, target.namespace, target.name, obj,
                                      target.subresource, options)
        self.namespaces.finish(target.namespace)
        return self._after_crd_change(target, updated, options)

    def _after_crd_change(self, target: Target, crd: Obj, options: WriteOptions) -> Obj:
        """Re-serve a CRD's versions after a write to its main resource."""
        if not _is_crd(target.resource) or target.subresource:
            return crd
        return self._establish(crd, from_crd(crd), options)

    def _patch(
        self, target: Target, request: Request, query: dict[str, str], options: WriteOptions
    ) -> CoreResponse:
        info = target.resource
        content_type = (request.content_type or "").split(";", 1)[0].strip()
        kind = _PATCH_TYPES.get(content_type)
        if kind is None:
            raise StatusError.unsupported_route_media_type()
        if kind == "strategic" and info.custom:
            raise StatusError.unsupported_media_type()
        if kind == "apply":  # its fieldManager is required by write_options
            applied = _decode_yaml(request.body)
            if not isinstance(applied, dict):
                raise StatusError.bad_request("the applied configuration must be an object")
            existed = self._exists(target)
            if not existed:
                self.namespaces.admit_create(info, target.namespace, applied)
            patched = apply(self.objects.patch_function(info), self._field_manager, info,
                            target.namespace, target.name, target.subresource, applied,
                            force=query_flag(query, "force"), options=options)
            return written(200 if existed else 201,
                            self._after_crd_change(target, patched, options), options)
        document = _decode(request, require_object=False)
        if kind == "strategic":
            patcher = _strategic_patcher(info, document)
        elif kind == "json":
            patcher = lambda live: json_patch(live, document)  # noqa: E731
        else:
            patcher = lambda live: merge_patch(live, document)  # noqa: E731
        patched = self.objects.patch_function(info)(info, target.namespace, target.name,
                                                    patcher, target.subresource,
                                                    options=options)
        self.namespaces.finish(target.namespace)
        return written(200, self._after_crd_change(target, patched, options), options)

    def _delete(
        self, target: Target, request: Request, query: dict[str, str], options: WriteOptions
    ) -> CoreResponse:
        info = target.resource
        delete_options = decode_object(request) if request.body else {}
        options.requested = requested_delete_options(query, delete_options)
        # handlers/delete.go decodes a body's DeleteOptions and reads the query only without
        # one: a body without dryRun deletes for real whatever the query's dryRun says
        options.dry_run = "All" in (options.requested.get("dryRun") or ())
        policy = options.requested.get("propagationPolicy")
        if policy is not None and policy not in _PROPAGATION:  # ValidateDeleteOptions
            raise StatusError.invalid("meta.k8s.io", "DeleteOptions", "", [Cause(
                "FieldValueNotSupported", f'Unsupported value: "{policy}": supported values: '
                '"Foreground", "Background", "Orphan", "nil"', "propagationPolicy")])
        options.warnings += delete_warnings(info, options.requested)
        if not target.name:
            # store.go DeleteCollection lists, deletes each listed object and answers with
            # the list as it was read (items as listed, the list's resourceVersion)
            listed = self._list(target, query)
            self.objects.delete_collection(info, target.namespace, _filter(target, query),
                                           options)
            self.namespaces.finish(target.namespace)
            return written(200, listed, options)
        orphan = options.requested.get("orphanDependents")
        preconditions = delete_options.get("preconditions") or {}
        uid, version = preconditions.get("uid"), preconditions.get("resourceVersion")
        if is_namespace(info) and not preconditions:
            deleted_ns = self.objects.delete_namespace(
                info, target.name, options, lambda: self.namespaces.delete(target.name, options))
            return written(*delete_response(info, target.name, deleted_ns, orphan), options)
        deleted_obj = self.objects.delete(info, target.namespace, target.name, options,
                                          uid=uid, resource_version=version)
        self.namespaces.finish(target.namespace)
        if _is_crd(info) and not options.dry_run:
            self._drop_custom_resources(target.name)
        return written(*delete_response(info, target.name, deleted_obj, orphan), options)

    def _scale(self, target: Target, request: Request, query: dict[str, str]) -> CoreResponse:
        """GET, PUT or PATCH (merge or JSON patch) of the ``scale`` subresource."""
        info, namespace, name = target.resource, target.namespace, target.name
        if request.method == "GET":
            return json_response(200, self.objects.get_scale(info, namespace, name))
        options = write_options(query, request)
        change: Callable[[Obj], Obj]
        if request.method == "PUT":
            desired = decode_object(request)
            change = lambda _: desired  # noqa: E731
        elif request.method == "PATCH":
            content_type = (request.content_type or "").split(";", 1)[0].strip()
            kind = _PATCH_TYPES.get(content_type)
            if kind is None:
                raise StatusError.unsupported_route_media_type()
            if kind not in ("merge", "json", "strategic"):
                raise StatusError.unsupported_media_type()
            document = _decode(request, require_object=False)
            patch = json_patch if kind == "json" else merge_patch
            change = lambda scale: patch(scale, document)  # noqa: E731
        else:
            raise StatusError.method_not_allowed()
        return written(200, self.objects.update_scale(info, namespace, name, change, options),
                        options)

    def _finalize(self, target: Target, request: Request, query: dict[str, str]) -> CoreResponse:
        """PUT ``/api/v1/namespaces/{name}/finalize``, the namespace controller's last step:
        the body's ``spec.finalizers`` replace the stored ones and nothing else changes
        (``pkg/registry/core/namespace/strategy.go`` ``namespaceFinalizeStrategy``); a
        terminating namespace left without finalizers goes, answered as it was read
        (``store.go`` ``deleteWithoutFinalizers``, as ``ShouldDeleteNamespaceDuringUpdate``
        decides)."""
        if request.method != "PUT":
            raise StatusError.method_not_allowed()
        body = self._checked_body(target, request)
        meta = body.get("metadata") or {}
        if meta.get("name", target.name) != target.name:
            raise StatusError.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL "
                f"({target.name})")
        finalizers = list((body.get("spec") or {}).get("finalizers") or ())

        def change(namespace: Obj) -> None:
            spec = namespace.setdefault("spec", {})
            spec["finalizers"] = finalizers
            if not finalizers:
                del spec["finalizers"]

        options = write_options(query, request)
        return json_response(200, self.store.finalize(
            target.resource, "", target.name, change,
            resource_version=str(meta.get("resourceVersion") or ""), options=options))

    # -- CRDs ---------------------------------------------------------------------------------

    def _establish(self, crd: Obj, served: list[ServedResource], options: WriteOptions) -> Obj:
        """Serve the CRD's versions, then write its status as the CRD controllers do (see
        ``_crd_status``)."""
        if options.dry_run:
            return crd
        spec = crd["spec"]
        self.registry.replace(spec["group"], spec["names"]["plural"], served)
        self.conversions.track(crd)
        status = controlled_status(crd, self.store.timestamp())
        established = crd
        if crd.get("status") != status:
            info = self._lookup(_CRD_GROUP, "v1", _CRD_PLURAL)
            established = self.store.update(info, "", crd["metadata"]["name"],
                                            {**crd, "status": status}, "status",
                                            options=WriteOptions(field_manager="kube-apiserver"))
        # apiextensions-apiserver crd_handler.go: new storage (and watch cache) for a new CRD
        # or a changed spec; a status-only change keeps them
        name = crd["metadata"]["name"]
        if self._served_specs.get(name) != spec:
            self._served_specs[name] = copy_json(spec)
            self.store.start_watch_cache(spec["group"], spec["names"]["plural"])
        return established

    def _drop_custom_resources(self, crd_name: str) -> None:
        """The apiserver's CRD finalizer controller (apiextensions-apiserver
        ``pkg/controller/finalizer/crd_finalizer.go``), at once: delete every object of a
        deleted CRD's kind, stop serving it and remove the cleanup finalizer, so the CRD goes
        (on a cluster this follows the DELETE's answer within moments)."""
        plural, _, group = crd_name.partition(".")
        self._served_specs.pop(crd_name, None)
        removed = self.registry.remove(group, plural)
        self.conversions.forget(group, plural)
        if removed:
            self.store.delete_collection(removed[0], "", parse_filter(removed[0], "", "", ""))

        def drop_cleanup(crd: Obj) -> None:
            meta = crd["metadata"]
            meta["finalizers"] = [f for f in meta.get("finalizers") or ()
                                  if f != CRD_CLEANUP_FINALIZER]
            if not meta["finalizers"]:
                del meta["finalizers"]

        with contextlib.suppress(StatusError):  # already gone
            self.store.finalize(self._lookup(_CRD_GROUP, "v1", _CRD_PLURAL), "", crd_name,
                                drop_cleanup)

    def _on_write(
        self, info: ServedResource, old: Obj | None, new: Obj, subresource: str,
        options: WriteOptions,
    ) -> None:
        """The store's write hook: every create and update is recorded in managedFields (an
        apply records its own); then the Pod admission plugins change a new Pod (see
        ``_pod_admission``) and a new Service gets its cluster IP and node ports (see
        ``_services``). Both come after the recording, as on a real server, where admission
        and the Service storage's allocation follow the handler's field manager: the creator
        owns neither ``clusterIP`` nor a Pod's ``tolerations``."""
        if not (options.applying or options.fields_recorded):
            self._field_manager.update(info, old, new, options.field_manager, subresource,
                                       api_version=options.api_version or info.api_version,
                                       admitted=options.admitted)
        if old is None and _is_pods(info):
            self.pod_admission.admit(new)
        if old is None and (info.group, info.plural) == ("", "services"):
            self._services.allocate(new, dry_run=options.dry_run
                                    and not options.keep_allocations)

    def _node_exists(self, name: str) -> bool:
        return self._exists(Target(self._lookup("", "v1", "nodes"), "", name, ""))

    def _exists(self, target: Target) -> bool:
        try:
            self.store.get(target.resource, target.namespace, target.name)
        except StatusError:
            return False
        return True


def _review_path(parts: list[str]) -> tuple[tuple[str, str], str] | None:
    """The (group, resource) and namespace of a review's path, or None for other paths."""
    namespace = ""
    if len(parts) == 6 and parts[3] == "namespaces":
        namespace, parts = parts[4], [*parts[:3], parts[5]]
    resource = REVIEW_PATHS.get(tuple(parts))
    return None if resource is None else (resource, namespace)


def _untyped(item: Obj) -> Obj:
    """A built-in list's item as kube-apiserver writes it: without ``kind`` and
    ``apiVersion``. Typed objects leave storage with an empty TypeMeta (the versioning
    decoder clears it, apimachinery runtime/serializer/versioning ``Decode``) and only the
    top-level object gets its kind back on the way out, so a typed list's items have none;
    a custom resource's items are unstructured and keep theirs (recorded: every built-in
    list of the fidelity transcripts, e.g. builtins #37, against crd #37)."""
    return {key: value for key, value in item.items() if key not in ("kind", "apiVersion")}


def _same(obj: Obj) -> Obj:
    return obj


def _legacy_watch(parts: list[str]) -> list[str] | None:
    """The path of a deprecated ``/watch/`` request without its ``watch`` segment (apiserver
    pkg/endpoints/installer.go registers ``WATCH``/``WATCHLIST`` under the ``watch/`` prefix
    of each group version), or None."""
    at = 2 if parts[:1] == ["api"] else 3 if parts[:1] == ["apis"] else 0
    if at and len(parts) > at + 1 and parts[at] == "watch":
        return parts[:at] + parts[at + 1:]
    return None


def _named_watch(target: Target, query: dict[str, str]) -> tuple[Target, dict[str, str]]:
    """A watch of ``target``'s collection; a named one also selects ``metadata.name``, as
    apiserver pkg/endpoints/handlers/get.go ListResource does for a name in the path."""
    if not target.name:
        return target, query
    selector = ",".join(filter(None, (query.get("fieldSelector", ""),
                                      f"metadata.name={target.name}")))
    collection = Target(target.resource, target.namespace, "", "")
    return collection, {**query, "fieldSelector": selector}


def _filter(target: Target, query: dict[str, str], shard: ShardFilter | None = None
            ) -> WatchFilter:
    where = parse_filter(target.resource, target.namespace, query.get("labelSelector", ""),
                         query.get("fieldSelector", ""))
    return where if shard is None else dataclasses.replace(where, shard=shard.matches)


def _strategic_patcher(info: ServedResource, document: Any) -> Callable[[Obj], Obj]:
    """A strategic merge patch by the kind's patch metadata from the built-in documents."""
    schema = patch_schema(info.group, info.version, info.kind)

    def patcher(live: Obj) -> Obj:
        try:
            return strategic_merge_patch(live, document, schema)
        except StrategicMergePatchError as error:
            reason = {400: "BadRequest", 422: "Invalid"}.get(error.code, "")
            raise StatusError(error.code, reason, str(error)) from None

    return patcher


def _is_pods(info: ServedResource) -> bool:
    return (info.group, info.plural) == ("", "pods")


def _is_crd(info: ServedResource) -> bool:
    return (info.group, info.plural) == (_CRD_GROUP, _CRD_PLURAL)


def _is_json(request: Request) -> bool:
    """A body read as JSON (see ``_bodies.decode_object``)."""
    return (request.content_type or "").split(";", 1)[0].strip().lower() in (
        "", "application/json", "*/*")


def _refuse_other_builtin_kind(info: ServedResource, obj: Obj) -> None:
    """A built-in body the codec reads as another kind than the request's: refused as
    ``transformDecodeError`` words the codec's error — for a kind its apiVersion does not
    register, the scheme's "no kind is registered" (every built-in is in the legacy scheme);
    for another kind of the group, that kind's own decode errors."""
    given, kind = obj.get("apiVersion") or info.api_version, obj.get("kind") or info.kind
    if not (isinstance(given, str) and isinstance(kind, str)):
        return
    group, _, version = given.rpartition("/")
    if kind not in builtin_kinds(group_version_path(group, version)) and (
            group != info.group or kind != info.kind):
        raise StatusError.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {info.kind}: no kind '
            f'"{kind}" is registered for version "{given}" in scheme '
            '"pkg/api/legacyscheme/scheme.go:30"')
    if kind != info.kind:
        error = decode_error(group, kind, obj, into=info.kind)
        if error is not None:
            raise StatusError.bad_request(error)


#: What kube-apiserver's resource routes produce (v1.36, CBOR off).
_PRODUCES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def _check_acceptable(accept: str | None) -> None:
    """go-restful's route selection (``Route.matchesAccept``): some media range of
    ``Accept``, parameters cut, is ``*/*`` or exactly a type the route produces; else its
    406, written by ``errors.NewGenericServerResponse`` (details empty)."""
    if not accept:
        return
    for media_range in accept.split(","):
        media = media_range.split(";", 1)[0].strip()
        if media == "*/*" or media in _PRODUCES:
            return
    raise StatusError(406, "NotAcceptable", "406: Not Acceptable\n\nAvailable representations: "
                      + ", ".join(_PRODUCES), {})
