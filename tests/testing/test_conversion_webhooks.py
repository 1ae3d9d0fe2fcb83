"""CRD version conversion in the test API server: a Foo stored as v1alpha1 and served as
v1beta1 too, where ``spec.deploymentName`` is called ``spec.deployment``, converted by a
conversion webhook (ConversionReview over HTTPS) or by an in-process Converter."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import Field

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeObject
from kgen_runtime.testing import ObjectTracker, TestAPIServer
from kgen_runtime.webhook import Converter, Spoke, WebhookServer
from tests._webhooks import Certs, RecordingProxy
from tests.testing._support import FOO_CRD, Api

Obj = dict[str, Any]

V1ALPHA1 = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos"
V1BETA1 = "/apis/samplecontroller.k8s.io/v1beta1/namespaces/ns/foos"


class FooAlpha(KubeObject):
    """The hub: the storage version."""

    api_version: str = Field(default="samplecontroller.k8s.io/v1alpha1",
                             validation_alias="apiVersion", serialization_alias="apiVersion")
    kind: str = "Foo"
    spec: dict[str, Any] | None = None


class FooBeta(KubeObject):
    api_version: str = Field(default="samplecontroller.k8s.io/v1beta1",
                             validation_alias="apiVersion", serialization_alias="apiVersion")
    kind: str = "Foo"
    spec: dict[str, Any] | None = None


def renamed(spec: Obj | None, old: str, new: str) -> Obj | None:
    if spec is None or old not in spec:
        return spec
    return {(new if key == old else key): value for key, value in spec.items()}


CONVERTER = Converter.of(FooAlpha, Spoke(
    FooBeta,
    to_hub=lambda beta: FooAlpha(metadata=beta.metadata,
                                 spec=renamed(beta.spec, "deployment", "deploymentName")),
    from_hub=lambda alpha: FooBeta(metadata=alpha.metadata,
                                   spec=renamed(alpha.spec, "deploymentName", "deployment")),
))


def two_version_crd(conversion: Obj) -> Obj:
    """FOO_CRD with a served v1beta1 (``deployment`` for ``deploymentName``, no status)."""
    crd = copy.deepcopy(FOO_CRD)
    alpha = crd["spec"]["versions"][0]
    beta = copy.deepcopy(alpha)
    beta["name"], beta["storage"] = "v1beta1", False
    del beta["subresources"]
    spec = beta["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["deployment"] = spec["properties"].pop("deploymentName")
    spec["required"] = ["deployment"]
    crd["spec"]["versions"].append(beta)
    crd["spec"]["conversion"] = conversion
    return crd


@pytest.fixture
def converting(server: WebhookServer, certs: Certs) -> Iterator[Obj]:
    """The ``spec.conversion`` of a Webhook strategy pointing at a running converter."""
    server.converter(CONVERTER, path="/convert")
    server.start()
    assert server.address is not None
    host, port = server.address
    yield {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": f"https://{host}:{port}/convert",
                         "caBundle": base64.b64encode(certs.ca.read_bytes()).decode()}}}


@pytest.fixture
def webhook_api(api: Api, converting: Obj) -> Api:
    assert api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    two_version_crd(converting))[0] == 201
    return api


def alpha(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name}, "spec": {"deploymentName": "dep", **spec}}


def beta(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "samplecontroller.k8s.io/v1beta1", "kind": "Foo",
            "metadata": {"name": name}, "spec": {"deployment": "dep", **spec}}


def test_a_v1beta1_read_of_a_v1alpha1_stored_object_is_converted(webhook_api: Api) -> None:
    created = webhook_api.post(V1ALPHA1, alpha("a", replicas=2))[1]
    status, read = webhook_api.get(f"{V1BETA1}/a")
    assert status == 200
    assert read == {**created, "apiVersion": "samplecontroller.k8s.io/v1beta1",
                    "spec": {"deployment": "dep", "replicas": 2}}
    listed = webhook_api.get(V1BETA1)[1]
    assert listed["apiVersion"] == "samplecontroller.k8s.io/v1beta1"
    assert listed["items"] == [read]


def test_a_v1beta1_write_is_stored_as_v1alpha1(
    webhook_api: Api, api_server: TestAPIServer
) -> None:
    status, created = webhook_api.post(V1BETA1, beta("b", replicas=3))
    assert status == 201
    assert (created["apiVersion"], created["spec"]) == (
        "samplecontroller.k8s.io/v1beta1", {"deployment": "dep", "replicas": 3})
    storage = api_server.core.registry.lookup("samplecontroller.k8s.io", "v1alpha1", "foos")
    assert storage is not None
    stored = api_server.core.store.get(storage, "ns", "b")
    assert (stored["apiVersion"], stored["spec"]) == (
        "samplecontroller.k8s.io/v1alpha1", {"deploymentName": "dep", "replicas": 3})
    # A patch in v1beta1 terms changes the stored v1alpha1 field.
    status, patched = webhook_api.patch(f"{V1BETA1}/b", {"spec": {"deployment": "other"}})
    assert (status, patched["spec"]) == (200, {"deployment": "other", "replicas": 3})
    assert webhook_api.get(f"{V1ALPHA1}/b")[1]["spec"] == {"deploymentName": "other",
                                                           "replicas": 3}
    # An update with the v1beta1 body as read.
    status, updated = webhook_api.put(
        f"{V1BETA1}/b", {**patched, "spec": {"deployment": "third", "replicas": 4}})
    assert (status, updated["spec"]) == (200, {"deployment": "third", "replicas": 4})
    # A delete that leaves the object (a finalizer) answers with it, converted; one that
    # removes it answers with a Status, as the customresource store does.
    webhook_api.patch(f"{V1BETA1}/b", {"metadata": {"finalizers": ["example.com/x"]}})
    assert webhook_api.delete(f"{V1BETA1}/b")[1]["spec"] == {"deployment": "third",
                                                             "replicas": 4}
    webhook_api.patch(f"{V1BETA1}/b", {"metadata": {"finalizers": None}})
    assert webhook_api.get(f"{V1BETA1}/b")[0] == 404


def test_v1beta1_writes_are_validated_against_the_storage_schema_after_conversion(
    webhook_api: Api,
) -> None:
    status, body = webhook_api.post(V1BETA1, beta("c", replicas=99))
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.replicas"


def test_watch_events_are_converted(webhook_api: Api) -> None:
    events = webhook_api.watch(V1BETA1, resourceVersion="0")
    webhook_api.post(V1ALPHA1, alpha("w"))
    first = next(events)
    assert (first["type"], first["object"]["apiVersion"], first["object"]["spec"]) == (
        "ADDED", "samplecontroller.k8s.io/v1beta1", {"deployment": "dep", "replicas": 1})
    webhook_api.patch(f"{V1ALPHA1}/w", {"spec": {"replicas": 5}})
    modified = next(events)
    assert (modified["type"], modified["object"]["spec"]) == (
        "MODIFIED", {"deployment": "dep", "replicas": 5})


def test_an_unreachable_conversion_webhook_fails_the_read(
    api: Api, api_server: TestAPIServer, certs: Certs
) -> None:
    conversion = {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://127.0.0.1:1/convert",
                         "caBundle": base64.b64encode(certs.ca.read_bytes()).decode()}}}
    api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             two_version_crd(conversion))
    assert api.post(V1ALPHA1, alpha("a"))[0] == 201
    status, body = api.get(f"{V1BETA1}/a")
    # As recorded (../shared/fidelity/transcripts/crd.jsonl): a plain error, no reason.
    assert (status, body) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "conversion webhook for samplecontroller.k8s.io/v1alpha1, Kind=Foo failed: "
                   'Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: '
                   "connect: connection refused", "code": 500})
    assert api.get(f"{V1ALPHA1}/a")[0] == 200  # the storage version needs no conversion


def test_an_in_process_converter_needs_no_webhook(api: Api, api_server: TestAPIServer) -> None:
    api_server.core.conversions.register(CONVERTER)
    api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             two_version_crd({"strategy": "None"}))
    api.post(V1BETA1, beta("i", replicas=2))
    assert api.get(f"{V1ALPHA1}/i")[1]["spec"] == {"deploymentName": "dep", "replicas": 2}
    assert api.get(f"{V1BETA1}/i")[1]["spec"] == {"deployment": "dep", "replicas": 2}


def test_strategy_none_only_rewrites_the_api_version(api: Api) -> None:
    api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             two_version_crd({"strategy": "None"}))
    api.post(V1ALPHA1, alpha("n"))
    read = api.get(f"{V1BETA1}/n")[1]
    assert (read["apiVersion"], read["spec"]) == (
        "samplecontroller.k8s.io/v1beta1", {"deploymentName": "dep", "replicas": 1})


def test_the_object_tracker_stores_seeds_in_the_storage_version(
    api: Api, api_server: TestAPIServer
) -> None:
    api_server.core.conversions.register(CONVERTER)
    api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             two_version_crd({"strategy": "None"}))
    tracker = ObjectTracker(api_server.core)
    seeded = tracker.add({**beta("s"), "metadata": {"name": "s", "namespace": "ns"}})
    assert (seeded["apiVersion"], seeded["spec"]) == (
        "samplecontroller.k8s.io/v1beta1", {"deployment": "dep", "replicas": 1})
    assert api.get(f"{V1ALPHA1}/s")[1]["spec"] == {"deploymentName": "dep", "replicas": 1}
    alpha_foos = GroupVersionResource("samplecontroller.k8s.io", "v1alpha1", "foos")
    assert [f["spec"] for f in tracker.list(alpha_foos)] == [{"deploymentName": "dep",
                                                                 "replicas": 1}]


def test_a_write_through_another_version_records_that_version(
    api: Api, api_server: TestAPIServer
) -> None:
    """webhooks.jsonl #28/#29: the managedFields entry of a converted write names the version
    the request used, not the storage version."""
    api_server.core.conversions.register(CONVERTER)
    api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             two_version_crd({"strategy": "None"}))
    api.post(V1ALPHA1, alpha("m"))
    patched = api.patch(f"{V1BETA1}/m", {"spec": {"replicas": 3}})[1]
    assert [(e["manager"], e["apiVersion"], e["fieldsV1"])
            for e in patched["metadata"]["managedFields"]] == [
        ("python-urllib3", "samplecontroller.k8s.io/v1alpha1",
         {"f:spec": {".": {}, "f:deploymentName": {}}}),
        ("python-urllib3", "samplecontroller.k8s.io/v1beta1", {"f:spec": {"f:replicas": {}}}),
    ]


def test_the_first_review_version_the_crd_lists_that_the_server_knows_is_sent(
    api: Api, server: WebhookServer, certs: Certs
) -> None:
    """``conversionReviewVersions`` in order, the unknown skipped (webhook_converter.go
    ``createConversionReviewObjects``): a v1beta1 ConversionReview, with the zero-valued
    response stub, answered and read as v1beta1 (whose uid kube-apiserver never checked)."""
    server.converter(CONVERTER, path="/convert")
    server.start()
    assert server.address is not None
    proxy = RecordingProxy(certs, f"https://127.0.0.1:{server.address[1]}")
    try:
        api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", two_version_crd({
            "strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v2", "v1beta1", "v1"],
                "clientConfig": {"url": f"{proxy.url}/convert",
                                 "caBundle": base64.b64encode(certs.ca.read_bytes()).decode()}}}))
        api.post(V1ALPHA1, alpha("a"))
        assert api.get(f"{V1BETA1}/a")[1]["spec"] == {"deployment": "dep", "replicas": 1}
    finally:
        proxy.close()
    [(path, review)] = proxy.calls
    assert (path, review["apiVersion"], review["kind"], review["response"]) == (
        "/convert?timeout=30s", "apiextensions.k8s.io/v1beta1", "ConversionReview",
        {"uid": "", "convertedObjects": None, "result": {"metadata": {}}})


def test_each_manager_owns_and_loses_fields_as_its_own_version_names_them(
    api: Api, api_server: TestAPIServer
) -> None:
    """webhooks.jsonl #23-#30: structured-merge-diff records a write's fields in the request's
    version and compares the objects converted to each other manager's version."""
    api_server.core.conversions.register(CONVERTER)
    api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             two_version_crd({"strategy": "None"}))
    created = api.call("POST", V1BETA1, beta("m", replicas=2),
                       query={"fieldManager": "beta-writer"})[1]
    assert [e["fieldsV1"] for e in created["metadata"]["managedFields"]] == [
        {"f:spec": {".": {}, "f:deployment": {}, "f:replicas": {}}}]

    status, patched = api.call("PATCH", f"{V1ALPHA1}/m", {"spec": {"deploymentName": "other"}},
                               query={"fieldManager": "alpha-writer"},
                               content_type="application/merge-patch+json")

    assert status == 200, patched
    assert {e["manager"]: (e["apiVersion"], e["fieldsV1"])
            for e in patched["metadata"]["managedFields"]} == {
        "beta-writer": ("samplecontroller.k8s.io/v1beta1", {"f:spec": {
            ".": {}, "f:replicas": {}}}),
        "alpha-writer": ("samplecontroller.k8s.io/v1alpha1",
                         {"f:spec": {"f:deploymentName": {}}}),
    }
