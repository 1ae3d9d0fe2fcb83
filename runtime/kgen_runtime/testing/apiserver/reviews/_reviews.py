"""TokenReview and SubjectAccessReview: the API server authenticating a token and
authorising a user for someone else (what controller-runtime's metrics filters, webhook
authenticators and kube-rbac-proxy ask).

Both are create-only and stored nowhere: the answer is the posted object with its ``status``
filled in, HTTP 201.

- TokenReview (``pkg/registry/authentication/tokenreview/storage.go`` ``Create``): the
  token is looked up among those :meth:`Reviews.add_token` registered (the test server has
  no other authenticator); ``status.authenticated`` and ``status.user`` say whom it names,
  an unknown token gets ``authenticated: false``. A namespaced request is a 400.
- SubjectAccessReview (``pkg/registry/authorization/subjectaccessreview/rest.go``): the spec
  is validated as ``ValidateSubjectAccessReviewSpec`` does, then decided by RBAC over the
  stored ClusterRoles, Roles and their bindings (``plugin/pkg/auth/authorizer/rbac/rbac.go``,
  rules matched as ``pkg/apis/rbac/v1/evaluation_helpers.go``). RBAC never denies: what no
  rule allows is ``allowed: false`` without a reason (its "no opinion").
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgen_runtime.meta import copy_json
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.storage._store import ObjectStore

__all__ = ["REVIEW_PATHS", "Reviews"]

Obj = dict[str, Any]

_TOKEN_REVIEWS = ("authentication.k8s.io", "tokenreviews")
_ACCESS_REVIEWS = ("authorization.k8s.io", "subjectaccessreviews")
REVIEW_PATHS: dict[tuple[str, ...], tuple[str, str]] = {
    ("apis", "authentication.k8s.io", "v1", "tokenreviews"): _TOKEN_REVIEWS,
    ("apis", "authorization.k8s.io", "v1", "subjectaccessreviews"): _ACCESS_REVIEWS,
}
"""The request paths (split) answered here, by (group, resource)."""
_RBAC = "rbac.authorization.k8s.io"
_SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class _User:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)


class Reviews:
    """The two review endpoints of one server. Thread-safe."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._tokens: dict[str, _User] = {}
        self._lock = threading.Lock()

    def add_token(
        self, token: str, username: str, groups: Sequence[str] = (), uid: str = ""
    ) -> None:
        """Make ``token`` authenticate as ``username`` in ``groups`` (plus
        ``system:authenticated``, which kube-apiserver's authenticators add to every user)."""
        with self._lock:
            self._tokens[token] = _User(username, uid, (*groups, "system:authenticated"))

    def create(self, resource: tuple[str, str], namespace: str, review: Obj) -> Obj:
        """Answer a posted review (``resource`` from :data:`REVIEW_PATHS`)."""
        if namespace:
            raise StatusError.bad_request(f"namespace is not allowed on this type: {namespace}")
        answer: Obj = copy_json(review)
        if resource == _TOKEN_REVIEWS:
            answer["status"] = self._authenticate(str((review.get("spec") or {}).get("token", "")))
        else:
            answer["status"] = self._authorize(review.get("spec") or {})
        return answer

    # -- TokenReview ------------------------------------------------------------------------

    def _authenticate(self, token: str) -> Obj:
        with self._lock:
            user = self._tokens.get(token) if token else None
        if user is None:
            return {"authenticated": False}
        info: Obj = {"username": user.username, "groups": list(user.groups)}
        if user.uid:
            info["uid"] = user.uid
        return {"authenticated": True, "user": info}

    # -- SubjectAccessReview ----------------------------------------------------------------

    def _authorize(self, spec: Obj) -> Obj:
        _validate_access_spec(spec)
        user, groups = str(spec.get("user") or ""), [str(g) for g in spec.get("groups") or ()]
        resource = spec.get("resourceAttributes")
        namespace = str((resource or {}).get("namespace") or "")
        for source, rule in self._rules(user, groups, namespace):
            if _allows(rule, spec):
                return {"allowed": True, "reason": f"RBAC: allowed by {source}"}
        return {"allowed": False}

    def _rules(self, user: str, groups: list[str], namespace: str) -> Iterator[tuple[str, Obj]]:
        """The rules bound to the subject, with where each comes from as RBAC's reasons
        name it (``ClusterRoleBinding "b" of ClusterRole "r" to User "u"``): cluster-wide
        bindings, then the request namespace's RoleBindings."""
        stored = self._store.stored
        cluster_roles = {r["metadata"]["name"]: r for r in stored(_RBAC, "clusterroles")}
        roles = {(r["metadata"].get("namespace"), r["metadata"]["name"]): r
                 for r in stored(_RBAC, "roles")}
        bindings = [("ClusterRoleBinding", b) for b in stored(_RBAC, "clusterrolebindings")]
        if namespace:
            bindings += [("RoleBinding", b) for b in stored(_RBAC, "rolebindings")
                         if b["metadata"].get("namespace") == namespace]
        for binding_kind, binding in sorted(bindings, key=lambda kb: kb[1]["metadata"]["name"]):
            subject = next((s for s in binding.get("subjects") or ()
                            if _applies_to(s, user, groups, binding["metadata"].get("namespace"))),
                           None)
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            role = (cluster_roles.get(ref.get("name")) if ref.get("kind") == "ClusterRole"
                    else roles.get((binding["metadata"].get("namespace"), ref.get("name"))))
            if role is None:
                continue
            name = binding["metadata"]["name"]
            where = f' in namespace "{namespace}"' if binding_kind == "RoleBinding" else ""
            source = (f'{binding_kind} "{name}"{where} of {ref.get("kind")} "{ref.get("name")}" '
                      f'to {subject.get("kind")} "{subject.get("name")}"')
            for rule in role.get("rules") or ():
                yield source, rule


