"""Generated models: wire format, lenient decode, strict construction, deep copies."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from .conftest import GeneratePackage, crd

SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A widget.",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["deploymentName"],
            "properties": {
                "deploymentName": {"type": "string", "minLength": 1, "maxLength": 20},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                "port": {"x-kubernetes-int-or-string": True},
                "podIPs": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "containers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}},
                    },
                },
                "from": {"type": "string"},
                "schema": {"type": "string"},
                "ratio": {"type": "number", "exclusiveMaximum": True, "maximum": 1},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}

WIRE: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "namespace": "ns", "labels": {"a": "b"}, "futureField": 1},
    "spec": {
        "deploymentName": "web",
        "replicas": 3,
        "mode": "Fast",
        "port": "http",
        "podIPs": ["10.0.0.1"],
        "labels": {"x": "y"},
        "raw": {"nested": [{"free": "form"}]},
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
        "containers": [{"name": "app", "unknown": True}],
        "from": "here",
        "schema": "s",
        "ratio": 0.5,
        "notInSchema": {"kept": True},
    },
    "status": None,
}


@pytest.fixture
def widgets(generate_package: GeneratePackage) -> Any:
    return generate_package(crd("Widget", SCHEMA, subresources={"status": {}}))


def test_decode_encode_round_trip_is_lossless(widgets: Any) -> None:
    widget = widgets.Widget.model_validate(WIRE)
    assert widget.model_dump() == WIRE
    assert widgets.Widget.model_validate_json(widget.model_dump_json()).model_dump() == WIRE


def test_attributes_are_snake_case_and_escaped(widgets: Any) -> None:
    spec = widgets.Widget.model_validate(WIRE).spec
    assert (spec.deployment_name, spec.pod_ips, spec.from_, spec.schema_) == (
        "web",
        ["10.0.0.1"],
        "here",
        "s",
    )
    assert spec.template.api_version == "v1" and spec.template.metadata.name == "p"
    assert spec.containers[0].name == "app"
    assert type(spec.containers[0]).__name__ == "WidgetSpecContainer"


def test_lenient_decode_accepts_what_construction_rejects(widgets: Any) -> None:
    server_object = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "spec": {"replicas": 99, "mode": "Turbo", "containers": []},
    }
    widget = widgets.Widget.model_validate(server_object)
    assert (widget.spec.replicas, widget.spec.mode) == (99, "Turbo")
    with pytest.raises(ValidationError) as raised:
        widgets.models.WidgetSpec(replicas=99, mode="Turbo", containers=[], ratio=1.0)
    errors = {(".".join(map(str, e["loc"])), e["type"]) for e in raised.value.errors()}
    assert errors == {
        ("deployment_name", "missing"),
        ("replicas", "less_than_equal"),
        ("mode", "literal_error"),
        ("containers", "too_short"),
        ("ratio", "less_than"),
    }


def test_construction_checks_nested_values_and_names_the_path(widgets: Any) -> None:
    with pytest.raises(ValidationError) as raised:
        widgets.Widget(spec={"deploymentName": "", "containers": [{"name": "Bad!"}]})
    errors = {(".".join(map(str, e["loc"])), e["type"]) for e in raised.value.errors()}
    assert errors == {
        ("spec.deployment_name", "string_too_short"),
        ("spec.containers.0.name", "string_pattern_mismatch"),
    }


def test_construction_by_either_name_and_wire_dump(widgets: Any) -> None:
    spec = widgets.models.WidgetSpec(deployment_name="a", podIPs=["1.2.3.4"])
    assert spec.model_dump() == {"deploymentName": "a", "podIPs": ["1.2.3.4"]}
    widget = widgets.Widget(spec=spec)
    widget.metadata.name = "late"
    assert widget.model_dump() == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "late"},
        "spec": {"deploymentName": "a", "podIPs": ["1.2.3.4"]},
    }


def test_schema_defaults_are_read_but_not_sent(widgets: Any) -> None:
    spec = widgets.models.WidgetSpec(deployment_name="a")
    assert spec.replicas == 1
    assert "replicas" not in spec.model_dump()


def test_deepcopy_is_independent(widgets: Any) -> None:
    original = widgets.Widget.model_validate(WIRE)
    clone = original.deepcopy()
    assert clone.model_dump() == WIRE and type(clone) is type(original)
    clone.metadata.labels["a"] = "changed"
    clone.spec.pod_ips.append("10.0.0.2")
    clone.spec.raw["nested"][0]["free"] = "changed"
    clone.spec.containers[0].name = "changed"
    clone.spec.template.metadata.name = "changed"
    clone.spec.labels["x"] = "changed"
    clone.spec.__pydantic_extra__["notInSchema"]["kept"] = False
    assert original.model_dump() == WIRE
    assert copy.deepcopy(original).model_dump() == WIRE


def test_registration(widgets: Any) -> None:
    resource = widgets.WIDGET_RESOURCE
    assert (resource.group, resource.version, resource.kind, resource.plural) == (
        "example.com",
        "v1",
        "Widget",
        "widgets",
    )
    assert resource.namespaced and resource.status_subresource
    assert resource.model is widgets.Widget and resource.list_model is widgets.WidgetList
    from kgen_runtime.scheme import Scheme

    scheme = Scheme()
    widgets.add_to_scheme(scheme)
    assert scheme.class_for(resource.gvk) is widgets.Widget
    assert scheme.class_for(resource.list_gvk) is widgets.WidgetList


def test_list_model(widgets: Any) -> None:
    listing = widgets.WidgetList.model_validate(
        {
            "apiVersion": "example.com/v1",
            "kind": "WidgetList",
            "metadata": {"resourceVersion": "7"},
            "items": [WIRE],
        }
    )
    assert listing.metadata.resource_version == "7"
    assert listing.items[0].spec.deployment_name == "web"
    assert listing.deepcopy().model_dump() == listing.model_dump()


def test_identical_nested_schemas_share_one_class(generate_package: GeneratePackage) -> None:
    port = {"type": "object", "properties": {"port": {"type": "integer"}}}
    gv = generate_package(
        crd(
            "Svc",
            {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {"primary": port, "secondary": port}}
                },
            },
        )
    )
    assert gv.models.SvcSpecSecondary is gv.models.SvcSpecPrimary
