"""What a write may set, per verb: the API server's create/update strategies, generically.

``prepare_identity`` checks and fills the type and namespace of a request body;
``prepare_update`` keeps server-owned metadata and splits writes at the status subresource
(an update ignores status, a status update ignores everything else); ``next_generation``
says what ``metadata.generation`` becomes, for the kinds whose strategy keeps one.
``deletion_blocked`` and ``mark_deleting`` say what keeps a deleted object (finalizers; for a
Namespace also ``spec.finalizers``) and how it is marked.
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.cel._quantity import parse_quantity
from kgen_runtime.meta import copy_json
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.encoding._go_json import unmarshal_type
from kgen_runtime.testing.apiserver.storage._crd_status import initial_status
from kgen_runtime.testing.apiserver.storage._resources import BUILTINS, ServedResource
from kgen_runtime.testing.apiserver.storage._services import keep_allocated

__all__ = [
    "CRD_CLEANUP_FINALIZER",
    "deletes_gracefully",
    "deletion_blocked",
    "has_generation",
    "is_builtin",
    "is_crd",
    "is_namespace",
    "mark_deleting",
    "mark_graceful",
    "next_generation",
    "prepare_for_create",
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
    if not isinstance(meta, dict) and not info.custom:
        # encoding/json's UnmarshalTypeError in transformDecodeError's words
        shown = unmarshal_type(meta)
        raise StatusError.bad_request(
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
            f"json: cannot unmarshal {shown} into Go struct field {info.kind}.metadata of "
            "type v1.ObjectMeta")
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


#: The built-in kinds whose strategy keeps ``metadata.generation``: ``PrepareForCreate`` sets
#: it to 1 and ``PrepareForUpdate`` adds one when these top-level fields change. Every other
#: built-in kind (ConfigMap, Secret, Service, Namespace, ServiceAccount, RBAC, Lease, Event,
#: Node, PersistentVolume(Claim), PodTemplate, HorizontalPodAutoscaler without the
#: HPAGeneration gate, ...) has none. Each row: pkg/registry/<group>/<kind>/strategy.go of
#: kubernetes/kubernetes.
_GENERATION: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): ("spec",),  # core/pod: PrepareForCreate, updatePodGeneration
    ("", "ReplicationController"): ("spec",),  # core/replicationcontroller
    # apps/deployment: "annotation updates bump the generation because annotations are
    # copied from deployments to their replica sets"
    ("apps", "Deployment"): ("spec", "metadata.annotations"),
    ("apps", "ReplicaSet"): ("spec",),  # apps/replicaset
    ("apps", "StatefulSet"): ("spec",),  # apps/statefulset
    ("apps", "DaemonSet"): ("spec",),  # apps/daemonset (templateGeneration aside)
    ("batch", "Job"): ("spec",),  # batch/job
    ("batch", "CronJob"): ("spec",),  # batch/cronjob
    ("networking.k8s.io", "Ingress"): ("spec",),  # networking/ingress
    ("networking.k8s.io", "IngressClass"): ("spec",),  # networking/ingressclass
    ("networking.k8s.io", "NetworkPolicy"): ("spec",),  # networking/networkpolicy
    ("policy", "PodDisruptionBudget"): ("spec",),  # policy/poddisruptionbudget
    ("apiextensions.k8s.io", "CustomResourceDefinition"): ("spec",),  # apiextensions-apiserver
    # admissionregistration/{mutating,validating}webhookconfiguration: "reflect.DeepEqual(
    # oldIC.Webhooks, newIC.Webhooks)"
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): ("webhooks",),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): ("webhooks",),
    # admissionregistration/{validating,mutating}admissionpolicy(binding)
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): ("spec",),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): ("spec",),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): ("spec",),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): ("spec",),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): ("spec",),  # flowcontrol/flowschema
    # flowcontrol/prioritylevelconfiguration
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): ("spec",),
    ("resource.k8s.io", "DeviceClass"): ("spec",),  # resource/deviceclass
    ("resource.k8s.io", "ResourceSlice"): ("spec",),  # resource/resourceslice
}


def has_generation(info: ServedResource) -> bool:
    """Whether the kind's objects carry ``metadata.generation`` (set to 1 on create): custom
    resources (apiextensions-apiserver pkg/registry/customresource/strategy.go; a kind served
    from a generated package is one) and the built-in kinds of :data:`_GENERATION`."""
    return not is_builtin(info) or (info.group, info.kind) in _GENERATION


def next_generation(info: ServedResource, old: Obj, new: Obj) -> int | None:
    """``new``'s generation after an update from ``old``: one more when what the kind's
    strategy compares changed (a custom resource: everything but metadata, and status when
    it is a subresource); None for kinds without one."""
    generation: int | None = old["metadata"].get("generation")
    if generation is None or not has_generation(info):
        return generation
    if is_builtin(info):
        changed = any(_at_path(new, path) != _at_path(old, path)
                      for path in _GENERATION[(info.group, info.kind)])
    else:
        skip = {"metadata", "status"} if info.status_subresource else {"metadata"}
        changed = any(new.get(key) != old.get(key) for key in {*new, *old} - skip)
    return generation + 1 if changed else generation


_BUILTIN_KINDS = frozenset((resource.group, resource.kind) for resource in BUILTINS)


def is_builtin(info: ServedResource) -> bool:
    """Whether ``info`` is a kind of the built-in catalogue (not a custom resource)."""
    return not info.custom and (info.group, info.kind) in _BUILTIN_KINDS


def _at_path(obj: Obj, path: str) -> Any:
    value: Any = obj
    for part in path.split("."):
        value = (value or {}).get(part)
    return value


def prepare_for_create(info: ServedResource, obj: Obj) -> None:
    """What a kind's ``PrepareForCreate`` sets beyond generation, once the object has its
    uid: a Pod starts ``Pending`` with its QoS class (pkg/registry/core/pod/strategy.go); a
    Job gets its generated selector (pkg/registry/batch/job/strategy.go); a Namespace is
    ``Active`` with the ``kubernetes`` finalizer (pkg/registry/core/namespace/strategy.go); a
    CRD's status is reset but for its storage version (:mod:`._crd_status`). As on a real
    server, this follows the field manager: the creator owns none of it."""
    if not is_builtin(info):
        return
    if (info.group, info.kind) == ("", "Pod"):
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}
    elif (info.group, info.kind) == ("batch", "Job"):
        _generate_job_selector(obj)
    elif is_namespace(info):
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        finalizers = spec.get("finalizers") or []
        if "kubernetes" not in finalizers:
            spec["finalizers"] = [*finalizers, "kubernetes"]
    elif is_crd(info):
        obj["status"] = initial_status(obj)


def _generate_job_selector(job: Obj) -> None:
    """``generateSelectorIfNeeded``: unless ``manualSelector``, the pod template is labelled
    with the job's name and uid (legacy and ``batch.kubernetes.io/`` keys) and the selector
    matches the uid. Then, as the object comes back from etcd through defaulting,
    pkg/apis/batch/v1/defaults.go ``SetDefaults_Job`` gives a Job without labels its
    template's."""
    spec = job.get("spec") or {}
    meta = job["metadata"]
    if spec.get("manualSelector") is True:
        return
    template = spec.setdefault("template", {})
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        labels.setdefault(key, meta.get("name", ""))
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        labels.setdefault(key, meta["uid"])
    selector = spec.get("selector") or {}
    spec["selector"] = selector
    match = selector.setdefault("matchLabels", {})
    match.setdefault("batch.kubernetes.io/controller-uid", meta["uid"])
    if not meta.get("labels"):
        meta["labels"] = dict(labels)


def qos_class(spec: Obj) -> str:
    """pkg/apis/core/helper/qos ``ComputePodQOS``: from the cpu and memory requests and
    limits of every container (init containers included) and of the pod, if it has any."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    pod_level = spec.get("resources")
    sources = [pod_level] if pod_level else [c.get("resources") or {} for c in containers
                                             if isinstance(c, dict)]
    for resources in sources:
        for name, quantity in _positive(resources.get("requests")).items():
            requests[name] = requests.get(name, 0) + quantity
        given = _positive(resources.get("limits"))
        for name, quantity in given.items():
            limits[name] = limits.get(name, 0) + quantity
        if set(given) != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == value for name, value in requests.items()) and (
            len(requests) == len(limits)):
        return "Guaranteed"
    return "Burstable"


def _positive(quantities: Any) -> dict[str, Any]:
    """The cpu and memory quantities above zero (``isSupportedQoSComputeResource``)."""
    found = {}
    for name, text in (quantities or {}).items():
        if name in ("cpu", "memory"):
            try:
                value = parse_quantity(str(text))
            except ValueError:
                continue
            if value > 0:
                found[name] = value
    return found


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
