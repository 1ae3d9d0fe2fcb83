"""The dynamic client: ResourceClient verbs over Unstructured objects."""

from __future__ import annotations

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured, UnstructuredList
from kgen_runtime.rest import BaseClientset, DynamicClient
from kgen_runtime.rest.transport import HTTPTransport
from tests.rest.conftest import StubServer

FOO_GVR = GroupVersionResource("samplecontroller.k8s.io", "v1alpha1", "foos")
WIRE = {
    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
    "kind": "Foo",
    "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "3"},
    "spec": {"deploymentName": "d", "replicas": 1, "x-unknown": [1, None]},
}


def test_get_modify_update_round_trip(server: StubServer, transport: HTTPTransport) -> None:
    foos = DynamicClient(transport).resource(FOO_GVR).namespace("ns")
    server.reply(200, WIRE)
    foo = foos.get("a")
    assert server.last.path == "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos/a"
    assert isinstance(foo, Unstructured)
    assert foo.metadata.name == "a"
    assert foo["spec"]["x-unknown"] == [1, None]

    foo["spec"]["replicas"] = 5
    server.reply(200, WIRE)
    foos.update(foo)
    assert (server.last.method, server.last.path) == (
        "PUT",
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos/a",
    )
    assert server.last.json() == {**WIRE, "spec": {**WIRE["spec"], "replicas": 5}}  # type: ignore[dict-item]


def test_list_all_namespaces_and_cluster_scope(
    server: StubServer, transport: HTTPTransport
) -> None:
    dynamic = DynamicClient(transport)
    server.reply(200, {"apiVersion": "v1", "kind": "List", "items": [WIRE]})
    listed = dynamic.resource(FOO_GVR).list()
    assert server.last.path == "/apis/samplecontroller.k8s.io/v1alpha1/foos"
    assert isinstance(listed, UnstructuredList)
    assert [item["spec"]["replicas"] for item in listed.items] == [1]

    nodes = dynamic.resource(GroupVersionResource("", "v1", "nodes"), namespaced=False)
    server.reply(200, {"metadata": {"name": "n1"}})
    assert nodes.get("n1").metadata.name == "n1"
    assert server.last.path == "/api/v1/nodes/n1"


def test_status_subresource_and_create(server: StubServer, transport: HTTPTransport) -> None:
    foos = DynamicClient(transport).resource(FOO_GVR).namespace("ns")
    obj = Unstructured.model_validate(WIRE)
    server.reply(201, WIRE)
    foos.create(obj)
    assert (server.last.method, server.last.json()) == ("POST", WIRE)
    server.reply(200, WIRE)
    foos.update_status(obj)
    assert server.last.path.endswith("/foos/a/status")


def test_clientset_shares_its_transport(server: StubServer, transport: HTTPTransport) -> None:
    clientset = BaseClientset(transport)
    assert clientset.transport is transport
    server.reply(200, WIRE)
    clientset.dynamic.resource(FOO_GVR).namespace("ns").get("a")
    clientset.close()
    server.reply(200, WIRE)
    clientset.dynamic.resource(FOO_GVR).namespace("ns").get("a")  # not closed: not owned
