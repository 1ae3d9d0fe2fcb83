"""Webhook warnings come back with the write's error as well as with its success.

kube-apiserver writes each ``Warning`` header as it is added to the request's recorder
(endpoints/filters/warning.go), and the dispatchers add a webhook's warnings before they
look at its verdict. An update runs the mutating webhooks inside
``objInfo.UpdatedObject``, before the registry checks the resourceVersion, and the
validating ones after it (registry/store.go ``Update``): a stale update is refused with 409
and carries the mutating webhooks' warnings, and the validating webhooks never see it.
Recorded: ../shared/fidelity/transcripts/webhooks.jsonl #9 and #12 (a refusal with the
mutating webhook's warning)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import orjson
import pytest

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.webhook import (
    AdmissionDenied,
    AdmissionRequest,
    AdmissionResponse,
    Warnings,
    WebhookServer,
    allowed,
)
from tests._webhooks import Certs
from tests.testing._support import Api
from tests.testing.test_admission_webhooks import CONFIGMAPS, configmap, configured


class _Labelling:
    """Labels every object ``mutated`` and warns about it, naming the operation."""

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        patch = [{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]
        response = allowed(request, [f"mutated ({request.operation})"])
        response.patch = base64.b64encode(orjson.dumps(patch)).decode()
        response.patch_type = "JSONPatch"
        return response


def _no_forbidden_key(new: ConfigMap) -> Warnings:
    if "forbidden" in (new.data or {}):
        raise AdmissionDenied("data key 'forbidden' is not allowed", warnings=["seen"])
    return ["validated"]


@pytest.fixture
def warned(api: Api, server: WebhookServer, certs: Certs) -> Iterator[Api]:
    server.register("/label", _Labelling())
    server.validator(ConfigMap, on_create=_no_forbidden_key,
                     on_update=lambda old, new: _no_forbidden_key(new), path="/validate")
    server.start()
    yield configured(api, server, certs, default_path="/label")


def _put(api: Api, body: dict[str, object]) -> tuple[int, str | None]:
    response = api.http.request("PUT", f"{api.url}{CONFIGMAPS}/app", body=orjson.dumps(body),
                                headers={"Content-Type": "application/json"})
    return response.status, response.headers.get("Warning")


def test_a_refusal_carries_the_warnings_of_the_webhooks_before_and_its_own(
    warned: Api,
) -> None:
    response = warned.http.request(
        "POST", f"{warned.url}{CONFIGMAPS}", body=orjson.dumps(configmap("app", forbidden="x")),
        headers={"Content-Type": "application/json"})
    assert response.status == 403
    assert response.headers.get("Warning") == '299 - "mutated (CREATE)", 299 - "seen"'


def test_a_stale_update_is_refused_with_the_mutating_webhooks_warnings_only(
    warned: Api,
) -> None:
    created = warned.post(CONFIGMAPS, configmap("app", k="v"))[1]
    assert _put(warned, {**created, "data": {"k": "w"}}) == (
        200, '299 - "mutated (UPDATE)", 299 - "validated"')
    # ``created`` is stale now: the validating webhook is not reached.
    assert _put(warned, {**created, "data": {"k": "x"}}) == (409, '299 - "mutated (UPDATE)"')
