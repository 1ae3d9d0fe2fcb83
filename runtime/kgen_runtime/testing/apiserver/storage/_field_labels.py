"""The field selectors each kind supports, and the values an object has for them.

kube-apiserver accepts ``metadata.name`` and ``metadata.namespace`` for every resource; a
few core kinds register more (their ``AddFieldLabelConversionFunc`` in
``pkg/apis/*/v1/conversion.go`` and the ``...ToSelectableFields`` of their registry), and a
CustomResourceDefinition adds its version's ``selectableFields``. :func:`supported_labels`
is that table; :func:`field_values` reads the values off a stored object, as strings, the way
the registries format them (booleans ``"true"``/``"false"``, numbers in decimal, a missing
field ``""``).

A kind with its own conversion function refuses other labels with ``field label not
supported: <label>``, and so do custom resources (whose converter also refuses
``metadata.namespace`` when cluster-scoped); every other built-in kind answers with
apimachinery's ``DefaultMetaV1FieldSelectorConversion`` message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["field_values", "supported_labels", "unsupported_label_message"]

Obj = dict[str, Any]

_META = ("metadata.name", "metadata.namespace")

#: (group, kind) -> the labels beyond metadata its conversion function accepts, each with
#: the path (dot-separated, from the object root) its value is read from; ``a|b`` reads ``b``
#: where ``a`` is empty (an event's ``source`` falls back to its reporting controller). Go
#: reads some of them from non-pointer fields, so an absent one is its zero value: _ZERO.
_BUILTIN_LABELS: Mapping[tuple[str, str], Mapping[str, str]] = {
    ("", "Pod"): {
        "spec.nodeName": "spec.nodeName",
        "spec.restartPolicy": "spec.restartPolicy",
        "spec.schedulerName": "spec.schedulerName",
        "spec.serviceAccountName": "spec.serviceAccountName",
        "spec.hostNetwork": "spec.hostNetwork",
        "status.phase": "status.phase",
        "status.podIP": "status.podIP",
        "status.nominatedNodeName": "status.nominatedNodeName",
        "spec.host": "spec.nodeName",  # what old clients send for spec.nodeName
    },
    ("", "Event"): {
        **{f"involvedObject.{field}": f"involvedObject.{field}" for field in (
            "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
        "reason": "reason",
        "reportingComponent": "reportingComponent",
        "source": "source.component|reportingComponent",
        "type": "type",
    },
    ("", "Namespace"): {"status.phase": "status.phase"},
    ("", "Secret"): {"type": "type"},
    ("", "Node"): {"spec.unschedulable": "spec.unschedulable"},
    ("", "ReplicationController"): {"status.replicas": "status.replicas"},
    ("apps", "ReplicaSet"): {"status.replicas": "status.replicas"},
    ("batch", "Job"): {"status.successful": "status.succeeded"},
    ("certificates.k8s.io", "CertificateSigningRequest"): {
        "spec.signerName": "spec.signerName"},
}
#: Paths whose Go field is a bool or an int, not a pointer: absent reads as false or 0.
_ZERO: Mapping[str, str] = {
    "spec.hostNetwork": "false", "spec.unschedulable": "false", "status.replicas": "0",
    "status.succeeded": "0",
}
#: Kinds whose conversion function does not accept ``metadata.namespace`` (cluster-scoped).
_NAME_ONLY = frozenset({("", "Node"), ("", "Namespace")})


def supported_labels(
    group: str, kind: str, selectable: tuple[str, ...] = (), *, cluster_scoped_custom: bool =
    False,
) -> dict[str, tuple[str, str]]:
    """Every field label a kind accepts, mapped to the object path its value comes from and
    the value an absent field has.

    ``selectable`` are a custom resource's ``selectableFields`` JSON paths (``.spec.color``).
    """
    name_only = (group, kind) in _NAME_ONLY or cluster_scoped_custom
    labels = {label: (label, "") for label in _META
              if not (label == "metadata.namespace" and name_only)}
    labels.update({label: (path, _ZERO.get(path, ""))
                   for label, path in _BUILTIN_LABELS.get((group, kind), {}).items()})
    labels.update({path.lstrip("."): (path.lstrip("."), "") for path in selectable})
    return labels


def unsupported_label_message(group: str, kind: str, label: str, custom: bool) -> str:
    """The 400 message for a label the kind does not support."""
    if custom or (group, kind) in _BUILTIN_LABELS:
        return f"field label not supported: {label}"
    return f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def field_values(obj: Obj, labels: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """The value of each label (see :func:`supported_labels`) for ``obj``."""
    return {label: _format(_at(obj, path), zero) for label, (path, zero) in labels.items()}


def _at(obj: Any, path: str) -> Any:
    for alternative in path.split("|"):
        value = obj
        for key in alternative.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if value not in (None, ""):
            return value
    return None


def _format(value: Any, zero: str) -> str:
    if value is None:
        return zero
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
