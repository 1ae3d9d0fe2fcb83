"""The webhooks of the fidelity corpus' ``webhooks`` scenario, served by kgen's
:class:`WebhookServer` with the answers its README gives (../shared/fidelity/README.md): what
the real kube-apiserver called while the scenario was recorded.

* ``/mutate`` labels an object ``fidelity-webhook: mutated`` (JSON Patch: the whole
  ``/metadata/labels`` when it has none) and warns ``mutated by fid-webhook (<operation>)``;
* ``/validate`` refuses a ConfigMap with the data key ``forbidden`` (403), an UPDATE of a
  ConfigMap labelled ``locked: "true"`` in ``oldObject`` whose data changes (422), and warns
  about a data key ``warn``;
* ``/validate-things`` refuses a Thing whose ``spec.size`` is over 10 (400), naming the
  apiVersion it saw;
* ``/convert`` converts Things between v1's ``spec.color`` and v2's ``spec.paint.color``.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.meta import KubeObject
from kgen_runtime.webhook import (
    AdmissionRequest,
    AdmissionResponse,
    Converter,
    Spoke,
    WebhookServer,
    allowed,
    denied,
)

__all__ = ["THINGS", "ThingV1", "ThingV2", "add_fidelity_webhooks"]

THINGS = "fid-webhooks.example.com"


class _Mutate:
    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        labels = ((request.object or {}).get("metadata") or {}).get("labels")
        patch = ([{"op": "add", "path": "/metadata/labels/fidelity-webhook", "value": "mutated"}]
                 if labels is not None else
                 [{"op": "add", "path": "/metadata/labels",
                   "value": {"fidelity-webhook": "mutated"}}])
        response = allowed(request, [f"mutated by fid-webhook ({request.operation})"])
        response.patch = base64.b64encode(orjson.dumps(patch)).decode()
        response.patch_type = "JSONPatch"
        return response


class _Validate:
    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        new = ConfigMap.model_validate(request.object)
        data = new.data or {}
        if "forbidden" in data:
            return denied(request, "data key 'forbidden' is not allowed")
        if request.old_object is not None:
            old = ConfigMap.model_validate(request.old_object)
            if (old.metadata.labels or {}).get("locked") == "true" and old.data != new.data:
                return denied(request, "locked ConfigMap: data may not change", code=422)
        return allowed(request, ["data key 'warn' seen"] if "warn" in data else None)


class _ValidateThings:
    """Also keeps every request it gets, in order (``requests``)."""

    def __init__(self) -> None:
        self.requests: list[AdmissionRequest] = []

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        self.requests.append(request)
        thing = request.object or {}
        size = (thing.get("spec") or {}).get("size") or 0
        if size > 10:
            return denied(request, f"size {size} too big (seen as {thing['apiVersion']})",
                          code=400)
        return allowed(request)


class ThingV1(KubeObject):
    """``fid-webhooks.example.com/v1`` Thing (the hub): ``spec.color``; fields it does not
    name are kept as they came."""

    api_version: str = f"{THINGS}/v1"
    kind: str = "Thing"


class ThingV2(KubeObject):
    """``fid-webhooks.example.com/v2`` Thing: ``spec.paint.color``."""

    api_version: str = f"{THINGS}/v2"
    kind: str = "Thing"


def _v2_to_v1(thing: ThingV2) -> ThingV1:
    data = thing.model_dump(mode="json")
    spec = data.get("spec") or {}
    if "paint" in spec:
        spec["color"] = spec.pop("paint")["color"]
    return ThingV1.model_validate(data)


def _v1_to_v2(thing: ThingV1) -> ThingV2:
    data = thing.model_dump(mode="json")
    spec = data.get("spec") or {}
    if "color" in spec:
        spec["paint"] = {"color": spec.pop("color")}
    return ThingV2.model_validate(data)


def add_fidelity_webhooks(server: WebhookServer) -> Any:
    """Serve the four webhooks on ``server``; returns ``/validate-things``' handler (its
    ``requests``)."""
    things = _ValidateThings()
    server.register("/mutate", _Mutate())
    server.register("/validate", _Validate())
    server.register("/validate-things", things)
    server.converter(Converter.of(ThingV1, Spoke(ThingV2, _v2_to_v1, _v1_to_v2)))
    return things
