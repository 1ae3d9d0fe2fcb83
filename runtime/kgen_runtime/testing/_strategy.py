"""What a write may set, per verb: the API server's create/update strategies, generically.

``prepare_identity`` checks and fills the type and namespace of a request body;
``prepare_update`` keeps server-owned metadata and splits writes at the status subresource
(an update ignores status, a status update ignores everything else); ``outside_metadata`` is
what ``metadata.generation`` tracks. ``deletion_blocked`` and ``mark_deleting`` say what
keeps a deleted object (finalizers; for a Namespace also ``spec.finalizers``) and how it is
marked.
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.meta import copy_json
from kgen_runtime.testing._resources import ServedResource
from kgen_runtime.testing._services import keep_allocated
from kgen_runtime.testing._status import StatusError

__all__ = [
    "deletion_blocked",
    "is_namespace",
    "mark_deleting",
    "outside_metadata",
    "prepare_identity",
    "prepare_update",
]

Obj = dict[str, Any]


def drop_empty_metadata(meta: Obj) -> None:
    """Leave out what ObjectMeta's JSON encoding omits: every field is ``omitempty`` or a
    pointer (apimachinery pkg/apis/meta/v1/types.go), so empty strings, maps and lists,
    nulls and a zero ``generation`` do not survive a write. Built-in kinds decode into the
    Go type; custom resources get the same through apiextensions-apiserver's
    schema/objectmeta Coerce, which round-trips metadata through ObjectMeta. An empty
    ``managedFields`` stays: the field manager reads it as a reset (a decoded empty slice is
    not nil), and it is the field manager that writes it out."""
    for key in [key for key, value in meta.items() if key != "managedFields" and (
            value is None or value == "" or value == {} or value == []
            or (key == "generation" and value == 0))]:
        del meta[key]


def prepare_identity(info: ServedResource, namespace: str, obj: Obj) -> Obj:
    """Check and fill ``apiVersion``, ``kind`` and ``metadata.namespace``; returns metadata."""
    if not isinstance(obj, dict):
        raise StatusError.bad_request("the request body must be a JSON object")
    for field, expected in (("kind", info.kind), ("apiVersion", info.api_version)):
        given = obj.get(field)
        if given and given != expected and not (field == "apiVersion" and info.custom):
            raise StatusError.bad_request(
                f"the {field} of the provided object ({given}) does not match the {field} "
                f"of the request ({expected})")
        obj[field] = expected
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise StatusError.bad_request("metadata must be an object")
    drop_empty_metadata(meta)
    if info.namespaced:
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise StatusError.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request")
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    return meta


def prepare_update(info: ServedResource, old: Obj, obj: Obj, subresource: str) -> Obj:
    """What an update may change: everything but server-owned metadata, split at status."""
    if subresource == "status":
        new: Obj = copy_json(old)
        if "status" in obj:
            new["status"] = obj["status"]
        else:
            new.pop("status", None)
        # An apply to /status has recorded its manager in the object it merged; an update's
        # entry is recorded after this from the stored object's.
        managed = (obj.get("metadata") or {}).get("managedFields")
        if managed is not None:
            new.setdefault("metadata", {})["managedFields"] = managed
        return new
    new = obj
    if info.status_subresource:
        if "status" in old:
            new["status"] = copy_json(old["status"])
        else:
            new.pop("status", None)
    if (info.group, info.plural) == ("", "services"):
        keep_allocated(new, old)
    if is_namespace(info):  # only the namespace controller's /finalize changes them
        new["spec"] = {**(new.get("spec") or {}),
                       "finalizers": list((old.get("spec") or {}).get("finalizers") or [])}
    meta, old_meta = new["metadata"], old["metadata"]
    for field in ("uid", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation"):
        if field in old_meta:
            meta[field] = old_meta[field]
        else:
            meta.pop(field, None)
    return new


def outside_metadata(obj: Obj, info: ServedResource) -> Obj:
    skip = ("metadata", "status") if info.status_subresource else ("metadata",)
    return {key: value for key, value in obj.items() if key not in skip}


def is_namespace(info: ServedResource) -> bool:
    return (info.group, info.plural) == ("", "namespaces")


def deletion_blocked(info: ServedResource, obj: Obj) -> bool:
    """Whether a deleted object must stay (marked) rather than go: it has finalizers."""
    if obj["metadata"].get("finalizers"):
        return True
    return is_namespace(info) and bool((obj.get("spec") or {}).get("finalizers"))


def mark_deleting(info: ServedResource, obj: Obj, now: str) -> None:
    """Mark ``obj`` as being deleted: ``deletionTimestamp``; a Namespace turns Terminating."""
    meta = obj["metadata"]
    meta["deletionTimestamp"] = now
    meta["deletionGracePeriodSeconds"] = 0
    if "generation" in meta:
        meta["generation"] += 1
    if is_namespace(info):
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
