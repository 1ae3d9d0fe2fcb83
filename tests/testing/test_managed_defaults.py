"""Where field ownership meets the built-in kinds' defaults, allocations and validation: what
the creator of an Update, an applier and a strategic merge patch end up owning and being
refused, as on a real kube-apiserver; list keys from the bundled OpenAPI documents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kgen_runtime.testing import TestAPIServer
from tests.testing._support import Api

DEPLOYMENTS = "/apis/apps/v1/namespaces/ns/deployments"
SERVICES = "/api/v1/namespaces/ns/services"
APPLY = "application/apply-patch+yaml"
STRATEGIC = "application/strategic-merge-patch+json"


@pytest.fixture
def api() -> Iterator[Api]:
    with TestAPIServer() as server:
        yield Api(server)


def deployment(name: str = "d", **pod_spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}}, "spec": pod_spec}}}


def service(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec}


def entries(obj: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [(e["manager"], e["operation"], e["fieldsV1"])
            for e in obj["metadata"]["managedFields"]]


def test_pod_spec_lists_are_keyed_as_the_openapi_documents_say(api: Api) -> None:
    body = deployment(
        containers=[{"name": "web", "image": "nginx:1", "imagePullPolicy": "IfNotPresent",
                     "resources": {}, "terminationMessagePath": "/dev/termination-log",
                     "terminationMessagePolicy": "File",
                     "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
        volumes=[{"name": "v", "emptyDir": {}}],
        imagePullSecrets=[{"name": "pull"}],
        tolerations=[{"key": "k", "operator": "Exists"}],
    )

    status, created = api.call("POST", DEPLOYMENTS, body, query={"fieldManager": "m"})

    assert status == 201, created
    [(_, _, fields)] = entries(created)
    pod_spec = fields["f:spec"]["f:template"]["f:spec"]
    assert {name: value for name, value in pod_spec.items() if name in (
        "f:containers", "f:volumes", "f:imagePullSecrets", "f:tolerations")} == {
        "f:containers": {'k:{"name":"web"}': {
            ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {},
            "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {},
            "f:volumeMounts": {".": {}, 'k:{"mountPath":"/v"}': {
                ".": {}, "f:mountPath": {}, "f:name": {}}}}},
        "f:volumes": {".": {}, 'k:{"name":"v"}': {".": {}, "f:emptyDir": {}, "f:name": {}}},
        "f:imagePullSecrets": {".": {}, 'k:{"name":"pull"}': {}},
        "f:tolerations": {},  # no list type in the document: atomic
    }


def test_an_applied_port_without_protocol_is_the_defaulted_tcp_port(api: Api) -> None:
    config = deployment(containers=[{"name": "web", "image": "nginx",
                                     "ports": [{"containerPort": 80}]}])
    status, first = api.patch(f"{DEPLOYMENTS}/d", config, APPLY, fieldManager="ci")
    assert status == 201, first

    status, again = api.patch(f"{DEPLOYMENTS}/d", config, APPLY, fieldManager="ci")

    assert status == 200, again
    [container] = again["spec"]["template"]["spec"]["containers"]
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    [(_, _, fields)] = entries(again)
    assert fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}'][
        "f:ports"] == {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}


def test_an_applier_owns_neither_defaults_nor_allocations(api: Api) -> None:
    status, body = api.patch(f"{SERVICES}/s", service(ports=[{"port": 80}]), APPLY,
                             fieldManager="ci")

    assert status == 201, body
    assert body["spec"] == {
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}], "type": "ClusterIP",
        "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
        "clusterIP": "10.0.0.10", "clusterIPs": ["10.0.0.10"], "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack"}
    assert entries(body) == [("ci", "Apply", {"f:spec": {"f:ports": {
        'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}}}})]


def test_a_creator_owns_the_defaults_but_not_the_allocations(api: Api) -> None:
    status, body = api.call("POST", SERVICES, service(ports=[{"port": 80}]),
                            query={"fieldManager": "kubectl-create"})

    assert status == 201, body
    assert body["spec"]["clusterIP"] == "10.0.0.10"
    assert entries(body) == [("kubectl-create", "Update", {"f:spec": {
        "f:internalTrafficPolicy": {}, "f:sessionAffinity": {}, "f:type": {},
        "f:ports": {".": {}, 'k:{"port":80,"protocol":"TCP"}': {
            ".": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}}}})]


def test_applies_and_strategic_merge_patches_of_built_in_kinds_are_validated(api: Api) -> None:
    status, body = api.patch(f"{DEPLOYMENTS}/d", deployment(containers=[{"name": "web"}]),
                             APPLY, fieldManager="ci")
    assert (status, body["message"]) == (
        422, 'Deployment.apps "d" is invalid: spec.template.spec.containers[0].image: '
             'Required value')
    api.patch(f"{DEPLOYMENTS}/d", deployment(containers=[{"name": "web", "image": "i"}]),
              APPLY, fieldManager="ci")

    status, body = api.patch(f"{DEPLOYMENTS}/d", {"spec": {"template": {"spec": {
        "containers": [{"name": "web", "$patch": "delete"}]}}}}, STRATEGIC)

    assert (status, body["message"]) == (
        422, 'Deployment.apps "d" is invalid: spec.template.spec.containers: Required value')


def test_a_new_containers_resources_are_owned_with_their_content(api: Api) -> None:
    # structured-merge-diff adds a map that was not there as a member of its own (".")
    body = deployment(containers=[{"name": "web", "image": "nginx",
                                   "resources": {"requests": {"cpu": "1"}}}])

    status, created = api.call("POST", DEPLOYMENTS, body, query={"fieldManager": "m"})

    assert status == 201, created
    [(_, _, fields)] = entries(created)
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert container["f:resources"] == {".": {}, "f:requests": {".": {}, "f:cpu": {}}}


def test_a_create_owns_no_zero_valued_struct_the_empty_object_has(api: Api) -> None:
    # handlers/create.go compares the request with scope.Creater.New(kind): a Namespace's
    # spec: {} is already there
    status, created = api.call("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n2", "labels": {"a": "b"}},
        "spec": {}}, query={"fieldManager": "m"})

    assert status == 201, created
    assert entries(created) == [("m", "Update", {"f:metadata": {"f:labels": {
        ".": {}, "f:a": {}, "f:kubernetes.io/metadata.name": {}}}})]
