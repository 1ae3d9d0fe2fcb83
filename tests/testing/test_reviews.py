"""TokenReview and SubjectAccessReview on the test server, answered as kube-apiserver does
(see kgen_runtime.testing.apiserver.reviews._reviews for the sources): tokens the test
names, RBAC from the stored roles and bindings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgen_runtime.api.authentication.v1 import TokenReview
from kgen_runtime.api.authorization.v1 import SubjectAccessReview
from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.rbac.v1 import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from kgen_runtime.rest.errors import ApiError
from kgen_runtime.testing import TestAPIServer


@pytest.fixture
def kube(api_server: TestAPIServer) -> Iterator[Clientset]:
    with Clientset.for_config(api_server.config()) as clientset:
        yield clientset


def review_token(kube: Clientset, token: str) -> dict[str, object]:
    created = kube.authentication_v1.tokenreviews().create(
        TokenReview.model_validate({"spec": {"token": token}}))
    return created.model_dump()["status"]  # type: ignore[no-any-return]


def test_a_registered_token_authenticates_its_user(
    api_server: TestAPIServer, kube: Clientset
) -> None:
    api_server.add_token("secret", "alice", ["team-a"])
    assert review_token(kube, "secret") == {"authenticated": True, "user": {
        "username": "alice", "groups": ["team-a", "system:authenticated"]}}
    assert review_token(kube, "other") == {"authenticated": False}


def access(kube: Clientset, user: str, **attributes: object) -> dict[str, object]:
    kind = "nonResourceAttributes" if "path" in attributes else "resourceAttributes"
    created = kube.authorization_v1.subjectaccessreviews().create(
        SubjectAccessReview.model_validate({"spec": {"user": user, kind: attributes}}))
    return created.model_dump()["status"]  # type: ignore[no-any-return]


def test_rbac_decides_non_resource_urls_and_resources(kube: Clientset) -> None:
    rbac = kube.rbac_v1
    rbac.clusterroles().create(ClusterRole.model_validate({
        "metadata": {"name": "metrics-reader"},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}))
    rbac.clusterrolebindings().create(ClusterRoleBinding.model_validate({
        "metadata": {"name": "read-metrics"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "metrics-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}],
    }))
    rbac.roles("team-a").create(Role.model_validate({
        "metadata": {"name": "pod-reader", "namespace": "team-a"},
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get"]}]}))
    rbac.rolebindings("team-a").create(RoleBinding.model_validate({
        "metadata": {"name": "alice-reads-pods", "namespace": "team-a"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "pod-reader"},
        "subjects": [{"kind": "User", "name": "alice"}],
    }))
    prometheus = "system:serviceaccount:monitoring:prometheus"
    assert access(kube, prometheus, path="/metrics", verb="get") == {
        "allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "read-metrics" of '
        'ClusterRole "metrics-reader" to ServiceAccount "prometheus"'}
    assert access(kube, prometheus, path="/metrics", verb="post") == {"allowed": False}
    assert access(kube, prometheus, path="/healthz", verb="get") == {"allowed": False}
    assert access(kube, "alice", path="/metrics", verb="get") == {"allowed": False}
    assert access(kube, "alice", namespace="team-a", verb="get", group="", resource="pods",
                  subresource="log", name="web")["allowed"] is True
    assert access(kube, "alice", namespace="team-b", verb="get", group="",
                  resource="pods") == {"allowed": False}


def test_a_review_without_user_or_attributes_is_invalid(kube: Clientset) -> None:
    with pytest.raises(ApiError) as invalid:
        kube.authorization_v1.subjectaccessreviews().create(
            SubjectAccessReview.model_validate({"spec": {}}))
    assert (invalid.value.code, invalid.value.message) == (
        422, 'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec: Invalid value: '
        "null: exactly one of nonResourceAttributes or resourceAttributes must be specified, "
        'spec.user: Invalid value: "": at least one of user or group must be specified]')
