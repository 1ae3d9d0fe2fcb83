"""The meta/v1 types every object carries: ObjectMeta, ListMeta, owner references, selectors.

Each mirrors its apimachinery ``metav1`` struct field for field. Timestamps stay RFC 3339
strings, exactly as on the wire (see :mod:`kgen_runtime.meta._time` for conversions), so a
decode/encode round trip is lossless and costs no date parsing. Every field is optional when
decoding (the API server is the authority); fields Kubernetes requires are checked only when
Python code constructs the object (``__kgen_rules__``).

``deepcopy()`` on each type is hand-written in the generated-code pattern: field by field,
sharing only immutable values.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from kgen_runtime.meta._model import FieldRules, KubeModel, copy_json

__all__ = [
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
]


class OwnerReference(KubeModel):
    """metav1.OwnerReference: names the object that owns this one (garbage collection)."""

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

    def deepcopy(self) -> Self:
        d = self.__dict__
        return self._kgen_new(
            self,
            {
                "api_version": d["api_version"],
                "kind": d["kind"],
                "name": d["name"],
                "uid": d["uid"],
                "controller": d["controller"],
                "block_owner_deletion": d["block_owner_deletion"],
            },
        )


class ManagedFieldsEntry(KubeModel):
    """metav1.ManagedFieldsEntry: which manager owns which fields (server-side apply)."""

    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: str | None = None
    fields_type: str | None = None
    fields_v1: dict[str, Any] | None = None
    subresource: str | None = None

    def deepcopy(self) -> Self:
        d = self.__dict__
        return self._kgen_new(
            self,
            {
                "manager": d["manager"],
                "operation": d["operation"],
                "api_version": d["api_version"],
                "time": d["time"],
                "fields_type": d["fields_type"],
                "fields_v1": copy_json(d["fields_v1"]),
                "subresource": d["subresource"],
            },
        )


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

    def deepcopy(self) -> Self:
        d = self.__dict__
        labels = d["labels"]
        annotations = d["annotations"]
        owner_references = d["owner_references"]
        finalizers = d["finalizers"]
        managed_fields = d["managed_fields"]
        return self._kgen_new(
            self,
            {
                "name": d["name"],
                "generate_name": d["generate_name"],
                "namespace": d["namespace"],
                "self_link": d["self_link"],
                "uid": d["uid"],
                "resource_version": d["resource_version"],
                "generation": d["generation"],
                "creation_timestamp": d["creation_timestamp"],
                "deletion_timestamp": d["deletion_timestamp"],
                "deletion_grace_period_seconds": d["deletion_grace_period_seconds"],
                "labels": None if labels is None else dict(labels),
                "annotations": None if annotations is None else dict(annotations),
                "owner_references": (
                    None if owner_references is None else [r.deepcopy() for r in owner_references]
                ),
                "finalizers": None if finalizers is None else list(finalizers),
                "managed_fields": (
                    None if managed_fields is None else [m.deepcopy() for m in managed_fields]
                ),
            },
        )


class ListMeta(KubeModel):
    """metav1.ListMeta: the metadata of a list response (resource version, paging token)."""

    self_link: str | None = None
    resource_version: str | None = None
    continue_: str | None = None
    remaining_item_count: int | None = None

    def deepcopy(self) -> Self:
        d = self.__dict__
        return self._kgen_new(
            self,
            {
                "self_link": d["self_link"],
                "resource_version": d["resource_version"],
                "continue_": d["continue_"],
                "remaining_item_count": d["remaining_item_count"],
            },
        )


class LabelSelectorRequirement(KubeModel):
    """metav1.LabelSelectorRequirement: ``key`` ``operator`` ``values``."""

    __kgen_rules__: ClassVar = {
        "key": FieldRules(required=True),
        "operator": FieldRules(required=True, enum=("In", "NotIn", "Exists", "DoesNotExist")),
    }

    key: str | None = None
    operator: str | None = None
    values: list[str] | None = None

    def deepcopy(self) -> Self:
        d = self.__dict__
        values = d["values"]
        return self._kgen_new(
            self,
            {
                "key": d["key"],
                "operator": d["operator"],
                "values": None if values is None else list(values),
            },
        )


class LabelSelector(KubeModel):
    """metav1.LabelSelector: ``matchLabels`` and ``matchExpressions``, ANDed together."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None

    def deepcopy(self) -> Self:
        d = self.__dict__
        match_labels = d["match_labels"]
        match_expressions = d["match_expressions"]
        return self._kgen_new(
            self,
            {
                "match_labels": None if match_labels is None else dict(match_labels),
                "match_expressions": (
                    None if match_expressions is None else [e.deepcopy() for e in match_expressions]
                ),
            },
        )
