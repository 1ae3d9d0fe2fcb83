"""What a DELETE of one object answers: the object or a ``Status``, and 200 or 202.

kube-apiserver's generic store (``k8s.io/apiserver/pkg/registry/generic/registry/store.go``)
answers a DELETE that removed the object with a ``Status{status: Success}`` whose details name
the resource (``finalizeDelete``), unless the kind's registry sets ``ReturnDeletedObject``; an
object that stays, marked with ``deletionTimestamp`` (finalizers, a Namespace turning
Terminating, a CRD waiting for its instances to go), is answered as it now is, whatever the
registry. The handler (``endpoints/handlers/delete.go``) then answers 202 instead of 200 when
the object stayed and the request asked ``orphanDependents: false``.
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.testing._resources import ServedResource

__all__ = ["RETURNS_DELETED_OBJECT", "delete_response"]

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
