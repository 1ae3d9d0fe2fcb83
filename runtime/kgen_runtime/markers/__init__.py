"""Markers for hand-written API types: what ``kgen crd`` turns into CRD manifests.

The Python counterpart of controller-gen's ``+kubebuilder`` comment markers. Field markers
are ``typing.Annotated`` metadata; kinds are declared with :func:`resource`; object-level
rules go on a model class with :func:`object_markers`::

    from typing import Annotated, Literal
    from kgen_runtime.markers import Maximum, Minimum, resource
    from kgen_runtime.meta import KubeModel, KubeObject

    class WidgetSpec(KubeModel):
        replicas: Annotated[int, Minimum(1), Maximum(10)] = 1
        \"\"\"How many widgets to run.\"\"\"
        mode: Literal["fast", "safe"] | str | None = None

    @resource("example.com", "v1", short_names=("wd",), status_subresource=True)
    class Widget(KubeObject):
        \"\"\"A widget.\"\"\"
        spec: WidgetSpec

Constraints a generated model checks (bounds, lengths, pattern, enum, item and property
counts, ``Required``) are checked for hand-written models too when Python code constructs
them; decoding stays lenient. Markers on list items and map values
(``list[Annotated[str, Pattern(...)]]``) go into the CRD and are checked by the server only,
as for generated models. A field is required when it has no default, or is marked
``Required()``; ``T | None = None`` fields are optional. This module is part of the runtime
because the operator imports its API module at run time.
"""

from kgen_runtime.markers._fields import (
    Default,
    EmbeddedResource,
    Enum,
    Format,
    IntOrString,
    ListMapKeys,
    ListType,
    MapType,
    Marker,
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
    Required,
    XValidation,
)
from kgen_runtime.markers._kind import (
    KindMarkers,
    PrinterColumn,
    kind_markers,
    object_markers,
    resource,
)
from kgen_runtime.markers._rules import (
    SplitAnnotation,
    literal_values,
    rules_of,
    split_annotation,
)
from kgen_runtime.resource import ScaleSubresource

__all__ = [
    "Default",
    "EmbeddedResource",
    "Enum",
    "Format",
    "IntOrString",
    "KindMarkers",
    "ListMapKeys",
    "ListType",
    "MapType",
    "Marker",
    "MaxItems",
    "MaxLength",
    "MaxProperties",
    "Maximum",
    "MinItems",
    "MinLength",
    "MinProperties",
    "Minimum",
    "Nullable",
    "Optional",
    "Pattern",
    "PreserveUnknownFields",
    "PrinterColumn",
    "Required",
    "ScaleSubresource",
    "SplitAnnotation",
    "XValidation",
    "kind_markers",
    "literal_values",
    "object_markers",
    "resource",
    "rules_of",
    "split_annotation",
]
