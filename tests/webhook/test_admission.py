"""Typed admission handlers: the defaulter's JSON Patch and the validator's verdicts."""

from __future__ import annotations

import base64
from typing import Any

import jsonpatch
import orjson
import pytest

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.webhook import (
    AdmissionDenied,
    AdmissionRequest,
    DefaultingHandler,
    ValidatingHandler,
    Warnings,
)

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        "futureField": {"kept": True},
    },
}


def request(operation: str, obj: dict[str, Any] | None = None,
            old: dict[str, Any] | None = None) -> AdmissionRequest:
    return AdmissionRequest.model_validate({
        "uid": "u-1", "operation": operation, "object": obj, "oldObject": old,
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": "web", "namespace": "default",
        "userInfo": {"username": "alice"},
    })


def default_deployment(d: Deployment) -> None:
    assert d.spec is not None
    if d.spec.replicas is None:
        d.spec.replicas = 3
    assert d.metadata is not None and d.metadata.labels is not None
    d.metadata.labels["defaulted"] = "true"


def test_defaulter_answers_with_the_json_patch_from_the_sent_object() -> None:
    response = DefaultingHandler(Deployment, default_deployment).handle(
        request("CREATE", DEPLOYMENT))
    assert (response.uid, response.allowed, response.patch_type) == ("u-1", True, "JSONPatch")
    assert response.patch is not None
    operations = orjson.loads(base64.b64decode(response.patch))
    assert sorted(operations, key=lambda op: op["path"]) == [
        {"op": "add", "path": "/metadata/labels/defaulted", "value": "true"},
        {"op": "add", "path": "/spec/replicas", "value": 3},
    ]
    patched = jsonpatch.apply_patch(DEPLOYMENT, operations)
    assert patched["spec"]["futureField"] == {"kept": True}  # unknown fields survive


def test_a_defaulter_may_return_a_new_object() -> None:
    def replace(d: Deployment) -> Deployment:
        copy = d.deepcopy()
        assert copy.spec is not None
        copy.spec.paused = True
        return copy

    response = DefaultingHandler(Deployment, replace).handle(request("UPDATE", DEPLOYMENT))
    assert response.patch is not None
    assert orjson.loads(base64.b64decode(response.patch)) == [
        {"op": "add", "path": "/spec/paused", "value": True}]


@pytest.mark.parametrize("operation", ["CREATE", "DELETE"])
def test_nothing_to_default_means_no_patch(operation: str) -> None:
    calls: list[Deployment] = []
    handler = DefaultingHandler(Deployment, calls.append)  # type: ignore[arg-type]
    obj = DEPLOYMENT if operation == "CREATE" else None
    response = handler.handle(request(operation, obj, old=DEPLOYMENT))
    assert (response.allowed, response.patch, response.patch_type) == (True, None, None)
    assert len(calls) == (1 if operation == "CREATE" else 0)


def test_a_defaulter_may_refuse() -> None:
    def refuse(d: Deployment) -> None:
        raise AdmissionDenied("no defaults for you", code=422)

    response = DefaultingHandler(Deployment, refuse).handle(request("CREATE", DEPLOYMENT))
    assert response.allowed is False
    assert response.status is not None
    assert (response.status.code, response.status.message) == (422, "no defaults for you")


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def create(self, d: Deployment) -> Warnings:
        self.seen.append(("create", d.metadata.name if d.metadata else ""))
        return ["replicas unset"]

    def update(self, old: Deployment, new: Deployment) -> Warnings:
        assert old.spec is not None and new.spec is not None
        self.seen.append(("update", str(old.spec.replicas), str(new.spec.replicas)))
        if new.spec.replicas != old.spec.replicas:
            raise AdmissionDenied("spec.replicas is immutable", warnings=["tried"])
        return None

    def delete(self, old: Deployment) -> Warnings:
        self.seen.append(("delete", old.kind))
        return None


def test_validator_calls_the_hook_of_each_operation() -> None:
    hooks = Recorder()
    handler = ValidatingHandler(Deployment, hooks.create, hooks.update, hooks.delete)
    scaled = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": 5}}
    created = handler.handle(request("CREATE", DEPLOYMENT))
    same = handler.handle(request("UPDATE", DEPLOYMENT, old=DEPLOYMENT))
    refused = handler.handle(request("UPDATE", scaled, old=DEPLOYMENT))
    deleted = handler.handle(request("DELETE", None, old=DEPLOYMENT))
    assert hooks.seen == [("create", "web"), ("update", "None", "None"),
                          ("update", "None", "5"), ("delete", "Deployment")]
    assert (created.allowed, created.warnings, created.status) == (True, ["replicas unset"], None)
    assert (same.allowed, same.warnings) == (True, None)
    assert refused.allowed is False and refused.warnings == ["tried"]
    assert refused.status is not None
    assert (refused.status.code, refused.status.reason, refused.status.message) == (
        403, "Forbidden", "spec.replicas is immutable")
    assert deleted.allowed is True


def test_a_missing_hook_admits() -> None:
    response = ValidatingHandler(Deployment).handle(request("UPDATE", DEPLOYMENT, DEPLOYMENT))
    assert (response.uid, response.allowed) == ("u-1", True)
