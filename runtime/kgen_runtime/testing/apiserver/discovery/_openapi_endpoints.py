"""``/openapi/v3`` and ``/openapi/v2`` of the test server (kube-openapi's handlers).

* ``/openapi/v3`` lists one document per served group/version:
  ``{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=..."}}}``;
  the hash is the SHA-512 of the document (uppercase hex), and a request with a stale hash is
  redirected (301) to the current one, as the real server does. The index is text/plain
  with ``Last-Modified`` (304 to ``If-Modified-Since``), a document has its hash as ETag
  (304 to ``If-None-Match``): both go through Go's ``http.ServeContent``.
* ``/openapi/v3/<path>`` is the shipped document of a built-in group/version, or — for the
  group/versions of installed CRDs — a document built the way apiextensions-apiserver builds
  it: one schema per kind (``<reversed group>.<version>.<Kind>``, with
  ``x-kubernetes-group-version-kind`` and ``metadata`` referring to ObjectMeta) and its list,
  the apimachinery schemas they use, and the resource's paths with
  ``x-kubernetes-action``/``x-kubernetes-group-version-kind`` on every operation.
* ``/openapi/v2`` is the Swagger 2.0 form of all of them: every schema under ``definitions``
  (references rewritten, ``allOf`` wrappers unwrapped); no ``paths``.

Built-in documents are serialised once per process; CRD documents per request.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

import orjson

from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.endpoints._responses import BufferedResponse
from kgen_runtime.testing.apiserver.openapi._openapi import (
    builtin_document,
    builtin_paths,
    group_version_path,
)
from kgen_runtime.testing.apiserver.storage._registry import Registry
from kgen_runtime.testing.apiserver.storage._resources import ServedResource

__all__ = ["OpenAPIEndpoints"]

Obj = dict[str, Any]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_REF = "#/components/schemas/"
#: The built-in document whose apimachinery schemas a CRD document includes.
_META_SOURCE = "apis/coordination.k8s.io/v1"
_CRD_INFO = {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}
_API_VERSION_DESCRIPTION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources")
_KIND_DESCRIPTION = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds")
_MEDIA = ("application/json", "application/yaml")


class OpenAPIEndpoints:
    """Answers GETs under ``/openapi`` from the shipped documents and the served CRDs."""

    def __init__(self, registry: Registry, wall_clock: Callable[[], datetime]) -> None:
        self._registry = registry
        self._wall_clock = wall_clock
        self._index: tuple[bytes, datetime] | None = None  # the index, and since when

    def handle(self, parts: list[str], query: dict[str, str],
               request_headers: Callable[[str], str | None]) -> BufferedResponse | None:
        """The response for path ``parts`` (``["openapi", ...]``), ``None`` if not OpenAPI;
        ``request_headers`` looks up the request's ``If-None-Match``/``If-Modified-Since``."""
        if parts[:1] != ["openapi"]:
            return None
        if parts == ["openapi", "v2"]:
            return _json(orjson.dumps(self._swagger()))
        if parts == ["openapi", "v3"]:
            return self._index_response(request_headers("If-Modified-Since"))
        if len(parts) > 2 and parts[1] == "v3":
            path = "/".join(parts[2:])
            body = self._documents().get(path)
            if body is None:
                raise StatusError.no_route()
            etag = _hash(body)
            requested = query.get("hash")
            if requested and requested != etag:
                return BufferedResponse(301, b"", {
                    "Location": f"/openapi/v3/{path}?hash={etag}"})
            headers = {"Etag": f'"{etag}"'}
            if requested:
                headers["Cache-Control"] = "public, immutable"
            if request_headers("If-None-Match") == f'"{etag}"':  # http.ServeContent
                return BufferedResponse(304, b"", headers)
            return _json(body, headers)
        raise StatusError.no_route()

    def _index_response(self, if_modified_since: str | None) -> BufferedResponse:
        """kube-openapi handler3's discovery: served by Go's ``http.ServeContent``, so its
        JSON is sniffed as text/plain, it is ``Last-Modified`` when the documents last
        changed (to the second) and 304 to an ``If-Modified-Since`` not before that."""
        body = orjson.dumps({"paths": {
            path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={_hash(document)}"}
            for path, document in sorted(self._documents().items())}})
        if self._index is None or self._index[0] != body:
            self._index = (body, self._wall_clock().astimezone(UTC).replace(microsecond=0))
        modified = self._index[1]
        headers = {"Last-Modified": format_datetime(modified, usegmt=True)}
        since = _http_date(if_modified_since)
        if since is not None and modified <= since:
            return BufferedResponse(304, b"", headers)
        return BufferedResponse(200, body, {**headers,
                                            "Content-Type": "text/plain; charset=utf-8"})

    def _documents(self) -> dict[str, bytes]:
        """Every served group/version's document, serialised."""
        served = self._registry.served()
        documents = {path: _builtin_body(path) for path in builtin_paths()
                     if any(group_version_path(r.group, r.version) == path and not r.custom
                            for r in served)}
        custom: dict[str, list[ServedResource]] = {}
        for resource in served:
            if resource.custom:
                custom.setdefault(group_version_path(resource.group, resource.version),
                                  []).append(resource)
        for path, resources in custom.items():
            documents[path] = orjson.dumps(crd_document(resources),
                                           option=orjson.OPT_SORT_KEYS)
        return documents

    def _swagger(self) -> Obj:
        definitions: Obj = {}
        for body in self._documents().values():
            schemas = (orjson.loads(body).get("components") or {}).get("schemas") or {}
            for name, schema in schemas.items():
                definitions.setdefault(name, _to_v2(schema))
        return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.36.0-kgen"},
                "paths": {}, "definitions": dict(sorted(definitions.items()))}


