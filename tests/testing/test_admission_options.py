"""``request.options`` of the AdmissionReviews the webhooks get: the operation's options as the
request carried them, ``meta.k8s.io/v1`` CreateOptions, UpdateOptions or DeleteOptions, as
kube-apiserver's handlers pass them to admission (a patch's PatchOptions become Create- or
UpdateOptions, keeping dryRun, fieldManager and fieldValidation). On the test server and the
fake."""

from __future__ import annotations

from typing import Any

from tests._webhooks import Recorder
from tests.testing.conftest import Served

Obj = dict[str, Any]

CONFIGMAPS = "/api/v1/namespaces/ns/configmaps"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
RULES = [{"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": [""],
          "apiVersions": ["v1"], "resources": ["configmaps"]}]
APPLY = "application/apply-patch+yaml"


def options(kind: str, **fields: Any) -> Obj:
    return {"kind": kind, "apiVersion": "meta.k8s.io/v1", **fields}


def configmap(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def test_each_operation_sends_its_options(served: Served, recorder: Recorder) -> None:
    status, _ = served.api.post(VALIDATING, {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "options"},
        "webhooks": [recorder.webhook("record", RULES)]})
    assert status == 201
    api = served.api
    assert api.post(CONFIGMAPS, configmap("a"))[0] == 201
    assert api.call("POST", CONFIGMAPS, configmap("b"), query={
        "dryRun": "All", "fieldManager": "me", "fieldValidation": "Strict"})[0] == 201
    _, current = api.get(f"{CONFIGMAPS}/a")
    assert api.put(f"{CONFIGMAPS}/a", current)[0] == 200
    assert api.patch(f"{CONFIGMAPS}/a", {"data": {"k": "v"}}, fieldManager="patcher")[0] == 200
    assert api.patch(f"{CONFIGMAPS}/c", configmap("c"), APPLY, fieldManager="applier",
                     force="true")[0] == 201
    assert api.patch(f"{CONFIGMAPS}/c", configmap("c") | {"data": {"k": "v"}}, APPLY,
                     fieldManager="applier")[0] == 200
    assert api.delete(f"{CONFIGMAPS}/a", {"propagationPolicy": "Background",
                                          "gracePeriodSeconds": 0})[0] == 200
    assert api.delete(f"{CONFIGMAPS}/c", dryRun="All", orphanDependents="false")[0] == 200
    assert [(call.request.operation, call.request.options) for call in recorder.calls()] == [
        ("CREATE", options("CreateOptions")),
        ("CREATE", options("CreateOptions", dryRun=["All"], fieldManager="me",
                           fieldValidation="Strict")),
        ("UPDATE", options("UpdateOptions")),
        ("UPDATE", options("UpdateOptions", fieldManager="patcher")),
        ("CREATE", options("CreateOptions", fieldManager="applier")),
        ("UPDATE", options("UpdateOptions", fieldManager="applier")),
        ("DELETE", options("DeleteOptions", propagationPolicy="Background",
                           gracePeriodSeconds=0)),
        ("DELETE", options("DeleteOptions", dryRun=["All"], orphanDependents=False)),
    ]
