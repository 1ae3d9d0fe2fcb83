"""Hub-and-spoke conversion: lossless round trips (property-tested), failures, and the
ConversionReview endpoint."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgen_runtime.meta import KubeModel, KubeObject, ObjectMeta
from kgen_runtime.webhook import (
    ConversionError,
    Converter,
    Spoke,
    WebhookServer,
    stash_fields,
    unstash_fields,
)
from tests.webhook.conftest import Certs
from tests.webhook.test_server import post


class HubSpec(KubeModel):
    size: int | None = None
    color: str | None = None  # only the hub has it


class WidgetV2(KubeObject):
    api_version: str = "example.com/v2"
    kind: str = "Widget"
    spec: HubSpec | None = None


class SpokeSpec(KubeModel):
    replicas: int | None = None


class WidgetV1(KubeObject):
    api_version: str = "example.com/v1"
    kind: str = "Widget"
    spec: SpokeSpec | None = None


def up(old: WidgetV1) -> WidgetV2:
    hub = WidgetV2(metadata=old.metadata.deepcopy() if old.metadata else None)
    stashed = unstash_fields(hub, "Widget")
    if old.spec is not None:
        hub.spec = HubSpec(size=old.spec.replicas)
        if "color" in stashed:
            hub.spec.color = stashed["color"]
    return hub


def down(hub: WidgetV2) -> WidgetV1:
    spoke = WidgetV1(metadata=hub.metadata.deepcopy() if hub.metadata else None)
    if hub.spec is not None:
        spoke.spec = SpokeSpec(replicas=hub.spec.size)
        stash_fields(spoke, "Widget", {"color": hub.spec.color})
    return spoke


CONVERTER = Converter.of(WidgetV2, Spoke(WidgetV1, up, down))

names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
labels = st.dictionaries(names, names, max_size=3)


def meta(name: str, annotations: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": "ns", **({"annotations": annotations} if annotations
                                                else {})}


@st.composite
def hubs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"size": draw(st.integers(0, 10**6))}
    color = draw(st.none() | names)
    if color is not None:
        spec["color"] = color
    return {"apiVersion": "example.com/v2", "kind": "Widget",
            "metadata": meta(draw(names), draw(labels)), "spec": spec}


@st.composite
def spokes(draw: st.DrawFn) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": meta(draw(names), draw(labels)),
            "spec": {"replicas": draw(st.integers(0, 10**6))}}


@given(hubs())
def test_hub_to_spoke_to_hub_is_lossless(hub: dict[str, Any]) -> None:
    spoke = CONVERTER.convert(hub, "example.com/v1")
    assert spoke["apiVersion"] == "example.com/v1"
    assert spoke["spec"] == {"replicas": hub["spec"]["size"]}
    assert CONVERTER.convert(spoke, "example.com/v2") == hub


@given(spokes())
def test_spoke_to_hub_to_spoke_is_lossless(spoke: dict[str, Any]) -> None:
    hub = CONVERTER.convert(spoke, "example.com/v2")
    assert hub["spec"] == {"size": spoke["spec"]["replicas"]}
    assert CONVERTER.convert(hub, "example.com/v1") == spoke


def test_hub_only_fields_travel_in_an_annotation_of_the_spoke() -> None:
    hub = {"apiVersion": "example.com/v2", "kind": "Widget",
           "metadata": {"name": "w"}, "spec": {"size": 2, "color": "red"}}
    assert CONVERTER.convert(hub, "example.com/v1")["metadata"] == {
        "name": "w", "annotations": {"conversion.kgen.io/widget-fields": '{"color":"red"}'}}


def test_same_version_is_returned_as_is() -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "whatever": 1}
    assert CONVERTER.convert(obj, "example.com/v1") is obj


def test_unknown_versions_and_failing_functions_are_conversion_errors() -> None:
    with pytest.raises(ConversionError, match=r"unknown version 'example.com/v3'; "
                                              r"known: example.com/v2, example.com/v1"):
        CONVERTER.convert({"apiVersion": "example.com/v1", "kind": "Widget"}, "example.com/v3")

    def refuse(old: WidgetV1) -> WidgetV2:
        raise ValueError("replicas out of range")

    strict = Converter.of(WidgetV2, Spoke(WidgetV1, refuse, down))
    with pytest.raises(ConversionError,
                       match=r"Widget example\.com/v1 -> example\.com/v2: replicas out of range"):
        strict.convert({"apiVersion": "example.com/v1", "kind": "Widget"}, "example.com/v2")


def review(objects: list[dict[str, Any]], desired: str) -> bytes:
    return orjson.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                         "request": {"uid": "c-1", "desiredAPIVersion": desired,
                                     "objects": objects}})


def test_the_conversion_endpoint_converts_every_object_in_order(
    server: WebhookServer, certs: Certs
) -> None:
    assert server.converter(CONVERTER) == "/convert"
    server.start()
    objects = [{"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": f"w{i}"}, "spec": {"replicas": i}} for i in range(3)]
    status, answer = post(server, certs, "/convert?timeout=30s",
                          review(objects, "example.com/v2"))
    assert status == 200
    assert answer == {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {
            "uid": "c-1",
            "convertedObjects": [
                {"apiVersion": "example.com/v2", "kind": "Widget",
                 "metadata": {"name": f"w{i}"}, "spec": {"size": i}} for i in range(3)
            ],
            "result": {"apiVersion": "v1", "kind": "Status", "metadata": {},
                       "status": "Success"},
        },
    }


def test_the_conversion_endpoint_reports_failures(server: WebhookServer, certs: Certs) -> None:
    server.converter(CONVERTER)
    server.start()
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget"}
    _, answer = post(server, certs, "/convert", review([gadget], "example.com/v2"))
    assert answer["response"]["result"]["status"] == "Failure"
    assert answer["response"]["result"]["message"] == "no conversion for kinds ['Gadget']"
    assert post(server, certs, "/convert", b"[]")[0] == 400


def test_models_stay_plain() -> None:
    widget = WidgetV1(metadata=ObjectMeta(name="w"), spec=SpokeSpec(replicas=1))
    assert widget.model_dump() == {"apiVersion": "example.com/v1", "kind": "Widget",
                                   "metadata": {"name": "w"}, "spec": {"replicas": 1}}
