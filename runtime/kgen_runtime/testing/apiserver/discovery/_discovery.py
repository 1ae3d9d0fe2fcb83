"""Aggregated discovery: ``/api`` and ``/apis`` as ``apidiscovery.k8s.io/v2``
``APIGroupDiscoveryList`` when the Accept header asks for it (kubectl and client-go do).

As kube-apiserver serves it (apiserver pkg/endpoints/discovery/aggregated): ``/api`` lists
the core group, ``/apis`` every other group, built-in ones in kube-aggregator's priority
order and the rest by name; versions by Kubernetes version priority, resources and
subresources by name, each version ``freshness: Current``. Built-in resources carry the
recorded facts of :mod:`._discovery_builtins`; custom resources those
apiextensions-apiserver's discovery controller gives them (customresource_discovery_controller
.go: its verb order, ``responseKind`` with group and version). The answer has an ETag (the
SHA-512 of the document in uppercase hex) and is 304 Not Modified to a matching
``If-None-Match`` (aggregated/etag.go).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from kgen_runtime.testing.apiserver.discovery._discovery_builtins import (
    BUILTIN_DISCOVERY,
    GROUP_ORDER,
)
from kgen_runtime.testing.apiserver.endpoints._responses import BufferedResponse
from kgen_runtime.testing.apiserver.storage._registry import Registry, version_priority
from kgen_runtime.testing.apiserver.storage._resources import CUSTOM_RESOURCE_VERBS, ServedResource

__all__ = ["AGGREGATED_MEDIA_TYPE", "aggregated_discovery", "asks_for_aggregated"]

AGGREGATED_MEDIA_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_STATUS_VERBS = ["get", "patch", "update"]

Obj = dict[str, Any]


def asks_for_aggregated(accept: str | None) -> bool:
    """Whether the first media range of ``accept`` the server can produce is the v2
    aggregated list (v2beta1 is no longer served; plain JSON means the legacy documents)."""
    for media_range in (accept or "").split(","):
        media_type, *parameters = (part.strip() for part in media_range.split(";"))
        params = dict(p.split("=", 1) for p in parameters if "=" in p)
        if (media_type == "application/json" and params.get("g") == "apidiscovery.k8s.io"
                and params.get("v") == "v2" and params.get("as") == "APIGroupDiscoveryList"):
            return True
        if media_type in ("application/json", "*/*", "application/*") and not params:
            return False
    return False


def aggregated_discovery(registry: Registry, *, core: bool,
                         if_none_match: str | None) -> BufferedResponse:
    """``/api`` (``core``) or ``/apis`` as an APIGroupDiscoveryList, or 304."""
    body = orjson.dumps(_document(registry, core))
    etag = hashlib.sha512(body).hexdigest().upper()
    headers = {"Content-Type": AGGREGATED_MEDIA_TYPE, "Etag": f'"{etag}"', "Vary": "Accept"}
    if if_none_match is not None and if_none_match.strip('"') == etag:
        return BufferedResponse(304, b"", {"Etag": f'"{etag}"', "Vary": "Accept"})
    return BufferedResponse(200, body, headers)


def _document(registry: Registry, core: bool) -> Obj:
    groups: dict[str, dict[str, list[ServedResource]]] = {}
    for resource in registry.served():
        if (resource.group == "") == core:
            groups.setdefault(resource.group, {}).setdefault(resource.version, []).append(
                resource)
    rank = {group: index for index, group in enumerate(GROUP_ORDER)}
    items = []
    for group in sorted(groups, key=lambda name: (rank.get(name, len(rank)), name)):
        versions = groups[group]
        items.append({
            "metadata": {"name": group} if group else {},
            "versions": [{"version": version,
                          "resources": [_entry(r) for r in sorted(versions[version],
                                                                  key=lambda r: r.plural)],
                          "freshness": "Current"}
                         for version in sorted(versions, key=version_priority)],
        })
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {}, "items": items}


def _entry(resource: ServedResource) -> Obj:
    recorded = None if resource.custom else BUILTIN_DISCOVERY.get(
        (resource.group, resource.version, resource.plural))
    if recorded is not None:
        return {"resource": resource.plural, **recorded}
    kind = ({"group": resource.group, "version": resource.version, "kind": resource.kind}
            if resource.custom else {"group": "", "version": "", "kind": resource.kind})
    entry: Obj = {
        "resource": resource.plural, "responseKind": kind,
        "scope": "Namespaced" if resource.namespaced else "Cluster",
        "singularResource": resource.singular,
        "verbs": list(CUSTOM_RESOURCE_VERBS) if resource.custom else [
            "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    subresources = []
    if resource.scale is not None:
        subresources.append({"subresource": "scale", "responseKind": {
            "group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": _STATUS_VERBS})
    if resource.status_subresource:
        subresources.append({"subresource": "status", "responseKind": kind,
                             "verbs": _STATUS_VERBS})
    if subresources:
        entry["subresources"] = subresources
    return entry