@functools.cache
def _builtin_body(path: str) -> bytes:
    return orjson.dumps(builtin_document(path), option=orjson.OPT_SORT_KEYS)


@functools.lru_cache(maxsize=64)
def _hash(body: bytes) -> str:
    """SHA-512 in uppercase hex (kube-openapi's ETag); cached, as built-in bodies repeat."""
    return hashlib.sha512(body).hexdigest().upper()


def _http_date(text: str | None) -> datetime | None:
    """An HTTP date header's time, or None if absent or unreadable (then ignored)."""
    if not text:
        return None
    try:
        return parsedate_to_datetime(text).astimezone(UTC)
    except (TypeError, ValueError):
        return None


def _json(body: bytes, headers: dict[str, str] | None = None) -> BufferedResponse:
    return BufferedResponse(200, body, headers)


# -- CRD documents ----------------------------------------------------------------------------

def crd_document(resources: Iterable[ServedResource]) -> Obj:
    """The OpenAPI v3 document of one group/version served by CRDs."""
    schemas: Obj = {}
    paths: Obj = {}
    for resource in sorted(resources, key=lambda r: r.plural):
        name = _schema_name(resource)
        schemas[name] = _kind_schema(resource)
        schemas[name + "List"] = _list_schema(resource, name)
        paths.update(_paths(resource, name))
    meta = builtin_document(_META_SOURCE) or {}
    for meta_name, schema in meta["components"]["schemas"].items():
        if meta_name.startswith(_META) or meta_name.startswith("io.k8s.apimachinery.pkg."):
            schemas.setdefault(meta_name, schema)
    return {"openapi": "3.0.0", "info": dict(_CRD_INFO), "paths": paths,
            "components": {"schemas": schemas}}


def _schema_name(resource: ServedResource) -> str:
    return ".".join([*reversed(resource.group.split(".")), resource.version, resource.kind])


def _gvk(resource: ServedResource, kind: str) -> Obj:
    return {"group": resource.group, "kind": kind, "version": resource.version}


