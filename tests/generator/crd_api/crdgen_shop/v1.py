"""Widgets, version v1 (served, deprecated)."""

from __future__ import annotations

from kgen_runtime.markers import resource
from kgen_runtime.meta import KubeModel, KubeObject


class WidgetSpec(KubeModel):
    """WidgetSpec is the desired state of a Widget."""

    size: int | None = None
    """How big the widget is."""


@resource(
    "shop.example.com",
    "v1",
    short_names=("wd",),
    categories=("shop",),
    deprecated=True,
    deprecation_warning="shop.example.com/v1 Widget is deprecated; use v2",
)
class Widget(KubeObject):
    """A widget (v1)."""

    spec: WidgetSpec | None = None
