"""A CustomResourceDefinition's ``status``: as its create leaves it, and as the apiserver's CRD
controllers then write it.

A create answers the CRD not yet served: ``PrepareForCreate``
(apiextensions-apiserver ``pkg/registry/customresourcedefinition/strategy.go``) resets the
status and records the storage version in ``storedVersions``; Go's JSON of that status shows
``conditions: null`` and ``acceptedNames`` with its two required strings empty. Then, through
the ``status`` subresource as manager ``kube-apiserver``, the naming controller accepts the
names (``NamesAccepted``), the establishing controller reports ``Established`` and, for a
protected community group, the API approval controller ``KubernetesAPIApprovalPolicyConformant``
(``pkg/controller/{status,establish,apiapproval}``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

__all__ = ["controlled_status", "initial_status"]

Obj = dict[str, Any]

#: ``apiextensionsv1.KubeAPIApprovedAnnotation``.
_APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
_APPROVAL_KEP = "see https://github.com/kubernetes/enhancements/pull/1111"


def initial_status(crd: Obj) -> Obj:
    """The status a create stores: strategy.go ``PrepareForCreate`` (``Status = {}``, then the
    storage version appended to ``storedVersions``)."""
    storage = [v["name"] for v in (crd.get("spec") or {}).get("versions") or ()
               if v.get("storage")][:1]
    return {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": storage}


def controlled_status(crd: Obj, now: str) -> Obj:
    """``crd``'s status once the controllers have seen it: names accepted, Established, the
    approval condition for a protected group; a condition keeps its ``lastTransitionTime``
    while its status stays (apihelpers ``SetCRDCondition``); ``storedVersions`` gains the
    storage version (strategy.go ``PrepareForUpdate``)."""
    spec = crd["spec"]
    status = crd.get("status") or {}
    conditions = [
        ("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
        ("Established", "True", "InitialNamesAccepted", "the initial names have been accepted"),
    ]
    approval = _approval_condition(spec.get("group", ""),
                                   (crd["metadata"].get("annotations") or {}))
    if approval is not None:
        conditions.append(approval)
    previous = {c.get("type"): c for c in status.get("conditions") or ()}
    written = [_condition(kind, state, reason, message, previous.get(kind), now)
               for kind, state, reason, message in conditions]
    # a condition the controllers do not write (Terminating) stays
    written += [c for kind, c in previous.items() if kind not in {w["type"] for w in written}]
    stored = list(status.get("storedVersions") or ())
    stored += [name for name in initial_status(crd)["storedVersions"] if name not in stored]
    return {"conditions": written, "acceptedNames": spec["names"], "storedVersions": stored}


def _condition(kind: str, state: str, reason: str, message: str, previous: Obj | None,
               now: str) -> Obj:
    since = previous["lastTransitionTime"] if previous and previous.get(
        "status") == state and previous.get("lastTransitionTime") else now
    return {"type": kind, "status": state, "lastTransitionTime": since, "reason": reason,
            "message": message}


def _approval_condition(group: str, annotations: Obj) -> tuple[str, str, str, str] | None:
    """apiapproval_controller.go ``calculateCondition`` with apihelpers
    ``GetAPIApprovalState``, for a group ``IsProtectedCommunityGroup`` names."""
    if not any(group == root or group.endswith("." + root)
               for root in ("k8s.io", "kubernetes.io")):
        return None
    kind = "KubernetesAPIApprovalPolicyConformant"
    value = str(annotations.get(_APPROVAL_ANNOTATION) or "")
    if not value:
        return (kind, "False", "MissingAnnotation",
                f"protected groups must have approval annotation "
                f"\"{_APPROVAL_ANNOTATION}\", {_APPROVAL_KEP}")
    if value.startswith("unapproved"):
        return kind, "False", "UnapprovedAnnotation", f"not approved: \"{value}\""
    if not _request_uri(value):
        return (kind, "False", "InvalidAnnotation",
                f"protected groups must have approval annotation \"{_APPROVAL_ANNOTATION}\" "
                f"with either a URL or a reason starting with \"unapproved\", {_APPROVAL_KEP}")
    return kind, "True", "ApprovedAnnotation", f"approved in {value}"


def _request_uri(text: str) -> bool:
    """Go's ``url.ParseRequestURI`` accepts an absolute URL or an absolute path."""
    parts = urlsplit(text)
    return bool(parts.scheme) or text.startswith("/")
