"""``matchPolicy: Equivalent`` (the v1 default): a webhook whose rules name another version of
the resource is called for a request in any served version, with the object converted to
the version it names and ``requestKind``/``requestResource`` telling the request's
(generic/webhook.go ``ShouldCallHook``). As recorded in the fidelity corpus'
``webhooks`` scenario (#19-#24): a v2-only validating webhook refuses a v1 create it sees as
v2, converted by the CRD's conversion webhook."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from kgen_runtime.webhook import WebhookServer
from tests._fidelity_webhooks import THINGS, add_fidelity_webhooks
from tests._webhooks import Certs
from tests.testing._support import Api
from tests.testing.test_admission_webhooks import VALIDATING, configuration, url

Obj = dict[str, Any]

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
V1 = f"/apis/{THINGS}/v1/namespaces/ns/things"


def _schema(spec: Obj) -> Obj:
    return {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": spec}}}}


def thing_crd(convert_url: str, ca: str) -> Obj:
    """The recorded Thing CRD: v1 (storage) with ``spec.color``, v2 with
    ``spec.paint.color``, converted by a webhook."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{THINGS}"},
        "spec": {
            "group": THINGS, "scope": "Namespaced",
            "names": {"kind": "Thing", "plural": "things", "singular": "thing",
                      "listKind": "ThingList"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": _schema(
                    {"size": {"type": "integer"}, "color": {"type": "string"}})},
                {"name": "v2", "served": True, "storage": False, "schema": _schema(
                    {"size": {"type": "integer"}, "paint": {
                        "type": "object", "properties": {"color": {"type": "string"}}}})},
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"url": convert_url, "caBundle": ca}}},
        },
    }


@pytest.fixture
def things(api: Api, server: WebhookServer, certs: Certs) -> Iterator[Any]:
    """The Thing CRD and the v2-only validating webhook; yields the webhook's handler."""
    handler = add_fidelity_webhooks(server)
    server.start()
    ca = base64.b64encode(certs.ca.read_bytes()).decode()
    assert api.post(CRDS, thing_crd(url(server, "/convert"), ca))[0] == 201
    assert api.post(VALIDATING, configuration(
        "ValidatingWebhookConfiguration", "things", {
            "name": "things.fid-webhooks.example.com",
            "clientConfig": {"url": url(server, "/validate-things"), "caBundle": ca},
            "rules": [{"apiGroups": [THINGS], "apiVersions": ["v2"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["things"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}))[0] == 201
    yield handler


def thing(name: str, size: int) -> Obj:
    return {"apiVersion": f"{THINGS}/v1", "kind": "Thing", "metadata": {"name": name},
            "spec": {"color": "green", "size": size}}


def test_a_webhook_of_another_version_sees_the_request_converted(things: Any,
                                                                  api: Api) -> None:
    assert api.post(V1, thing("t1", 3))[0] == 201
    [request] = things.requests
    seen = request.model_dump(mode="json")
    assert (seen["kind"], seen["resource"], seen["requestKind"], seen["requestResource"]) == (
        {"group": THINGS, "version": "v2", "kind": "Thing"},
        {"group": THINGS, "version": "v2", "resource": "things"},
        {"group": THINGS, "version": "v1", "kind": "Thing"},
        {"group": THINGS, "version": "v1", "resource": "things"})
    assert (seen["object"]["apiVersion"], seen["object"]["spec"]) == (
        f"{THINGS}/v2", {"paint": {"color": "green"}, "size": 3})


def test_a_webhook_of_another_version_refuses_what_it_sees_converted(things: Any,
                                                                     api: Api) -> None:
    assert api.post(V1, thing("t3", 20)) == (400, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'admission webhook "things.fid-webhooks.example.com" denied the request: '
                   f"size 20 too big (seen as {THINGS}/v2)",
        "reason": "BadRequest", "code": 400})
