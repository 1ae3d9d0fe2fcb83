"""The meta/v1 types every object carries: ObjectMeta, ListMeta, owner references, selectors.

Each mirrors its apimachinery ``metav1`` struct field for field. Timestamps stay RFC 3339
strings, exactly as on the wire (see :mod:`kgen_runtime.meta._time` for conversions), so a
decode/encode round trip is lossless and costs no date parsing. Every field is optional when
decoding (the API server is the authority); fields Kubernetes requires are checked only when
Python code constructs the object (``__kgen_rules__``).

``deepcopy()`` is :class:`KubeModel`'s, as for every model.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kgen_runtime.meta._model import FieldRules, KubeModel

__all__ = [
    "FieldSelectorRequirement",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "ShardInfo",
]


class OwnerReference(KubeModel):
    """metav1.OwnerReference: names the object that owns this one (garbage collection)."""

    __kgen_map_type__: ClassVar[str] = "atomic"  # applied and owned as a whole

    __kgen_rules__: ClassVar = {
        "api_version": FieldRules(required=True),
        "kind": FieldRules(required=True),
        "name": FieldRules(required=True),
        "uid": FieldRules(required=True),
    }

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ManagedFieldsEntry(KubeModel):
    """metav1.ManagedFieldsEntry: which manager owns which fields (server-side apply)."""

    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: str | None = None
    fields_type: str | None = None
    fields_v1: dict[str, Any] | None = None
    subresource: str | None = None


class ObjectMeta(KubeModel):
    """metav1.ObjectMeta: the metadata every persisted object has.

    ``labels``, ``annotations``, ``finalizers`` and the reference lists are ``None`` until
    set; assign a new container (``meta.labels = {...}``) or mutate a copy from
    ``deepcopy()`` — objects handed out by informer caches are shared and must not be changed.
    """

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = None


class ShardInfo(KubeModel):
    """metav1.ShardInfo (v1.36, KEP-5866): the shard selector a server applied to a list,
    echoed as sent; its presence says the list is a filtered subset."""

    __kgen_rules__: ClassVar = {"selector": FieldRules(required=True)}

    selector: str | None = None


class ListMeta(KubeModel):
    """metav1.ListMeta: the metadata of a list response (resource version, paging token,
    and ``shard_info`` when a server applied a ``shardSelector``)."""

    self_link: str | None = None
    resource_version: str | None = None
    continue_: str | None = None
    remaining_item_count: int | None = None
    shard_info: ShardInfo | None = None


class _Requirement(KubeModel):
    """``key`` ``operator`` ``values``: the shape both selector requirements share."""

    key: str | None = None
    operator: str | None = None
    values: list[str] | None = None


class LabelSelectorRequirement(_Requirement):
    """metav1.LabelSelectorRequirement: ``key`` ``operator`` ``values`` over labels."""

    __kgen_rules__: ClassVar = {
        "key": FieldRules(required=True),
        "operator": FieldRules(required=True, enum=("In", "NotIn", "Exists", "DoesNotExist")),
    }


class FieldSelectorRequirement(_Requirement):
    """metav1.FieldSelectorRequirement: ``key`` ``operator`` ``values`` over object fields."""

    __kgen_rules__: ClassVar = {
        "key": FieldRules(required=True),
        "operator": FieldRules(required=True),
    }


class LabelSelector(KubeModel):
    """metav1.LabelSelector: ``matchLabels`` and ``matchExpressions``, ANDed together."""

    __kgen_map_type__: ClassVar[str] = "atomic"  # applied and owned as a whole

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None
