"""The Foo custom resource through the ``kubernetes`` package's CustomObjectsApi and its
dynamic client (discovery included)."""

from __future__ import annotations

import json

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException

from tests.fidelity._targets import Target

GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"
JSON_PATCH = "application/json-patch+json"


def foo(name: str, replicas: int = 1) -> dict[str, object]:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Foo", "metadata": {"name": name},
            "spec": {"deploymentName": name, "replicas": replicas}}


def test_custom_objects_api_create_get_list_patch_replace_delete(target: Target) -> None:
    custom, ns = target.custom, target.namespace
    args = (GROUP, VERSION, ns, PLURAL)
    created = custom.create_namespaced_custom_object(*args, foo("a") | {"bogus": 1})
    assert ("bogus" in created, created["spec"], created["metadata"]["generation"]) == (
        False, {"deploymentName": "a", "replicas": 1}, 1)
    assert custom.get_namespaced_custom_object(*args, "a") == created
    listed = custom.list_namespaced_custom_object(*args)
    assert (listed["kind"], [i["metadata"]["name"] for i in listed["items"]]) == (
        "FooList", ["a"])
    merged = custom.patch_namespaced_custom_object(*args, "a", {"spec": {"replicas": 2}})
    assert (merged["spec"], merged["metadata"]["generation"]) == (
        {"deploymentName": "a", "replicas": 2}, 2)
    patched = custom.patch_namespaced_custom_object(
        *args, "a", [{"op": "replace", "path": "/spec/deploymentName", "value": "b"}],
        _content_type=JSON_PATCH)
    assert patched["spec"] == {"deploymentName": "b", "replicas": 2}
    with pytest.raises(ApiException) as strategic:
        custom.patch_namespaced_custom_object(
            *args, "a", {"spec": {"replicas": 3}},
            _content_type="application/strategic-merge-patch+json")
    assert (strategic.value.status, json.loads(strategic.value.body)["message"]) == (415, (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml"))
    with pytest.raises(ApiException) as invalid:
        custom.patch_namespaced_custom_object(*args, "a", {"spec": {"replicas": 11}})
    assert (invalid.value.status, json.loads(invalid.value.body)["message"]) == (422, (
        'Foo.samplecontroller.k8s.io "a" is invalid: spec.replicas: Invalid value: 11: '
        "spec.replicas in body should be less than or equal to 10"))
    patched["spec"]["replicas"] = 5
    replaced = custom.replace_namespaced_custom_object(*args, "a", patched)
    assert replaced["spec"] == {"deploymentName": "b", "replicas": 5}
    status = custom.patch_namespaced_custom_object_status(
        *args, "a", {"status": {"availableReplicas": 4}, "spec": {"replicas": 9}})
    assert (status["status"], status["spec"]["replicas"]) == ({"availableReplicas": 4}, 5)
    deleted = custom.delete_namespaced_custom_object(*args, "a")
    assert (deleted["kind"], deleted["status"], deleted["details"]) == ("Status", "Success", {
        "name": "a", "group": GROUP, "kind": PLURAL, "uid": created["metadata"]["uid"]})
    assert custom.list_namespaced_custom_object(*args)["items"] == []


def test_dynamic_client_finds_foos_by_discovery(target: Target) -> None:
    dynamic = kubernetes.dynamic.DynamicClient(target.client)
    foos = dynamic.resources.get(api_version=f"{GROUP}/{VERSION}", kind="Foo")
    assert (foos.name, foos.namespaced, foos.kind) == ("foos", True, "Foo")
    created = foos.create(body=foo("d"), namespace=target.namespace)
    assert created.spec.replicas == 1
    patched = foos.patch(name="d", namespace=target.namespace, body={"spec": {"replicas": 3}},
                         content_type="application/merge-patch+json")
    assert patched.spec.to_dict() == {"deploymentName": "d", "replicas": 3}
    listed = foos.get(namespace=target.namespace)
    assert [i.metadata.name for i in listed.items] == ["d"]
    foos.delete(name="d", namespace=target.namespace)
    with pytest.raises(kubernetes.dynamic.exceptions.NotFoundError):
        foos.get(name="d", namespace=target.namespace)
