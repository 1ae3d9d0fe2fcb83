"""The generated fake clientset runs the admission webhooks of the configurations it is
seeded with, as the test API server does (same core; see
tests/testing/test_admission_webhooks.py for the chain's behaviour in detail)."""

from __future__ import annotations

import pytest
from foo_api.fake import FakeClientset
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec

from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import ForbiddenError
from kgen_runtime.webhook import AdmissionDenied, Warnings, WebhookServer
from tests._webhooks import Certs
from tests.testing.test_admission_webhooks import configuration, url, webhook


def test_the_generated_fake_calls_the_webhooks(server: WebhookServer, certs: Certs) -> None:
    def default_replicas(foo: Foo) -> None:
        assert foo.spec is not None
        foo.spec.replicas = foo.spec.replicas or 3

    def no_crowds(foo: Foo) -> Warnings:
        if foo.spec is not None and (foo.spec.replicas or 0) > 5:
            raise AdmissionDenied("more than 5 replicas need approval")
        return None

    server.defaulter(Foo, default_replicas, path="/foo-default")
    server.validator(Foo, on_create=no_crowds, path="/foo-validate")
    server.start()
    rules = [{"operations": ["CREATE"], "apiGroups": ["samplecontroller.k8s.io"],
              "apiVersions": ["v1alpha1"], "resources": ["foos"]}]
    fake = FakeClientset(
        configuration("MutatingWebhookConfiguration", "foo", webhook(
            "default.foo.example.com", url(server, "/foo-default"), certs, rules=rules)),
        configuration("ValidatingWebhookConfiguration", "foo", webhook(
            "validate.foo.example.com", url(server, "/foo-validate"), certs, rules=rules)))
    foos = fake.samplecontroller_v1alpha1.foos("default")
    created = foos.create(Foo.model_validate({
        "metadata": {"name": "a"}, "spec": {"deploymentName": "d"}}))
    assert created.spec is not None
    assert created.spec.replicas == 3  # the webhook's default, before the schema's (1)
    with pytest.raises(ForbiddenError) as caught:
        foos.create(Foo(metadata=ObjectMeta(name="b"),
                        spec=FooSpec(deployment_name="d", replicas=6)))
    assert str(caught.value) == (
        'admission webhook "validate.foo.example.com" denied the request: more than 5 replicas '
        "need approval")
    assert [f.metadata.name for f in foos.list().items if f.metadata] == ["a"]
