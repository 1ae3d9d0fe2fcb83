"""Field selectors beyond metadata.name/namespace: the core kinds' labels, CRD selectableFields,
and the server's messages for labels a kind does not support."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.testing._support import FOO_CRD, FOOS, Api, foo

NS = "/api/v1/namespaces/ns"


def names(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


def create_all(api: Api, path: str, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        status, body = api.post(path, obj)
        assert status == 201, body


def pod(name: str, *, node: str = "", phase: str = "", host_network: bool | None = None,
        **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}
    if node:
        body["spec"]["nodeName"] = node
    if host_network is not None:
        body["spec"]["hostNetwork"] = host_network
    if phase:
        body["status"] = {"phase": phase}
    return body


def event(name: str, involved: str, *, reason: str = "Started", kind: str = "Pod",
          type_: str = "Normal", component: str = "") -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
        "involvedObject": {"kind": kind, "name": involved, "namespace": "ns", "uid": f"u-{name}",
                           "apiVersion": "v1", "fieldPath": "spec.containers{c}"},
        "reason": reason, "type": type_, "reportingComponent": "kubelet",
    }
    if component:
        body["source"] = {"component": component}
    return body


@pytest.mark.parametrize(("selector", "expected"), [
    ("involvedObject.name=web", ["e1", "e3"]),
    ("involvedObject.kind=Deployment", ["e2"]),
    ("involvedObject.uid=u-e2", ["e2"]),
    ("involvedObject.namespace=ns,involvedObject.apiVersion=v1", ["e1", "e2", "e3"]),
    ("involvedObject.fieldPath=spec.containers{c}", ["e1", "e2", "e3"]),
    ("involvedObject.resourceVersion=", ["e1", "e2", "e3"]),
    ("reason=Failed", ["e3"]),
    ("type!=Normal", ["e3"]),
    ("source=scheduler", ["e2"]),
    ("source=kubelet", ["e1", "e3"]),  # no source: the reporting controller stands in
    ("reportingComponent=kubelet", ["e1", "e2", "e3"]),
])
def test_event_field_selectors(api: Api, selector: str, expected: list[str]) -> None:
    create_all(api, f"{NS}/events", [
        event("e1", "web"),
        event("e2", "db", kind="Deployment", component="scheduler"),
        event("e3", "web", reason="Failed", type_="Warning"),
    ])

    status, body = api.get(f"{NS}/events", fieldSelector=selector)

    assert status == 200, body
    assert names(body) == expected


@pytest.mark.parametrize(("selector", "expected"), [
    ("spec.nodeName=n1", ["a"]),
    ("spec.nodeName=", ["c"]),
    ("spec.restartPolicy=Never", ["b"]),
    ("spec.schedulerName=custom", ["c"]),
    ("spec.serviceAccountName=robot", ["a"]),
    ("spec.hostNetwork=true", ["b"]),
    ("spec.hostNetwork=false", ["a", "c"]),  # absent reads as false, as Go's bool does
    ("status.phase=Running", ["a"]),
    ("status.phase!=Running", ["b", "c"]),
    ("status.podIP=10.0.0.2", ["b"]),
    ("status.nominatedNodeName=n9", ["c"]),
    ("spec.nodeName=n1,status.phase=Running", ["a"]),
    ("spec.host=n2", ["b"]),
])
def test_pod_field_selectors(api: Api, selector: str, expected: list[str]) -> None:
    create_all(api, f"{NS}/pods", [
        pod("a", node="n1", serviceAccountName="robot"),
        pod("b", node="n2", host_network=True, restartPolicy="Never"),
        pod("c", schedulerName="custom"),
    ])
    for name, status in (("a", {"phase": "Running"}), ("b", {"phase": "Pending",
                                                              "podIP": "10.0.0.2"}),
                         ("c", {"phase": "Pending", "nominatedNodeName": "n9"})):
        code, body = api.patch(f"{NS}/pods/{name}/status", {"status": status})
        assert code == 200, body

    status, body = api.get(f"{NS}/pods", fieldSelector=selector)

    assert status == 200, body
    assert names(body) == expected


#: A valid pod template labelled ``app: r`` (workloads are validated as on a real server).
TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "r"}},
                            "spec": {"containers": [{"name": "c", "image": "i"}]}}
#: A PEM certificate request (CN=kgen-test, P-256), base64 as ``spec.request`` carries it.
CSR_REQUEST = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIT01IWUNBUUF3RkRFU01CQUdBMVVFQXd3SmEy"
    "ZGxiaTEwWlhOME1Ga3dFd1lIS29aSXpqMENBUVlJS29aSQp6ajBEQVFjRFFnQUU4bXBEUXdwOFFrWDJzaDNtT0t3"
    "TEs0WElTK2pCbEl5bXpPRWZrdmNGWnczNWVkakJoYk12CkN1cmNUdDRmT3dvbHkxRFg4aWUxQmpoa1p5T01oNmoz"
    "L2FBQU1Bb0dDQ3FHU000OUJBTUNBMGdBTUVVQ0lRQ2wKWVNmQ3FHcXgvak5oWEJPYzFkUTFkeVk1WnJRb0Z1YlM4"
    "VGRndVgvNXJRSWdGNGZqL0REaFRLS0krOE4rTU9OagpUWCtsWE9jc2tYaVl1K09vRmxtc1d3QT0KLS0tLS1FTkQg"
    "Q0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==")


def csr(name: str, signer: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"signerName": signer, "request": CSR_REQUEST,
                                                 "usages": ["client auth"]}}


@pytest.mark.parametrize(("path", "objects", "selector", "expected"), [
    (f"{NS}/secrets", [
        {"metadata": {"name": "s1"}, "type": "kubernetes.io/tls",
         "data": {"tls.crt": "", "tls.key": ""}},
        {"metadata": {"name": "s2"}, "type": "Opaque"},
    ], "type=kubernetes.io/tls", ["s1"]),
    ("/api/v1/nodes", [
        {"metadata": {"name": "n1"}, "spec": {"unschedulable": True}},
        {"metadata": {"name": "n2"}},
    ], "spec.unschedulable=false", ["n2"]),
    (f"{NS}/replicationcontrollers", [
        {"metadata": {"name": "r1"}, "spec": {"selector": {"app": "r"}, "template": TEMPLATE}},
    ], "status.replicas=0", ["r1"]),
    ("/apis/apps/v1/namespaces/ns/replicasets", [
        {"metadata": {"name": "r1"}, "spec": {"selector": {"matchLabels": {"app": "r"}},
                                              "template": TEMPLATE}},
    ], "status.replicas=1", []),
    ("/apis/batch/v1/namespaces/ns/jobs", [
        {"metadata": {"name": "j1"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}},
    ], "status.successful=0", ["j1"]),
    ("/apis/certificates.k8s.io/v1/certificatesigningrequests", [
        csr("c1", "example.com/a"),
        csr("c2", "example.com/b"),
], "spec.signerName=example.com/b", ["c2"]),
])
def test_other_core_kinds_field_selectors(
    api: Api, path: str, objects: list[dict[str, Any]], selector: str, expected: list[str]
) -> None:
    create_all(api, path, objects)

    status, body = api.get(path, fieldSelector=selector)

    assert status == 200, body
    assert names(body) == expected


def test_namespace_phase_selector(api: Api) -> None:
    create_all(api, "/api/v1/namespaces", [{"metadata": {"name": "ns1"}}])
    code, body = api.patch("/api/v1/namespaces/ns1/status", {"status": {"phase": "Active"}})
    assert code == 200, body

    status, body = api.get("/api/v1/namespaces", fieldSelector="status.phase=Active")

    assert status == 200, body
    assert "ns1" in names(body)


@pytest.mark.parametrize(("path", "selector", "message"), [
    (f"{NS}/pods", "foo=bar", "field label not supported: foo"),
    (f"{NS}/events", "involvedObject.bogus=x", "field label not supported: involvedObject.bogus"),
    ("/api/v1/nodes", "metadata.namespace=x", "field label not supported: metadata.namespace"),
    (f"{NS}/configmaps", "data.x=1", '"data.x" is not a known field selector: only '
                                     '"metadata.name", "metadata.namespace"'),
    (f"{NS}/secrets", "status.phase=x", "field label not supported: status.phase"),
])
def test_unsupported_field_labels_are_refused(
    api: Api, path: str, selector: str, message: str
) -> None:
    status, body = api.get(path, fieldSelector=selector)

    assert (status, body["reason"], body["message"]) == (400, "BadRequest", message)


def test_watch_filters_by_a_core_field_label(api: Api) -> None:
    events = api.watch(f"{NS}/pods", fieldSelector="spec.nodeName=n1")
    create_all(api, f"{NS}/pods", [pod("off", node="n2"), pod("on", node="n1")])

    first = next(events)

    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "on")


def test_crd_selectable_fields(api: Api) -> None:
    crd = copy.deepcopy(FOO_CRD)
    crd["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": ".spec.mode"},
                                                      {"jsonPath": ".spec.replicas"}]
    status, body = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 201, body
    create_all(api, FOOS, [foo("a", mode="fast", replicas=2), foo("b", mode="slow"),
                           foo("c")])

    assert names(api.get(FOOS, fieldSelector="spec.mode=fast")[1]) == ["a"]
    assert names(api.get(FOOS, fieldSelector="spec.mode=")[1]) == ["c"]
    assert names(api.get(FOOS, fieldSelector="spec.replicas=1")[1]) == ["b", "c"]
    status, body = api.get(FOOS, fieldSelector="spec.deploymentName=dep")
    assert (status, body["message"]) == (400, "field label not supported: spec.deploymentName")


def test_a_cluster_scoped_custom_resource_has_no_namespace_label(api: Api) -> None:
    crd = copy.deepcopy(FOO_CRD)
    crd["spec"]["scope"] = "Cluster"
    status, body = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 201, body

    status, body = api.get("/apis/samplecontroller.k8s.io/v1alpha1/foos",
                           fieldSelector="metadata.namespace=x")

    assert (status, body["message"]) == (400, "field label not supported: metadata.namespace")
