"""The test API server sends the Foo's webhooks the reviews kube-apiserver v1.36 sends.

The Foo's webhooks are reached through a recording proxy while the test server serves the
Foo CRD with its conversion webhook and both webhook configurations; each review recorded
from a real kube-apiserver (../shared/fidelity/webhooks) is compared with the test server's
review of the same call: the same keys, nulls, empty objects, options, user, kinds and
resources, with the volatile values (request uid, test namespace) normalised. The objects
inside are compared by their top-level and metadata keys (their content is the business of
the server's defaulting and managedFields, tested elsewhere).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import yaml
from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller import v1alpha1, v1beta1
from foo_controller import add_webhooks, conversion_webhook, webhook_configurations
from foo_controller._demo import CRD_PATH
from prometheus_client import CollectorRegistry

from kgen_runtime.api.apiextensions.v1 import CustomResourceDefinition
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.api.core.v1 import Namespace
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import ApiError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.webhook import WebhookServer
from tests._webhooks import Certs, RecordingProxy
from tests.shared import SHARED, requires_shared

Obj = dict[str, Any]

RECORDED = SHARED / "fidelity" / "webhooks"

pytestmark = requires_shared(RECORDED)


@pytest.fixture(scope="module")
def reviews(module_certs: Certs) -> Iterator[list[tuple[str, Obj]]]:
    """The reviews the test server sent during the recorded calls, made again."""
    webhooks = WebhookServer("127.0.0.1", 0, cert_dir=module_certs.directory,
                             registry=CollectorRegistry())
    add_webhooks(webhooks)
    webhooks.start()
    assert webhooks.address is not None
    proxy = RecordingProxy(module_certs, f"https://127.0.0.1:{webhooks.address[1]}")
    try:
        with TestAPIServer() as server, KubeClientset.for_config(server.config()) as kube:
            namespace = f"kgen-foo-webhooks-{uuid.uuid4().hex[:10]}"
            kube.core_v1.namespaces().create(Namespace(metadata=ObjectMeta(name=namespace)))
            crd = CustomResourceDefinition.model_validate(yaml.safe_load(CRD_PATH.read_text()))
            ca = module_certs.ca.read_bytes()
            crd.spec.conversion = conversion_webhook(proxy.url, ca)
            kube.apiextensions_v1.customresourcedefinitions().create(crd)
            mutating, validating = webhook_configurations(proxy.url, ca)
            kube.admissionregistration_v1.mutatingwebhookconfigurations().create(mutating)
            kube.admissionregistration_v1.validatingwebhookconfigurations().create(validating)
            _recorded_calls(SampleClientset(kube.transport), namespace)
        yield proxy.calls
    finally:
        proxy.close()
        webhooks.stop()


def _recorded_calls(sample: SampleClientset, namespace: str) -> None:
    """The writes and reads of examples/foo-crd/tests/test_webhooks.py whose reviews were
    recorded."""
    alpha = sample.samplecontroller_v1alpha1.foos(namespace)
    beta = sample.samplecontroller_v1beta1.foos(namespace)
    alpha.create(v1alpha1.Foo(metadata=ObjectMeta(name="probe-alpha")), dry_run=True)
    beta.create(v1beta1.Foo(metadata=ObjectMeta(name="probe-beta")), dry_run=True)
    alpha.create(v1alpha1.Foo.model_validate(
        {"metadata": {"name": "probe-conversion"},
         "spec": {"deploymentName": "probe-conversion"}}))
    beta.get("probe-conversion")
    beta.create(v1beta1.Foo.model_validate(
        {"metadata": {"name": "beta"}, "spec": {"deployment": {"image": "redis:7.2"}}}))
    alpha.create(v1alpha1.Foo.model_validate(
        {"metadata": {"name": "keep"},
         "spec": {"deploymentName": "keep-deployment", "replicas": 2}}))
    for client, spec in ((alpha, {"deploymentName": "other"}),
                         (beta, {"deployment": {"name": "other"}})):
        foo = client.get("keep").model_dump(mode="json")
        foo["spec"] |= spec
        with pytest.raises(ApiError):
            client.update(type(client.get("keep")).model_validate(foo))


_CONTENT = {"managedFields", "labels", "annotations"}
"""Metadata that is content: what the writers set, and managedFields (whose entries the
server's field manager decides, tested in tests/testing/test_managed_fields.py)."""


def _shape(value: Any) -> Any:
    """An embedded object by its keys and its metadata's keys other than :data:`_CONTENT`."""
    if not isinstance(value, dict):
        return value
    return {key: (sorted(set(item) - _CONTENT) if key == "metadata" else "...")
            for key, item in value.items()
            if key not in ("apiVersion", "kind")} | {
        "apiVersion": value.get("apiVersion"), "kind": value.get("kind")}


def _normalised(review: Obj) -> Obj:
    request = dict(review["request"])
    request["uid"] = "<uid>"
    if "namespace" in request:
        request["namespace"] = "<namespace>"
    for key in ("object", "oldObject"):
        if key in request:
            request[key] = _shape(request[key])
    if "objects" in request:
        request["objects"] = [_shape(obj) for obj in request["objects"]]
    return {**review, "request": request}


def _counterpart(reviews: list[tuple[str, Obj]], path: str, recorded: Obj) -> Obj:
    """The test server's review of the recorded call at ``path``."""
    request = recorded["request"]
    for sent_path, review in reviews:
        sent = review["request"]
        if sent_path != path:
            continue
        if "desiredAPIVersion" in request:
            if sent["desiredAPIVersion"] == request["desiredAPIVersion"]:
                return review
        elif (sent.get("name"), sent["operation"], sent["dryRun"]) == (
                request.get("name"), request["operation"], request["dryRun"]):
            return review
    raise AssertionError(f"the test server sent no review like the recorded one at {path}")


@pytest.mark.parametrize("name", sorted(path.stem for path in RECORDED.glob("*.json")))
def test_the_test_server_sends_the_recorded_review_shapes(
    reviews: list[tuple[str, Obj]], name: str
) -> None:
    record = orjson.loads((RECORDED / f"{name}.json").read_bytes())
    sent = _counterpart(reviews, record["path"], record["review"])
    assert _normalised(sent) == _normalised(record["review"])
