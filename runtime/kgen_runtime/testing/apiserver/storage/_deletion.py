"""What a DELETE of one object answers: the object or a ``Status``, and 200 or 202.

kube-apiserver's generic store (``k8s.io/apiserver/pkg/registry/generic/registry/store.go``)
answers a DELETE that removed the object with a ``Status{status: Success}`` whose details name
the resource (``finalizeDelete``), unless the kind's registry sets ``ReturnDeletedObject``; an
object that stays, marked with ``deletionTimestamp`` (finalizers, a Namespace turning
Terminating, a CRD waiting for its instances to go), is answered as it now is, whatever the
registry. The handler (``endpoints/handlers/delete.go``) then answers 202 instead of 200 when
the object stayed and the request asked ``orphanDependents: false``.

Before that, the store's ``Delete`` puts the garbage collector's finalizers on the object
(``deletionFinalizersForGarbageCollection``): ``orphan`` for Orphan propagation,
``foregroundDeletion`` for Foreground, per the kind's ``DefaultGarbageCollectionPolicy`` when
the request names none (:func:`gc_finalizers`); the object then stays, marked, until a client
removes them (the test server runs no garbage collector, like a bare kube-apiserver). A Job
deleted without a policy orphans its pods and says so in a warning (:func:`delete_warnings`).
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.testing.apiserver.storage._resources import ServedResource
from kgen_runtime.testing.apiserver.storage._strategy import is_crd

__all__ = ["RETURNS_DELETED_OBJECT", "delete_response", "delete_warnings", "gc_finalizers"]

Obj = dict[str, Any]

#: Built-in resources whose kube-apiserver v1.36 registry sets ``ReturnDeletedObject: true``
#: (``pkg/registry/<group>/<resource>/storage/storage.go``). The registries of the other
#: built-in resources leave it false (read: configmaps, secrets, endpoints, events,
#: limitranges, replicationcontrollers, nodes, deployments, replicasets, daemonsets,
#: controllerrevisions, jobs, cronjobs, roles, leases, endpointslices, poddisruptionbudgets,
#: runtimeclasses, horizontalpodautoscalers, validatingwebhookconfigurations, CSRs,
#: priorityclasses, csistoragecapacities, ingressclasses, ipaddresses, servicecidrs,
#: networkpolicies; not read, taken as false: statefulsets, the other rbac, flowcontrol,
#: admissionregistration and apiregistration ones), and so does
#: apiextensions-apiserver's custom resource store (``registry/customresource/etcd.go``).
#: A CRD's own REST ``Delete`` (``registry/customresourcedefinition/etcd.go``) always marks the
#: CRD first (``deletionTimestamp``, the ``customresourcecleanup`` finalizer), so it answers
#: with the CRD; the test server drops the CRD at once but answers the same way.
RETURNS_DELETED_OBJECT = frozenset({
    ("", "pods"),
    ("", "services"),
    ("", "serviceaccounts"),
    ("", "namespaces"),
    ("", "persistentvolumes"),
    ("", "persistentvolumeclaims"),
    ("", "resourcequotas"),
    ("", "podtemplates"),
    ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "volumeattachments"),
    ("storage.k8s.io", "csidrivers"),
    ("storage.k8s.io", "csinodes"),
    ("storage.k8s.io", "volumeattributesclasses"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceclaimtemplates"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "resourceslices"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
})


#: Strategies whose ``DefaultGarbageCollectionPolicy`` is not ``DeleteDependents``, for the
#: version a request uses (the policy depends on it): ``pkg/registry/batch/job/strategy.go``
#: and ``pkg/registry/core/replicationcontroller/strategy.go`` orphan for batch/v1 and v1 (for
#: backwards compatibility); ``pkg/registry/core/event/strategy.go`` answers ``Unsupported``
#: (no garbage-collector finalizers at all), and events.k8s.io shares that registry. A custom
#: resource's strategy has no policy, which the store reads as not orphaning.
_DEFAULT_GC_POLICY = {
    ("batch", "v1", "jobs"): "Orphan",
    ("", "v1", "replicationcontrollers"): "Orphan",
    ("", "v1", "events"): "Unsupported",
    ("events.k8s.io", "v1", "events"): "Unsupported",
}
_ORPHAN = "orphan"
_FOREGROUND = "foregroundDeletion"

#: ``deleteOptionWarnings`` of ``pkg/registry/batch/job/storage/storage.go``, sent by its
#: ``Delete`` and ``DeleteCollection`` when the request sets neither ``propagationPolicy`` nor
#: ``orphanDependents`` and the policy is to orphan.
JOB_ORPHAN_WARNING = ("child pods are preserved by default when jobs are deleted; set "
                      "propagationPolicy=Background to remove them or set "
                      "propagationPolicy=Orphan to suppress this warning")


def _default_policy(info: ServedResource) -> str:
    return _DEFAULT_GC_POLICY.get((info.group, info.version, info.plural), "")


def gc_finalizers(info: ServedResource, obj: Obj, requested: Obj) -> list[str] | None:
    """The finalizers a DELETE with DeleteOptions ``requested`` leaves on ``obj``: ``store.go``
    ``deletionFinalizersForGarbageCollection``, which removes ``orphan`` and
    ``foregroundDeletion`` and adds back what ``shouldOrphanDependents`` and
    ``shouldDeleteDependents`` decide (options first, then the object's own finalizers, then
    the kind's default policy). None when the set does not change — always for a CRD's
    first DELETE, which its REST ``Delete`` answers after only marking it."""
    meta = obj["metadata"]
    finalizers: list[str] = meta.get("finalizers") or []
    policy = _default_policy(info)
    if policy == "Unsupported" or (is_crd(info) and not meta.get("deletionTimestamp")):
        return None
    orphan_dependents = requested.get("orphanDependents")
    propagation = requested.get("propagationPolicy")
    own = next((f for f in finalizers if f in (_ORPHAN, _FOREGROUND)), None)
    if orphan_dependents is not None:
        orphan, foreground = bool(orphan_dependents), False
    elif propagation in ("Orphan", "Background", "Foreground"):
        orphan, foreground = propagation == "Orphan", propagation == "Foreground"
    elif own is not None:
        orphan, foreground = own == _ORPHAN, own == _FOREGROUND
    else:
        orphan, foreground = policy == "Orphan", False
    changed = [f for f in finalizers if f not in (_ORPHAN, _FOREGROUND)]
    changed += [_ORPHAN] * orphan + [_FOREGROUND] * foreground
    return None if set(changed) == set(finalizers) else changed


def delete_warnings(info: ServedResource, requested: Obj) -> list[str]:
    """The warnings a DELETE (or deleteCollection) of ``info`` answers with."""
    if ((info.group, info.plural) == ("batch", "jobs") and _default_policy(info) == "Orphan"
            and "propagationPolicy" not in requested and "orphanDependents" not in requested):
        return [JOB_ORPHAN_WARNING]
    return []


def delete_response(
    info: ServedResource, name: str, deleted: Obj, orphan_dependents: bool | None
) -> tuple[int, Obj]:
    """The status code and body answering the DELETE of ``name`` that left ``deleted``."""
    meta = deleted["metadata"]
    stayed = bool(meta.get("deletionTimestamp"))
    code = 202 if stayed and orphan_dependents is False else 200
    if stayed or (info.group, info.plural) in RETURNS_DELETED_OBJECT:
        return code, deleted
    details: Obj = {"name": name, **({"group": info.group} if info.group else {}),
                    "kind": info.plural, "uid": meta.get("uid", "")}
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                  "details": details}
