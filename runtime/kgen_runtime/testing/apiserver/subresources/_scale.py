"""The ``scale`` subresource: an object seen as an ``autoscaling/v1`` ``Scale``.

A kind's :class:`~kgen_runtime.resource.ScaleSubresource` names where its desired replicas,
observed replicas and label selector live (``.spec.replicas``). Reading the subresource
projects the object onto a Scale; writing it changes only the desired replicas, through the
ordinary update path (resourceVersion checks, generation, watch events). Admission webhooks
of ``/scale`` see and patch the Scale (:class:`ScaleProjection`), as kube-apiserver's
``ScaleREST`` hands them the Scale it projected from the object.

A custom resource may lack the spec replicas field (a built-in kind's Go struct always has
one). apiextensions-apiserver's ``registry/customresource/etcd.go`` then answers a read with
500 (``the spec replicas field ".spec.replicas" does not exist``) and gives a write the Scale
with :data:`UNSET_REPLICAS`, refusing with 400 (``... cannot be empty``) a write that leaves
it so (a patch of something else); a write that sets the replicas works.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgen_runtime.labels import SelectorError, selector_from_label_selector, selector_from_set
from kgen_runtime.resource import ScaleSubresource
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.patch._patch import field_at

__all__ = ["UNSET_REPLICAS", "ScaleProjection", "apply_scale", "to_scale"]

Obj = dict[str, Any]

#: The smallest int32: ``scaleUpdatedObjectInfo``'s spec replicas of an object without them.
UNSET_REPLICAS = -2147483648


def to_scale(obj: Obj, scale: ScaleSubresource, *, for_write: bool = False) -> Obj:
    """The Scale view of ``obj``; without spec replicas a read fails (500) and a write sees
    :data:`UNSET_REPLICAS`."""
    replicas = field_at(obj, _steps(scale.spec_replicas_path))
    if replicas is None:
        if not for_write:
            raise StatusError.internal(
                f'the spec replicas field "{scale.spec_replicas_path}" does not exist')
        replicas = UNSET_REPLICAS
    meta = obj["metadata"]
    status: Obj = {"replicas": field_at(obj, _steps(scale.status_replicas_path)) or 0}
    if scale.label_selector_path is not None:
        selector = field_at(obj, _steps(scale.label_selector_path))
        if isinstance(selector, dict):
            selector = _selector_string(selector)
        if selector is not None:
            status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {key: meta[key] for key in ("name", "namespace", "uid", "resourceVersion",
                                                 "creationTimestamp") if key in meta},
        "spec": {"replicas": replicas},
        "status": status,
    }


def apply_scale(obj: Obj, new_scale: Obj, scale: ScaleSubresource) -> Obj:
    """``obj`` (a private copy) with the desired replicas of ``new_scale`` written into it.

    The Scale's resourceVersion, if any, becomes the object's, so a stale Scale conflicts.
    """
    replicas = (new_scale.get("spec") or {}).get("replicas")
    if replicas == UNSET_REPLICAS:
        raise StatusError.bad_request(
            f'the spec replicas field "{scale.spec_replicas_path}" cannot be empty')
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise StatusError.invalid("autoscaling", "Scale", obj["metadata"]["name"], [
            _cause(replicas)])
    _set(obj, scale.spec_replicas_path, replicas)
    version = (new_scale.get("metadata") or {}).get("resourceVersion")
    if version:
        obj["metadata"]["resourceVersion"] = version
    return obj


@dataclass(frozen=True, slots=True)
class ScaleProjection:
    """An object seen through its ``scale`` subresource: the Scale a reader and the
    subresource's webhooks see (:meth:`scale_of`), and the object a Scale writes back
    (:meth:`apply`)."""

    scale: ScaleSubresource

    def scale_of(self, obj: Obj, *, for_write: bool = False) -> Obj:
        """The Scale of ``obj``; ``for_write`` for the Scale a write starts from."""
        return to_scale(obj, self.scale, for_write=for_write)

    def apply(self, obj: Obj, new_scale: Obj) -> Obj:
        """``obj`` (a private copy) with ``new_scale``'s desired replicas."""
        return apply_scale(obj, new_scale, self.scale)

    def patcher(self, change: Callable[[Obj], Obj]) -> Callable[[Obj], Obj]:
        """A store patcher writing back ``change(the object's Scale)``."""
        return lambda live: self.apply(live, change(self.scale_of(live, for_write=True)))


def _selector_string(selector: Obj) -> str:
    """A built-in workload's ``spec.selector`` as its Scale shows it: a LabelSelector through
    ``metav1.LabelSelectorAsSelector`` (pkg/registry/apps/deployment/storage ``scaleFromDeployment``
    and the ReplicaSet and StatefulSet ones), a ReplicationController's label map through
    ``labels.SelectorFromSet`` (pkg/registry/core/replicationcontroller/storage)."""
    if not selector.keys() <= {"matchLabels", "matchExpressions"}:
        return str(selector_from_set(selector))
    expressions = [(e.get("key", ""), e.get("operator", ""), e.get("values") or ())
                   for e in selector.get("matchExpressions") or ()]
    try:
        return str(selector_from_label_selector(selector.get("matchLabels"), expressions))
    except SelectorError:
        return ""


def _cause(value: Any) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {value!r}: must be greater than or "
                 "equal to 0", "spec.replicas")


def _steps(path: str) -> list[str]:
    return [step for step in path.split(".") if step]


def _set(obj: Obj, path: str, value: Any) -> None:
    steps = _steps(path)
    current = obj
    for step in steps[:-1]:
        child = current.get(step)
        if not isinstance(child, dict):
            child = current[step] = {}
        current = child
    current[steps[-1]] = value
