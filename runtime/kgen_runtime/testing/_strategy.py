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
    "CRD_CLEANUP_FINALIZER",
    "deletes_gracefully",
    "deletion_blocked",
    "is_crd",
    "is_namespace",
    "mark_deleting",
    "mark_graceful",
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


def is_crd(info: ServedResource) -> bool:
    return (info.group, info.plural) == ("apiextensions.k8s.io", "customresourcedefinitions")


#: What a CRD's own REST ``Delete`` (apiextensions-apiserver
#: ``pkg/registry/customresourcedefinition/etcd.go``) adds on the first DELETE; the
#: apiserver's CRD finalizer controller deletes the instances, then removes it.
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def deletion_blocked(info: ServedResource, obj: Obj) -> bool:
    """Whether a deleted object must stay (marked) rather than go: it has finalizers (a
    Namespace: also ``spec.finalizers``; a CRD not yet marked: the cleanup one it gets)."""
    meta = obj["metadata"]
    if meta.get("finalizers"):
        return True
    if is_crd(info):
        return not meta.get("deletionTimestamp")
    return is_namespace(info) and bool((obj.get("spec") or {}).get("finalizers"))


def deletes_gracefully(info: ServedResource) -> bool:
    """Whether the kind's strategy is a ``RESTGracefulDeleteStrategy`` (Pods only)."""
    return (info.group, info.plural) == ("", "pods")


def mark_graceful(obj: Obj, now: str) -> None:
    """``rest.BeforeDelete`` for a graceful kind: ``deletionTimestamp`` now plus the grace
    period, ``deletionGracePeriodSeconds`` and one more ``generation``. The period is 0: the
    Pod strategy's ``CheckGracefulDelete`` gives 0 to a pod not bound to a node (every pod
    here, there being no scheduler) or finished; a bound one would wait for its kubelet,
    which the test server does not have, so it goes at once too."""
    meta = obj["metadata"]
    meta["deletionTimestamp"] = now
    meta["deletionGracePeriodSeconds"] = 0
    if meta.get("generation"):
        meta["generation"] += 1


def mark_deleting(info: ServedResource, obj: Obj, now: str) -> None:
    """Mark ``obj`` as being deleted, once: ``store.go`` ``markAsDeleting`` sets
    ``deletionTimestamp`` (kept if already set), ``deletionGracePeriodSeconds: 0`` and bumps
    ``generation`` the first time; a Namespace's own ``Delete``
    (``pkg/registry/core/namespace/storage/storage.go``) sets only ``deletionTimestamp`` and
    the ``Terminating`` phase."""
    meta = obj["metadata"]
    first = not meta.get("deletionTimestamp")
    if first:
        meta["deletionTimestamp"] = now
    if is_crd(info):  # the CRD's REST Delete: finalizer and Terminating condition, once
        if first:
            meta["finalizers"] = [*(meta.get("finalizers") or ()), CRD_CLEANUP_FINALIZER]
            status = obj.setdefault("status", {})
            status["conditions"] = [*(status.get("conditions") or ()), {
                "type": "Terminating", "status": "True", "lastTransitionTime": now,
                "reason": "InstanceDeletionPending", "message": "CustomResourceDefinition "
                "marked for deletion; CustomResource deletion will begin soon"}]
        return
    if is_namespace(info):
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
        return
    meta["deletionGracePeriodSeconds"] = 0
    if first and meta.get("generation"):
        meta["generation"] += 1