def _kind_schema(resource: ServedResource) -> Obj:
    schema = copy.deepcopy(resource.schema or {"type": "object"})
    properties = schema.setdefault("properties", {})
    properties["apiVersion"] = {"description": _API_VERSION_DESCRIPTION, "type": "string"}
    properties["kind"] = {"description": _KIND_DESCRIPTION, "type": "string"}
    properties["metadata"] = {
        "allOf": [{"$ref": f"{_REF}{_META}ObjectMeta"}],
        "description": "Standard object's metadata. More info: https://git.k8s.io/community/"
                       "contributors/devel/sig-architecture/api-conventions.md#metadata"}
    schema["type"] = "object"
    schema["x-kubernetes-group-version-kind"] = [_gvk(resource, resource.kind)]
    return schema


def _list_schema(resource: ServedResource, name: str) -> Obj:
    return {
        "description": f"{resource.kind}List is a list of {resource.kind}",
        "properties": {
            "apiVersion": {"description": _API_VERSION_DESCRIPTION, "type": "string"},
            "items": {"description": f"List of {resource.plural}. More info: https://git.k8s.io"
                                     "/community/contributors/devel/sig-architecture/"
                                     "api-conventions.md",
                      "items": {"$ref": f"{_REF}{name}"}, "type": "array"},
            "kind": {"description": _KIND_DESCRIPTION, "type": "string"},
            "metadata": {"allOf": [{"$ref": f"{_REF}{_META}ListMeta"}],
                         "description": "Standard list metadata. More info: https://git.k8s.io"
                                        "/community/contributors/devel/sig-architecture/"
                                        "api-conventions.md#metadata"},
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [_gvk(resource, resource.kind + "List")],
    }


def _paths(resource: ServedResource, name: str) -> Obj:
    """The resource's paths, with the operations a CRD's document lists."""
    base = f"/apis/{resource.group}/{resource.version}"
    scoped = f"{base}/namespaces/{{namespace}}/{resource.plural}" if resource.namespaced \
        else f"{base}/{resource.plural}"
    names = _OperationNames(resource)
    one, many = f"{_REF}{name}", f"{_REF}{name}List"
    status = f"{_REF}{_META}Status"
    kind = resource.kind
    path_params = [_path_param("namespace")] if resource.namespaced else []
    item_params = [_path_param("name"), *path_params]
    paths: Obj = {
        scoped: {
            "get": names.op("list", f"list or watch objects of kind {kind}", many,
                            names.id("list", namespaced=True)),
            "post": names.op("post", f"create a {kind}", one, names.id("create", True), body=one,
                             codes=("200", "201", "202")),
            "delete": names.op("deletecollection", f"delete collection of {kind}", status,
                               names.id("delete", True, collection=True),
                               body=f"{_REF}{_META}DeleteOptions"),
            "parameters": path_params,
        },
        f"{scoped}/{{name}}": {
            "get": names.op("get", f"read the specified {kind}", one, names.id("read", True)),
            "put": names.op("put", f"replace the specified {kind}", one,
                            names.id("replace", True), body=one, codes=("200", "201")),
            "patch": names.op("patch", f"partially update the specified {kind}", one,
                              names.id("patch", True), body=f"{_REF}{_META}Patch",
                              codes=("200", "201")),
            "delete": names.op("delete", f"delete a {kind}", status, names.id("delete", True),
                               body=f"{_REF}{_META}DeleteOptions", codes=("200", "202")),
            "parameters": item_params,
        },
    }
    if resource.namespaced:
        paths[f"{base}/{resource.plural}"] = {
            "get": names.op("list", f"list or watch objects of kind {kind}", many,
                            names.id("list", False, all_namespaces=True)),
            "parameters": [],
        }
    if resource.status_subresource:
        paths[f"{scoped}/{{name}}/status"] = names.subresource("status", one, item_params)
    if resource.scale is not None:
        scale = f"{_REF}io.k8s.api.autoscaling.v1.Scale"
        paths[f"{scoped}/{{name}}/scale"] = names.subresource("scale", scale, item_params)
    return paths


class _OperationNames:
    """operationIds and operations in the apiserver's style (``readExampleComV1NamespacedFoo``)."""

    def __init__(self, resource: ServedResource) -> None:
        self._resource = resource
        words = [*resource.group.replace("-", ".").split("."), resource.version]
        self._group_version = "".join(w[:1].upper() + w[1:] for w in words if w)
        self._tag = f"{resource.group.replace('.', '')}_{resource.version}"

    def id(self, verb: str, namespaced: bool, *, collection: bool = False,
           all_namespaces: bool = False, suffix: str = "") -> str:
        scope = "Namespaced" if namespaced and self._resource.namespaced else ""
        return (f"{verb}{self._group_version}{'Collection' if collection else ''}{scope}"
                f"{self._resource.kind}{suffix}{'ForAllNamespaces' if all_namespaces else ''}")

    def op(self, action: str, description: str, response: str, operation_id: str, *,
           body: str | None = None, codes: tuple[str, ...] = ("200",)) -> Obj:
        content = {media: {"schema": {"$ref": response}} for media in _MEDIA}
        responses: Obj = {code: {"description": _CODE_TEXT[code], "content": content}
                          for code in codes}
        responses["401"] = {"description": "Unauthorized"}
        operation: Obj = {
            "description": description,
            "operationId": operation_id,
            "responses": responses,
            "tags": [self._tag],
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": _gvk(self._resource, self._resource.kind),
        }
        if body is not None:
            operation["requestBody"] = {"content": {"*/*": {"schema": {"$ref": body}}},
                                        "required": True}
        if parameters := _write_parameters(action):
            operation["parameters"] = copy.deepcopy(parameters)
        return operation

    def subresource(self, name: str, schema: str, parameters: list[Obj]) -> Obj:
        kind = self._resource.kind
        title = name.capitalize()
        return {
            "get": self.op("get", f"read {name} of the specified {kind}", schema,
                           self.id("read", True, suffix=title)),
            "put": self.op("put", f"replace {name} of the specified {kind}", schema,
                           self.id("replace", True, suffix=title), body=schema,
                           codes=("200", "201")),
            "patch": self.op("patch", f"partially update {name} of the specified {kind}",
                             schema, self.id("patch", True, suffix=title),
                             body=f"{_REF}{_META}Patch", codes=("200", "201")),
            "parameters": parameters,
        }


_CODE_TEXT = {"200": "OK", "201": "Created", "202": "Accepted"}
_DEPLOYMENTS = "/apis/apps/v1/namespaces/{namespace}/deployments"


@functools.cache
def _write_parameters(action: str) -> tuple[Obj, ...]:
    """The query parameters kube-apiserver documents on every resource's ``post``, ``put``
    and ``patch`` (``dryRun``, ``fieldManager``, ``fieldValidation``, and ``force`` on
    patch), taken from the bundled apps/v1 document. kubectl's apply looks for
    ``fieldValidation`` on the kind's PATCH operation; without it, it validates on the client
    with /openapi/v2 in protobuf."""
    if action not in ("post", "put", "patch"):
        return ()
    document = builtin_document(group_version_path("apps", "v1")) or {}
    path = _DEPLOYMENTS if action == "post" else f"{_DEPLOYMENTS}/{{name}}"
    operation = ((document.get("paths") or {}).get(path) or {}).get(action) or {}
    return tuple(p for p in operation.get("parameters") or () if p.get("in") == "query")


def _path_param(name: str) -> Obj:
    description = ("name of the resource" if name == "name" else
                   "object name and auth scope, such as for teams and projects")
    return {"description": description, "in": "path", "name": name, "required": True,
            "schema": {"type": "string", "uniqueItems": True}}


# -- Swagger 2.0 ------------------------------------------------------------------------------

def _to_v2(schema: Any) -> Any:
    """An OpenAPI v3 schema as a Swagger 2.0 definition."""
    if isinstance(schema, list):
        return [_to_v2(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return {"$ref": all_of[0]["$ref"].replace(_REF, "#/definitions/")}
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            converted[key] = value.replace(_REF, "#/definitions/")
        elif key in ("properties", "patternProperties") and isinstance(value, dict):
            converted[key] = {name: _to_v2(v) for name, v in value.items()}
        elif key != "nullable":
            converted[key] = _to_v2(value)
    return converted