def _validate_access_spec(spec: Obj) -> None:
    """``ValidateSubjectAccessReviewSpec`` (pkg/apis/authorization/validation)."""
    causes = []
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        causes.append(Cause("FieldValueInvalid", "Invalid value: \"object\": cannot be specified "
                            "in combination with resourceAttributes", "spec.nonResourceAttributes"))
    if resource is None and non_resource is None:
        causes.append(Cause("FieldValueInvalid", "Invalid value: null: exactly one of "
                            "nonResourceAttributes or resourceAttributes must be specified",
                            "spec"))
    if not spec.get("user") and not spec.get("groups"):
        causes.append(Cause("FieldValueInvalid", f'Invalid value: "{spec.get("user") or ""}": at '
                            "least one of user or group must be specified", "spec.user"))
    if causes:
        raise StatusError.invalid("authorization.k8s.io", "SubjectAccessReview", "", causes)


def _applies_to(subject: Obj, user: str, groups: list[str], namespace: str | None) -> bool:
    """``appliesToUser`` of pkg/registry/rbac/validation/rule.go."""
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return bool(user) and user == name
    if kind == "Group":
        return name in groups
    if kind == "ServiceAccount":
        account_namespace = subject.get("namespace") or namespace
        return bool(account_namespace) and user == (
            f"{_SERVICE_ACCOUNT_PREFIX}{account_namespace}:{name}")
    return False


def _allows(rule: Obj, spec: Obj) -> bool:
    """``RuleAllows`` of pkg/apis/rbac/v1/evaluation_helpers.go."""
    non_resource = spec.get("nonResourceAttributes")
    if non_resource is not None:
        return (_verb_matches(rule, str(non_resource.get("verb") or ""))
                and _url_matches(rule, str(non_resource.get("path") or "")))
    attributes = spec.get("resourceAttributes") or {}
    resource = str(attributes.get("resource") or "")
    subresource = str(attributes.get("subresource") or "")
    combined = f"{resource}/{subresource}" if subresource else resource
    names = rule.get("resourceNames") or []
    return (_verb_matches(rule, str(attributes.get("verb") or ""))
            and _matches(rule.get("apiGroups"), str(attributes.get("group") or ""))
            and any(r in ("*", combined) or (subresource and r == f"*/{subresource}")
                    for r in rule.get("resources") or ())
            and (not names or attributes.get("name") in names))


def _verb_matches(rule: Obj, verb: str) -> bool:
    return _matches(rule.get("verbs"), verb)


def _matches(values: list[str] | None, wanted: str) -> bool:
    return any(value in ("*", wanted) for value in values or ())


def _url_matches(rule: Obj, path: str) -> bool:
    """``NonResourceURLMatches``: equal, ``*``, or a ``prefix*`` that the path starts with."""
    for url in rule.get("nonResourceURLs") or ():
        if url in ("*", path) or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False
