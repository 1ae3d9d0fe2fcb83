"""Writes of the ``scale`` subresource through the admission webhooks and CRD conversion, as
kube-apiserver's ScaleREST does them: the webhooks of ``foos/scale`` (or ``*/scale``,
``*/*``) see an ``autoscaling/v1`` Scale with ``subResource: scale``, may patch it, and the
object is read and written in its storage version. On the test server and the fake."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from kgen_runtime.webhook import (
    Converter,
    GroupVersionKindRef,
    GroupVersionResourceRef,
    Spoke,
    WebhookServer,
)
from tests._webhooks import Certs, Recorder
from tests.testing._support import FOOS, FakeApi, foo
from tests.testing.conftest import FooFake, Served
from tests.testing.test_conversion_webhooks import FooAlpha, FooBeta, renamed

Obj = dict[str, Any]

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.samplecontroller.k8s.io"
BETA_FOOS = "/apis/samplecontroller.k8s.io/v1beta1/namespaces/ns/foos"
SCALE = f"{FOOS}/a/scale"


def rules(*resources: str, versions: tuple[str, ...] = ("*",)) -> list[Obj]:
    return [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["samplecontroller.k8s.io"],
             "apiVersions": list(versions), "resources": list(resources)}]


def configure(served: Served, path: str, kind: str, *webhooks: Obj) -> None:
    status, body = served.api.post(path, {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": "scale"}, "webhooks": list(webhooks)})
    assert status == 201, body


def cap_at(limit: int) -> Any:
    def change(scale: Obj) -> None:
        scale["spec"]["replicas"] = min(scale["spec"]["replicas"], limit)
    return change


def scale_of(created: Obj, replicas: int) -> Obj:
    """The Scale the server projects from ``created`` (no status replicas yet)."""
    meta = created["metadata"]
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {key: meta[key] for key in ("name", "namespace", "uid",
                                                    "resourceVersion", "creationTimestamp")},
            "spec": {"replicas": replicas}, "status": {"replicas": 0}}


def test_scale_webhooks_see_and_patch_an_autoscaling_v1_scale(
    served: Served, recorder: Recorder
) -> None:
    created = served.api.post(FOOS, foo("a", replicas=2))[1]
    configure(served, MUTATING, "MutatingWebhookConfiguration",
              recorder.webhook("cap", rules("foos/scale"), cap_at(5)),
              recorder.webhook("main-resource-only", rules("foos"), cap_at(1)))
    configure(served, VALIDATING, "ValidatingWebhookConfiguration",
              recorder.webhook("any-scale", rules("*/scale")),
              recorder.webhook("everything", rules("*/*")))
    desired = {"apiVersion": "autoscaling/v1", "kind": "Scale",
               "metadata": {"name": "a", "namespace": "ns"}, "spec": {"replicas": 8}}
    status, scale = served.api.put(SCALE, desired)
    assert (status, scale["spec"], scale["kind"]) == (200, {"replicas": 5}, "Scale")
    stored = served.api.get(f"{FOOS}/a")[1]
    assert stored["spec"]["replicas"] == 5
    assert stored["metadata"]["generation"] == 2

    calls = recorder.calls()
    assert [call.webhook for call in calls] == ["cap", "any-scale", "everything"]
    cap = calls[0].request
    assert (cap.operation, cap.name, cap.namespace, cap.sub_resource,
            cap.request_sub_resource) == ("UPDATE", "a", "ns", "scale", "scale")
    assert cap.kind == cap.request_kind == GroupVersionKindRef(
        group="autoscaling", version="v1", kind="Scale")
    assert cap.resource == cap.request_resource == GroupVersionResourceRef(
        group="samplecontroller.k8s.io", version="v1alpha1", resource="foos")
    assert (cap.object, cap.old_object) == (desired, scale_of(created, 2))
    # The validating webhooks see the Scale of the object as it is stored (the cap applied).
    for call in calls[1:]:
        assert call.request.object == {**scale_of(stored, 5), "metadata": {
            **scale_of(stored, 5)["metadata"],
            "resourceVersion": created["metadata"]["resourceVersion"]}}
        assert call.request.old_object == scale_of(created, 2)

    # A patch of the Scale goes the same way; the main resource's webhook stays out of it.
    status, scale = served.api.patch(SCALE, {"spec": {"replicas": 9}})
    assert (status, scale["spec"]) == (200, {"replicas": 5})
    status, patched = served.api.patch(f"{FOOS}/a", {"spec": {"replicas": 4}})
    assert (status, patched["spec"]["replicas"]) == (200, 1)
    assert recorder.names()[3:] == ["cap", "any-scale", "everything",
                                    "main-resource-only", "everything"]


def test_a_dry_run_scale_write_is_admitted_and_stores_nothing(
    served: Served, recorder: Recorder
) -> None:
    served.api.post(FOOS, foo("a", replicas=2))
    configure(served, MUTATING, "MutatingWebhookConfiguration",
              recorder.webhook("cap", rules("foos/scale"), cap_at(3)))
    status, scale = served.api.patch(SCALE, {"spec": {"replicas": 7}}, dryRun="All")
    assert (status, scale["spec"]) == (200, {"replicas": 3})
    assert recorder.calls()[0].request.dry_run is True
    assert served.api.get(f"{FOOS}/a")[1]["spec"]["replicas"] == 2


SIZE_CONVERTER = Converter.of(FooAlpha, Spoke(
    FooBeta,
    to_hub=lambda beta: FooAlpha(metadata=beta.metadata,
                                 spec=renamed(beta.spec, "size", "replicas")),
    from_hub=lambda alpha: FooBeta(metadata=alpha.metadata,
                                   spec=renamed(alpha.spec, "replicas", "size")),
))


def two_versions(served: Served, conversion: Obj) -> None:
    """Serve v1beta1 too, where ``spec.replicas`` is ``spec.size`` (the scale subresource
    follows it), converted as ``conversion`` says."""
    crd = served.api.get(CRD)[1]
    beta = copy.deepcopy(crd["spec"]["versions"][0])
    beta["name"], beta["storage"] = "v1beta1", False
    beta["subresources"]["scale"]["specReplicasPath"] = ".spec.size"
    properties = beta["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    properties["size"] = properties.pop("replicas")
    crd["spec"]["versions"].append(beta)
    crd["spec"]["conversion"] = conversion
    assert served.api.put(CRD, crd)[0] == 200


@pytest.mark.parametrize("converter", ["in-process", "webhook"])
def test_the_scale_of_another_version_is_read_and_written_through_conversion(
    served: Served, recorder: Recorder, server: WebhookServer, certs: Certs, converter: str
) -> None:
    if converter == "in-process":
        served.core.conversions.register(SIZE_CONVERTER)
        two_versions(served, {"strategy": "None"})
    else:
        server.converter(SIZE_CONVERTER, path="/convert")
        assert server.address is not None
        host, port = server.address
        two_versions(served, {"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": f"https://{host}:{port}/convert",
                             "caBundle": base64.b64encode(certs.ca.read_bytes()).decode()}}})
    served.api.post(FOOS, foo("a", replicas=2))
    storage = served.core.registry.lookup("samplecontroller.k8s.io", "v1alpha1", "foos")
    assert storage is not None
    before = served.core.store.get(storage, "ns", "a")
    beta_scale = f"{BETA_FOOS}/a/scale"
    status, scale = served.api.get(beta_scale)
    assert (status, scale["spec"]) == (200, {"replicas": 2})  # read at v1beta1's .spec.size

    configure(served, MUTATING, "MutatingWebhookConfiguration",
              recorder.webhook("beta-scale", rules("foos/scale", versions=("v1beta1",))))
    status, scale = served.api.patch(beta_scale, {"spec": {"replicas": 6}})
    assert (status, scale["spec"]) == (200, {"replicas": 6})
    # Stored in the storage version, in its own field.
    stored = served.core.store.get(storage, "ns", "a")
    assert (stored["apiVersion"], stored["spec"]) == (
        "samplecontroller.k8s.io/v1alpha1", {"deploymentName": "dep", "replicas": 6})
    assert served.api.get(f"{BETA_FOOS}/a")[1]["spec"] == {"deploymentName": "dep", "size": 6}
    request = recorder.calls()[0].request
    assert (request.resource.version, request.kind.kind) == ("v1beta1", "Scale")
    assert (request.object, request.old_object) == (
        {**scale_of(before, 2), "spec": {"replicas": 6}}, scale_of(before, 2))
    # The v1alpha1 Scale (no webhook of its version) reads the same replicas.
    assert served.api.get(SCALE)[1]["spec"] == {"replicas": 6}
    assert recorder.names() == ["beta-scale"]


def test_the_fake_logs_scale_writes_and_its_reactors_answer_before_the_webhooks(
    recorder: Recorder
) -> None:
    fake = FooFake()
    served = Served(FakeApi(fake), fake.core)
    served.api.post(FOOS, foo("a", replicas=2))
    configure(served, MUTATING, "MutatingWebhookConfiguration",
              recorder.webhook("cap", rules("foos/scale"), cap_at(5)))
    desired = {"apiVersion": "autoscaling/v1", "kind": "Scale",
               "metadata": {"name": "a", "namespace": "ns"}, "spec": {"replicas": 8}}
    assert served.api.put(SCALE, desired)[1]["spec"] == {"replicas": 5}
    update = fake.actions()[-1]
    assert (update.verb, update.name, update.subresource, update.object) == (
        "update", "a", "scale", desired)
    fake.prepend_reactor("update", "foos/scale", lambda action: (True, {
        **desired, "spec": {"replicas": 7}}))
    assert served.api.put(SCALE, desired)[1]["spec"] == {"replicas": 7}
    assert recorder.names() == ["cap"]  # as in client-go, a reactor's answer is final
    assert served.api.get(f"{FOOS}/a")[1]["spec"]["replicas"] == 5
