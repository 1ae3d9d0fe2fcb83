"""Kubernetes API machinery types: the model base classes and the meta/v1 types.

Everything here is public API for generated packages and controllers; the modules behind it
are private.
"""

from kgen_runtime.meta._condition import Condition
from kgen_runtime.meta._model import Field, FieldRules, KubeModel, copy_json, no_gc, wire_name
from kgen_runtime.meta._object import APIObject, KubeList, KubeObject, TypeMeta
from kgen_runtime.meta._status import Status, StatusCause, StatusDetails
from kgen_runtime.meta._time import format_micro_time, format_time, parse_time
from kgen_runtime.meta._types import (
    LabelSelector,
    LabelSelectorRequirement,
    ListMeta,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
)
from kgen_runtime.meta._unstructured import Unstructured, UnstructuredList

__all__ = [
    "APIObject",
    "Condition",
    "Field",
    "FieldRules",
    "KubeList",
    "KubeModel",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "Status",
    "StatusCause",
    "StatusDetails",
    "TypeMeta",
    "Unstructured",
    "UnstructuredList",
    "copy_json",
    "format_micro_time",
    "format_time",
    "no_gc",
    "parse_time",
    "wire_name",
]
