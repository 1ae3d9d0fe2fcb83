"""Kubernetes API machinery types: the model base classes and the meta/v1 types.

Everything here is public API for generated packages and controllers; the modules behind it
are private. Objects dump to the wire format, with only what was set::

    >>> from kgen_runtime.meta import ObjectMeta, Unstructured
    >>> thing = Unstructured(api_version="x.io/v1", kind="Thing", metadata=ObjectMeta(name="t"))
    >>> thing["spec"] = {"size": 3}
    >>> thing.metadata.labels = {"app": "demo"}
    >>> thing.model_dump_json()
    '{"apiVersion":"x.io/v1","kind":"Thing","metadata":{"name":"t","labels":{"app":"demo"}},...}'
    >>> copy = thing.deepcopy()
    >>> copy["spec"]["size"] = 4
    >>> thing["spec"]
    {'size': 3}
"""

from kgen_runtime.meta._condition import (
    Condition,
    ConditionLike,
    find_status_condition,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)
from kgen_runtime.meta._memory import no_gc
from kgen_runtime.meta._merge import MergeRules, map_type, merge_rules
from kgen_runtime.meta._model import Field, FieldRules, KubeModel, copy_json, wire_name
from kgen_runtime.meta._object import (
    APIObject,
    KubeList,
    KubeObject,
    TypeMeta,
    WireEventFilter,
    WireFilter,
)
from kgen_runtime.meta._status import Status, StatusCause, StatusDetails
from kgen_runtime.meta._time import format_micro_time, format_time, parse_time
from kgen_runtime.meta._types import (
    FieldSelectorRequirement,
    LabelSelector,
    LabelSelectorRequirement,
    ListMeta,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
    ShardInfo,
)
from kgen_runtime.meta._unstructured import Unstructured, UnstructuredList

__all__ = [
    "APIObject",
    "Condition",
    "ConditionLike",
    "Field",
    "FieldRules",
    "FieldSelectorRequirement",
    "KubeList",
    "KubeModel",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ManagedFieldsEntry",
    "MergeRules",
    "ObjectMeta",
    "OwnerReference",
    "ShardInfo",
    "Status",
    "StatusCause",
    "StatusDetails",
    "TypeMeta",
    "Unstructured",
    "UnstructuredList",
    "WireEventFilter",
    "WireFilter",
    "copy_json",
    "find_status_condition",
    "format_micro_time",
    "format_time",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "map_type",
    "merge_rules",
    "no_gc",
    "parse_time",
    "remove_status_condition",
    "set_status_condition",
    "wire_name",
]
