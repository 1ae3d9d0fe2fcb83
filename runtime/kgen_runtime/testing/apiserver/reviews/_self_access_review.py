"""SelfSubjectAccessReview: "may I?", answered for the test server's only kind of caller.

The test server has no authentication or authorization: every request acts with full
rights, as the ``system:masters`` admin does on a real cluster, whose privileged-groups
authorizer allows it everything without a reason (apiserver
pkg/authorization/authorizerfactory). So a review is answered ``allowed: true`` once its spec
passes pkg/apis/authorization/validation (exactly one of resourceAttributes and
nonResourceAttributes). Like pkg/registry/authorization/selfsubjectaccessreview/rest.go it
is create-only and nothing is stored: the answer is the request with its ``status``.
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.storage._resources import builtin

__all__ = ["SELF_SUBJECT_ACCESS_REVIEWS", "review"]

Obj = dict[str, Any]

SELF_SUBJECT_ACCESS_REVIEWS = builtin(
    "authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
    namespaced=False)


def review(obj: Obj) -> Obj:
    """The answered review of ``obj`` (a SelfSubjectAccessReview body); 422 if invalid."""
    given = obj.get("spec")
    spec: Obj = given if isinstance(given, dict) else {}
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        cause = Cause("FieldValueInvalid", "Invalid value: \"object\": cannot be specified in "
                      "combination with resourceAttributes", "spec.nonResourceAttributes")
    elif resource is None and non_resource is None:
        cause = Cause("FieldValueInvalid", "Invalid value: \"null\": exactly one of "
                      "nonResourceAttributes or resourceAttributes must be specified",
                      "spec.resourceAttributes")
    else:
        metadata = {key: value for key, value in (obj.get("metadata") or {}).items()
                    if key in ("name", "generateName", "labels", "annotations")}
        return {"kind": SELF_SUBJECT_ACCESS_REVIEWS.kind,
                "apiVersion": SELF_SUBJECT_ACCESS_REVIEWS.api_version,
                "metadata": metadata, "spec": spec, "status": {"allowed": True}}
    raise StatusError.invalid(SELF_SUBJECT_ACCESS_REVIEWS.group,
                              SELF_SUBJECT_ACCESS_REVIEWS.kind, "", [cause])
