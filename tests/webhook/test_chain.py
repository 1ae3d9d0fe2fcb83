"""The test server's admission chain calling a real webhook server: rule matching,
selectors, patches, refusals, failure policies and dry run."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.admission._webhooks import AdmissionAttributes, AdmissionChain
from kgen_runtime.webhook import AdmissionDenied, Warnings, WebhookServer
from tests.webhook.conftest import Certs
from tests.webhook.test_admission import DEPLOYMENT

Obj = dict[str, Any]

CREATE = AdmissionAttributes("CREATE", "apps", "v1", "deployments", "Deployment", "default",
                             "web", namespaced=True)


class Configurations:
    def __init__(self) -> None:
        self.stored: dict[str, list[Obj]] = {}
        self.namespaces: dict[str, dict[str, str]] = {"default": {"team": "a"}}

    def chain(self) -> AdmissionChain:
        return AdmissionChain(lambda plural: self.stored.get(plural, []),
                              self.namespaces.get)

    def add(self, plural: str, name: str, *webhooks: Obj) -> None:
        self.stored.setdefault(plural, []).append(
            {"metadata": {"name": name}, "webhooks": list(webhooks)})


def webhook(name: str, server: WebhookServer, certs: Certs, path: str, **extra: Any) -> Obj:
    assert server.address is not None
    host, port = server.address
    return {
        "name": name,
        "clientConfig": {"url": f"https://{host}:{port}{path}",
                         "caBundle": base64.b64encode(certs.ca.read_bytes()).decode()},
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"],
                   "apiVersions": ["v1"], "resources": ["deployments"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


def label(key: str) -> Any:
    def default(d: Deployment) -> None:
        assert d.metadata is not None
        d.metadata.labels = {**(d.metadata.labels or {}), key: "yes"}
    return default


def no_replicas(d: Deployment) -> Warnings:
    assert d.spec is not None
    if d.spec.replicas is not None:
        raise AdmissionDenied("replicas are managed by the autoscaler")
    return ["checked"]


@pytest.fixture
def serving(server: WebhookServer) -> Iterator[WebhookServer]:
    server.defaulter(Deployment, label("first"), path="/first")
    server.defaulter(Deployment, label("second"), path="/second")
    server.validator(Deployment, on_create=no_replicas, path="/validate")
    server.start()
    yield server


def test_mutating_webhooks_run_in_configuration_order_each_seeing_the_last_patch(
    serving: WebhookServer, certs: Certs
) -> None:
    configurations = Configurations()
    configurations.add("mutatingwebhookconfigurations", "b-second",
                       webhook("second.example.com", serving, certs, "/second"))
    configurations.add("mutatingwebhookconfigurations", "a-first",
                       webhook("first.example.com", serving, certs, "/first"))
    mutated = configurations.chain().mutate(CREATE, DEPLOYMENT, None, [])
    assert mutated is not None
    assert mutated["metadata"]["labels"] == {"app": "web", "first": "yes", "second": "yes"}
    assert list(mutated["metadata"]["labels"]) == ["app", "first", "second"]
    assert mutated["spec"]["futureField"] == {"kept": True}


def test_a_refusal_carries_the_webhooks_name_and_message(
    serving: WebhookServer, certs: Certs
) -> None:
    configurations = Configurations()
    configurations.add("validatingwebhookconfigurations", "v",
                       webhook("replicas.example.com", serving, certs, "/validate"))
    chain = configurations.chain()
    warnings: list[str] = []
    chain.validate(CREATE, DEPLOYMENT, None, warnings)
    assert warnings == ["checked"]
    scaled = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": 2}}
    with pytest.raises(StatusError) as refused:
        chain.validate(CREATE, scaled, None, warnings)
    assert (refused.value.code, refused.value.reason, refused.value.message) == (
        403, "Forbidden", 'admission webhook "replicas.example.com" denied the request: '
        "replicas are managed by the autoscaler")


@pytest.mark.parametrize(
    ("extra", "matches"),
    [
        ({}, True),
        ({"namespaceSelector": {"matchLabels": {"team": "a"}}}, True),
        ({"namespaceSelector": {"matchLabels": {"team": "b"}}}, False),
        ({"objectSelector": {"matchExpressions": [
            {"key": "app", "operator": "In", "values": ["web"]}]}}, True),
        ({"objectSelector": {"matchLabels": {"app": "db"}}}, False),
        ({"rules": [{"operations": ["DELETE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                     "resources": ["deployments"]}]}, False),
        ({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
                     "resources": ["*/*"]}]}, True),
        ({"rules": [{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                     "resources": ["deployments/status"]}]}, False),
        ({"rules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                     "resources": ["deployments"], "scope": "Cluster"}]}, False),
    ],
)
def test_rules_and_selectors_decide_which_webhooks_are_called(
    serving: WebhookServer, certs: Certs, extra: Obj, matches: bool
) -> None:
    configurations = Configurations()
    configurations.add("mutatingwebhookconfigurations", "m",
                       webhook("first.example.com", serving, certs, "/first", **extra))
    mutated = configurations.chain().mutate(CREATE, DEPLOYMENT, None, [])
    assert mutated is not None
    assert ("first" in mutated["metadata"]["labels"]) is matches


@pytest.mark.parametrize(("policy", "refused"), [("Fail", True), ("Ignore", False)])
def test_an_unreachable_webhook_follows_its_failure_policy(
    serving: WebhookServer, certs: Certs, policy: str, refused: bool
) -> None:
    configurations = Configurations()
    configurations.add("mutatingwebhookconfigurations", "m",
                       webhook("gone.example.com", serving, certs, "/missing",
                               failurePolicy=policy))
    chain = configurations.chain()
    if not refused:
        assert chain.mutate(CREATE, DEPLOYMENT, None, []) == DEPLOYMENT
        return
    with pytest.raises(StatusError) as failed:
        chain.mutate(CREATE, DEPLOYMENT, None, [])
    assert failed.value.code == 500
    assert failed.value.message.startswith(
        'Internal error occurred: failed calling webhook "gone.example.com": failed to call '
        "webhook: the server responded with status 404")


def test_a_webhook_with_side_effects_refuses_dry_run_without_being_called(
    serving: WebhookServer, certs: Certs
) -> None:
    configurations = Configurations()
    configurations.add("mutatingwebhookconfigurations", "m",
                       webhook("first.example.com", serving, certs, "/first",
                               sideEffects="Some"))
    dry = AdmissionAttributes("CREATE", "apps", "v1", "deployments", "Deployment", "default",
                              "web", namespaced=True, dry_run=True)
    with pytest.raises(StatusError, match="has side effects and does not support dry run"):
        configurations.chain().mutate(dry, DEPLOYMENT, None, [])


def test_match_conditions_without_an_evaluator_are_refused_not_ignored(
    serving: WebhookServer, certs: Certs
) -> None:
    configurations = Configurations()
    configurations.add("mutatingwebhookconfigurations", "m",
                       webhook("first.example.com", serving, certs, "/first",
                               matchConditions=[{"name": "c", "expression": "true"}]))
    with pytest.raises(StatusError, match="matchConditions need a CEL evaluator"):
        configurations.chain().mutate(CREATE, DEPLOYMENT, None, [])
