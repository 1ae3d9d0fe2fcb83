"""The test API server and the fake run the admission webhooks of the stored
Mutating/ValidatingWebhookConfigurations on writes, as kube-apiserver does: a real
``WebhookServer`` over HTTPS, configurations created through the API."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import urllib3

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.webhook import AdmissionDenied, Warnings, WebhookServer
from tests._webhooks import Certs, Recorder, RecordingProxy
from tests.testing._support import Api

Obj = dict[str, Any]

CONFIGMAPS = "/api/v1/namespaces/ns/configmaps"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def webhook(name: str, url: str, certs: Certs, **extra: Any) -> Obj:
    """One webhook of a configuration: ConfigMap writes unless ``rules`` say otherwise, no
    side effects."""
    return {
        "name": name,
        "clientConfig": {"url": url,
                         "caBundle": base64.b64encode(certs.ca.read_bytes()).decode()},
        "rules": [{"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": [""],
                   "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


def configuration(kind: str, name: str, *webhooks: Obj) -> Obj:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "webhooks": list(webhooks)}


def configmap(name: str, **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": data}


def default_tier(cm: ConfigMap) -> None:
    cm.data = {"tier": "gold", **(cm.data or {})}
    assert cm.metadata is not None
    cm.metadata.labels = {**(cm.metadata.labels or {}), "defaulted": "yes"}


def locked_stays(old: ConfigMap, new: ConfigMap) -> Warnings:
    if (old.data or {}).get("locked") != (new.data or {}).get("locked"):
        raise AdmissionDenied("the locked key cannot change")
    return [f"checked {new.metadata.name if new.metadata else ''}"]


def keep_protected(old: ConfigMap) -> Warnings:
    if (old.data or {}).get("protected") == "true":
        raise AdmissionDenied("protected configmaps cannot be deleted")
    return None


@pytest.fixture
def webhooks(server: WebhookServer) -> Iterator[WebhookServer]:
    server.defaulter(ConfigMap, default_tier, path="/default")
    server.validator(ConfigMap, on_update=locked_stays, on_delete=keep_protected,
                     path="/validate")
    server.start()
    yield server


def url(server: WebhookServer, path: str) -> str:
    assert server.address is not None
    host, port = server.address
    return f"https://{host}:{port}{path}"


def configured(api: Api, webhooks: WebhookServer, certs: Certs, *,
               default_path: str = "/default", validate_path: str = "/validate") -> Api:
    """``api`` with a mutating webhook ``default.example.com`` and a validating one
    ``validate.example.com`` served at those paths of ``webhooks``."""
    assert api.post(MUTATING, configuration(
        "MutatingWebhookConfiguration", "defaults",
        webhook("default.example.com", url(webhooks, default_path), certs)))[0] == 201
    assert api.post(VALIDATING, configuration(
        "ValidatingWebhookConfiguration", "checks",
        webhook("validate.example.com", url(webhooks, validate_path), certs)))[0] == 201
    return api


@pytest.fixture
def admitted(api: Api, webhooks: WebhookServer, certs: Certs) -> Api:
    """``api`` with the defaulting and the validating webhook configured."""
    return configured(api, webhooks, certs)


def without_managed_fields(obj: Obj) -> Obj:
    metadata = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return {**obj, "metadata": metadata}


def test_a_create_is_stored_as_the_mutating_webhook_defaulted_it(admitted: Api) -> None:
    status, created = admitted.post(CONFIGMAPS, configmap("app", mode="fast"))
    assert status == 201
    meta = created["metadata"]
    expected = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "ns", "labels": {"defaulted": "yes"},
                     "uid": meta["uid"], "resourceVersion": meta["resourceVersion"],
                     "creationTimestamp": meta["creationTimestamp"]},
        "data": {"tier": "gold", "mode": "fast"},
    }
    assert without_managed_fields(created) == expected
    assert without_managed_fields(admitted.get(f"{CONFIGMAPS}/app")[1]) == expected
    # The configuration objects themselves are not ConfigMaps: they were not defaulted.
    assert admitted.get(f"{MUTATING}/defaults")[1]["metadata"].get("labels") is None


def test_a_bad_update_is_refused_with_the_handlers_message(admitted: Api) -> None:
    created = admitted.post(CONFIGMAPS, configmap("app", locked="a"))[1]
    changed = {**created, "data": {**created["data"], "locked": "b"}}
    status, body = admitted.put(f"{CONFIGMAPS}/app", changed)
    assert (status, body) == (403, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'admission webhook "validate.example.com" denied the request: the locked '
                   "key cannot change",
        "reason": "Forbidden", "code": 403})
    status, body = admitted.patch(f"{CONFIGMAPS}/app", {"data": {"locked": "c"}})
    assert status == 403 and body["message"].endswith("the locked key cannot change")
    assert admitted.get(f"{CONFIGMAPS}/app")[1] == created


def test_an_admitted_update_carries_the_validators_warnings(admitted: Api) -> None:
    admitted.post(CONFIGMAPS, configmap("app", locked="a"))
    response = admitted.http.request(
        "PATCH", f"{admitted.url}{CONFIGMAPS}/app", body=b'{"data":{"other":"x"}}',
        headers={"Content-Type": "application/merge-patch+json"})
    assert response.status == 200
    assert response.headers["Warning"] == '299 - "checked app"'
    assert orjson.loads(response.data)["data"] == {"tier": "gold", "locked": "a", "other": "x"}


def test_a_delete_is_refused_by_the_validator_and_otherwise_goes_through(
    admitted: Api,
) -> None:
    admitted.post(CONFIGMAPS, configmap("keep", protected="true"))
    admitted.post(CONFIGMAPS, configmap("drop"))
    status, body = admitted.delete(f"{CONFIGMAPS}/keep")
    assert status == 403 and body["message"] == (
        'admission webhook "validate.example.com" denied the request: protected configmaps '
        "cannot be deleted")
    assert admitted.delete(f"{CONFIGMAPS}/drop")[0] == 200
    assert [i["metadata"]["name"] for i in admitted.get(CONFIGMAPS)[1]["items"]] == ["keep"]
    status, _ = admitted.delete(CONFIGMAPS)  # deletecollection: each item is admitted
    assert status == 403
    assert [i["metadata"]["name"] for i in admitted.get(CONFIGMAPS)[1]["items"]] == ["keep"]


def test_server_side_apply_is_defaulted_too(admitted: Api) -> None:
    status, applied = admitted.patch(
        f"{CONFIGMAPS}/app", orjson.dumps(configmap("app", mode="x")),
        content_type="application/apply-patch+yaml", fieldManager="me")
    assert status == 201 and applied["data"] == {"tier": "gold", "mode": "x"}


def test_match_conditions_are_evaluated_with_cel(
    api: Api, webhooks: WebhookServer, certs: Certs
) -> None:
    condition = {"name": "not-skipped",
                 "expression": "object.metadata.name != 'skip' && request.operation == 'CREATE'"}
    api.post(MUTATING, configuration(
        "MutatingWebhookConfiguration", "defaults",
        webhook("default.example.com", url(webhooks, "/default"), certs,
                matchConditions=[condition])))
    assert api.post(CONFIGMAPS, configmap("skip"))[1].get("data") is None  # {} is not written
    assert api.post(CONFIGMAPS, configmap("take"))[1]["data"] == {"tier": "gold"}


def test_a_namespace_selector_reads_the_stored_namespaces_labels(
    api: Api, webhooks: WebhookServer, certs: Certs
) -> None:
    api.post(MUTATING, configuration(
        "MutatingWebhookConfiguration", "defaults",
        webhook("default.example.com", url(webhooks, "/default"), certs,
                namespaceSelector={"matchLabels": {"webhooks": "on"}})))
    assert api.post(CONFIGMAPS, configmap("before"))[1].get("data") is None  # not mutated
    api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "ns", "labels": {"webhooks": "on"}}})
    assert api.post(CONFIGMAPS, configmap("after"))[1]["data"] == {"tier": "gold"}


def test_failure_policy_decides_about_an_unreachable_webhook(
    api: Api, api_server: TestAPIServer, certs: Certs
) -> None:
    unreachable = "https://127.0.0.1:1/nothing"
    api.post(VALIDATING, configuration(
        "ValidatingWebhookConfiguration", "ignored",
        webhook("ignored.example.com", unreachable, certs, failurePolicy="Ignore")))
    assert api.post(CONFIGMAPS, configmap("a"))[0] == 201
    api.post(VALIDATING, configuration(
        "ValidatingWebhookConfiguration", "failing",
        webhook("failing.example.com", unreachable, certs, failurePolicy="Fail")))
    status, body = api.post(CONFIGMAPS, configmap("b"))
    assert (status, body["reason"], body["code"]) == (500, "InternalError", 500)
    assert body["message"].startswith(
        'Internal error occurred: failed calling webhook "failing.example.com": ')
    assert [i["metadata"]["name"] for i in api.get(CONFIGMAPS)[1]["items"]] == ["a"]


def test_a_webhook_with_side_effects_cannot_be_registered(
    api: Api, webhooks: WebhookServer, certs: Certs
) -> None:
    """v1 takes only None and NoneOnDryRun on create (validateMutatingWebhook with
    requireNoSideEffects), so no webhook a dry run would have to skip can be registered."""
    status, body = api.post(MUTATING, configuration(
        "MutatingWebhookConfiguration", "effects",
        webhook("effects.example.com", url(webhooks, "/default"), certs, sideEffects="Some")))
    assert (status, body["details"]["causes"]) == (422, [{
        "reason": "FieldValueNotSupported", "field": "webhooks[0].sideEffects",
        "message": 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'}])


def test_a_dry_run_through_side_effect_free_webhooks_stores_nothing(admitted: Api) -> None:
    status, body = admitted.call("POST", CONFIGMAPS, configmap("a"), query={"dryRun": "All"})
    assert status == 201 and body["data"] == {"tier": "gold"}
    assert admitted.get(f"{CONFIGMAPS}/a")[0] == 404


def test_a_webhook_reading_from_the_api_server_during_admission_does_not_deadlock(
    api: Api, api_server: TestAPIServer, server: WebhookServer, certs: Certs
) -> None:
    reader = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(5, 5))

    def tier_from_settings(cm: ConfigMap) -> None:
        settings = orjson.loads(reader.request(
            "GET", f"{api_server.url}{CONFIGMAPS}/settings").data)
        cm.data = {**(cm.data or {}), "tier": settings["data"]["tier"]}

    server.defaulter(ConfigMap, tier_from_settings, path="/from-settings")
    server.start()
    api.post(CONFIGMAPS, configmap("settings", tier="silver"))
    api.post(MUTATING, configuration(
        "MutatingWebhookConfiguration", "reads",
        webhook("reads.example.com", url(server, "/from-settings"), certs,
                objectSelector={"matchLabels": {"read": "yes"}}, timeoutSeconds=5)))
    body = configmap("app")
    body["metadata"]["labels"] = {"read": "yes"}
    status, created = api.post(CONFIGMAPS, body)
    assert (status, created["data"]) == (201, {"tier": "silver"})


def test_concurrent_patches_through_webhooks_all_land(admitted: Api) -> None:
    """The optimistic commit retries on a concurrent write instead of losing one."""
    admitted.post(CONFIGMAPS, configmap("shared"))
    failures: list[int] = []

    def writer(index: int) -> None:
        for round_ in range(4):
            status, _ = admitted.patch(f"{CONFIGMAPS}/shared",
                                       {"data": {f"w{index}-{round_}": "x"}})
            if status != 200:
                failures.append(status)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads) and failures == []
    data = admitted.get(f"{CONFIGMAPS}/shared")[1]["data"]
    assert data == {"tier": "gold", **{f"w{i}-{r}": "x" for i in range(3) for r in range(4)}}


SERVICES = "/api/v1/namespaces/ns/services"
SERVICE_RULES = [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                  "resources": ["services"]}]


def service(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"ports": [{"port": 80}], **spec}}


def test_a_service_gets_one_cluster_ip_which_the_validating_webhooks_see(
    api: Api, recorder: Recorder
) -> None:
    """kube-apiserver allocates in the Service storage's BeginCreate: after the mutating
    webhooks, before the validating ones, once."""
    api.post(MUTATING, configuration("MutatingWebhookConfiguration", "m", recorder.webhook(
        "mutating", SERVICE_RULES)))
    api.post(VALIDATING, configuration("ValidatingWebhookConfiguration", "v", recorder.webhook(
        "validating", SERVICE_RULES)))
    status, created = api.post(SERVICES, service("a", type="NodePort"))
    assert status == 201
    spec = created["spec"]
    assert (spec["clusterIP"], spec["clusterIPs"], spec["ports"][0]["nodePort"]) == (
        "10.0.0.10", ["10.0.0.10"], 30000)
    assert api.get(f"{SERVICES}/a")[1]["spec"] == spec
    mutating, validating = (call.request.object for call in recorder.calls())
    assert mutating is not None and validating is not None
    assert "clusterIP" not in mutating["spec"] and "nodePort" not in mutating["spec"]["ports"][0]
    assert validating["spec"] == spec
    # Nothing was allocated twice: the next Service takes the next address and port.
    status, second = api.post(SERVICES, service("b", type="NodePort"))
    assert (second["spec"]["clusterIP"], second["spec"]["ports"][0]["nodePort"]) == (
        "10.0.0.11", 30001)
    assert [call.webhook for call in recorder.calls()] == ["mutating", "validating"] * 2


@pytest.mark.parametrize("webhooks", [False, True], ids=["plain", "through-webhooks"])
def test_a_dry_run_service_create_shows_an_ip_it_does_not_take(
    api: Api, recorder: Recorder, webhooks: bool
) -> None:
    if webhooks:
        api.post(VALIDATING, configuration("ValidatingWebhookConfiguration", "v",
                                           recorder.webhook("validating", SERVICE_RULES)))
    status, dry = api.call("POST", SERVICES, service("a"), query={"dryRun": "All"})
    assert (status, dry["spec"]["clusterIP"]) == (201, "10.0.0.10")
    assert api.get(f"{SERVICES}/a")[0] == 404
    assert api.post(SERVICES, service("a"))[1]["spec"]["clusterIP"] == "10.0.0.10"
    if webhooks:
        assert [call.request.object["spec"]["clusterIP"] for call in recorder.calls()
                if call.request.object is not None] == ["10.0.0.10", "10.0.0.10"]


def test_a_webhook_asking_for_v1beta1_reviews_gets_them(
    api: Api, webhooks: WebhookServer, certs: Certs
) -> None:
    """The first of ``admissionReviewVersions`` kube-apiserver knows is sent
    (webhook/request/admissionreview.go ``CreateAdmissionObjects``), and its answer taken
    as v1beta1 answers always were (no uid or kind check, a patch read as a JSON Patch)."""
    assert webhooks.address is not None
    proxy = RecordingProxy(certs, f"https://127.0.0.1:{webhooks.address[1]}")
    try:
        assert api.post(MUTATING, configuration(
            "MutatingWebhookConfiguration", "defaults",
            webhook("default.example.com", f"{proxy.url}/default", certs,
                    admissionReviewVersions=["v1beta1", "v1"])))[0] == 201
        status, created = api.post(CONFIGMAPS, configmap("app"))
    finally:
        proxy.close()
    assert (status, created["data"]) == (201, {"tier": "gold"})
    [(path, review)] = proxy.calls
    assert (path, review["apiVersion"], sorted(review)) == (
        "/default?timeout=10s", "admission.k8s.io/v1beta1", ["apiVersion", "kind", "request"])


def test_what_a_mutating_webhook_adds_is_nobodys_field(admitted: Api) -> None:
    """kube-apiserver's create and update handlers run the field manager on the request
    before admission (create.go ``UpdateNoErrors`` before ``admit``): the writer owns what it
    sent, not the label and data key the webhook added (as recorded in the fidelity corpus'
    ``webhooks`` scenario)."""

    def owners(obj: Obj) -> dict[str, Obj]:
        return {entry["manager"]: entry["fieldsV1"] for entry in obj["metadata"]["managedFields"]}

    created = admitted.post(CONFIGMAPS, configmap("app", mode="fast"))[1]
    assert owners(created) == {"python-urllib3": {"f:data": {".": {}, "f:mode": {}}}}
    _, updated = admitted.patch(f"{CONFIGMAPS}/app", {"data": {"other": "x"}},
                                fieldManager="patcher")
    assert owners(updated) == {"python-urllib3": {"f:data": {".": {}, "f:mode": {}}},
                               "patcher": {"f:data": {"f:other": {}}}}
