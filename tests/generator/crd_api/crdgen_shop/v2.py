"""Widgets, version v2 (the storage version), with every field marker."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from kgen_runtime.markers import (
    Default,
    EmbeddedResource,
    Enum,
    Format,
    IntOrString,
    ListMapKeys,
    ListType,
    MapType,
    Maximum,
    MaxItems,
    MaxLength,
    MaxProperties,
    Minimum,
    MinItems,
    MinLength,
    MinProperties,
    Nullable,
    Optional,
    Pattern,
    PreserveUnknownFields,
    PrinterColumn,
    Required,
    ScaleSubresource,
    XValidation,
    object_markers,
    resource,
)
from kgen_runtime.meta import Field, KubeModel, KubeObject, ObjectMeta, Unstructured


class Port(KubeModel):
    """A port the widget listens on."""

    name: str
    number: Annotated[int, Minimum(0, exclusive=True), Maximum(65536, exclusive=True)]
    protocol: Literal["TCP", "UDP"] | str = "TCP"


@object_markers(XValidation("self.low <= self.high", message="low must not exceed high"))
class Range(KubeModel):
    """An inclusive range."""

    low: int
    high: int


class PodTemplate(KubeModel):
    """A whole object, kept as written."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: dict[str, Any] | None = None


class WidgetSpec(KubeModel):
    """WidgetSpec is the desired state of a Widget."""

    replicas: Annotated[int, Minimum(1), Maximum(10)] = 1
    """How many widgets to run."""
    name: Annotated[str, MinLength(1), MaxLength(63), Pattern("^[a-z]([-a-z0-9]*[a-z0-9])?$")]
    """The widget's name,
    a DNS label."""
    mode: Literal["fast", "safe"] | None = None
    level: Annotated[str, Enum("low", "high")] = "low"
    target: int | str | None = None
    port_name: Annotated[str, IntOrString()] | None = Field(default=None, alias="portName")
    started: Annotated[str, Format("date-time")] | None = None
    ratio: float | None = None
    enabled: bool = False
    tags: Annotated[list[str], MinItems(1), MaxItems(5), ListType("set")] | None = None
    ports: Annotated[list[Port], ListType("map"), ListMapKeys("name", "protocol")] | None = None
    labels: (
        Annotated[dict[str, str], MinProperties(1), MaxProperties(8), MapType("granular")] | None
    ) = None
    range: (
        Annotated[
            Range,
            XValidation(
                "self == oldSelf",
                message_expression="'range is immutable'",
                reason="FieldValueForbidden",
                field_path=".low",
                optional_old_self=True,
            ),
        ]
        | None
    ) = None
    config: dict[str, Any] | None = None
    raw: Any = None
    template: PodTemplate | None = None
    snapshot: Annotated[Unstructured, EmbeddedResource()] | None = None
    note: Annotated[str | None, Nullable(), Default("none")] = None
    owner: Annotated[str | None, Required()] = None
    comment: Annotated[str, Optional()]
    versions: list[Annotated[str, Pattern("^v")] | None] | None = None
    extra: Annotated[dict[str, int], PreserveUnknownFields()] = Field(default_factory=dict)


class WidgetStatus(KubeModel):
    """The observed state of a Widget."""

    replicas: int | None = None
    selector: str | None = None


@resource(
    "shop.example.com",
    "v2",
    short_names=("wd",),
    categories=("shop",),
    status_subresource=True,
    scale_subresource=ScaleSubresource(".spec.replicas", ".status.replicas", ".status.selector"),
    printer_columns=(
        PrinterColumn("Replicas", "integer", ".spec.replicas", description="Desired"),
        PrinterColumn("Started", "date", ".spec.started", format="date-time", priority=1),
    ),
    storage=True,
)
class Widget(KubeObject):
    """A widget: the v2 API."""

    spec: WidgetSpec
    status: WidgetStatus | None = None


@resource("shop.example.com", "v1alpha1", kind="Gadget", plural="gadgetry", scope="Cluster")
class GadgetObject(KubeObject):
    """A cluster-wide gadget."""

    spec: dict[str, str] | None = None
