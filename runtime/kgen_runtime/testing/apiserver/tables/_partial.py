"""Metadata-only answers: ``Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io``.

As apiserver pkg/endpoints/handlers/response.go (``asPartialObjectMetadata``,
``asPartialObjectMetadataList``) builds them: each object's ObjectMeta under ``kind:
PartialObjectMetadata``, and a list keeping only its ``resourceVersion``, ``continue`` and
(v1) ``remainingItemCount``, each left out when empty.
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.testing.apiserver.tables._tables import meta_media

__all__ = ["as_partial_metadata", "partial_metadata_version"]

Obj = dict[str, Any]


def partial_metadata_version(accept: str | None, *, listing: bool) -> str | None:
    """The meta.k8s.io version of the metadata-only form asked for a list or an object."""
    return meta_media(accept, "PartialObjectMetadataList" if listing else "PartialObjectMetadata")


def as_partial_metadata(body: Obj, version: str) -> Obj:
    """``body`` (an object, or a list with ``items``) in its metadata-only form."""
    api_version = f"meta.k8s.io/{version}"
    if "items" not in body:
        return _partial(body, api_version)
    listed = body.get("metadata") or {}
    kept = ("resourceVersion", "continue", "remainingItemCount") if version == "v1" else (
        "resourceVersion", "continue")
    return {"kind": "PartialObjectMetadataList", "apiVersion": api_version,
            "metadata": {key: listed[key] for key in kept if listed.get(key) not in (None, "")},
            "items": [_partial(item, api_version) for item in body["items"]]}


def _partial(obj: Obj, api_version: str) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version,
            "metadata": obj.get("metadata") or {}}
