"""Apply configurations of the meta/v1 types the runtime models itself (client-go's
``applyconfigurations/meta/v1``): generated apply configurations refer to these."""

from __future__ import annotations

from kgen_runtime.apply._configuration import UNSET, ApplyConfiguration, Unset

__all__ = [
    "ConditionApplyConfiguration",
    "FieldSelectorRequirementApplyConfiguration",
    "LabelSelectorApplyConfiguration",
    "LabelSelectorRequirementApplyConfiguration",
    "ObjectMetaApplyConfiguration",
    "OwnerReferenceApplyConfiguration",
]


class OwnerReferenceApplyConfiguration(ApplyConfiguration):
    """An ``ownerReferences`` item."""

    api_version: str | None | Unset = UNSET
    kind: str | None | Unset = UNSET
    name: str | None | Unset = UNSET
    uid: str | None | Unset = UNSET
    controller: bool | None | Unset = UNSET
    block_owner_deletion: bool | None | Unset = UNSET


class ObjectMetaApplyConfiguration(ApplyConfiguration):
    """``metadata`` of an applied object. ``managedFields`` is not here: an apply must not
    send it."""

    name: str | None | Unset = UNSET
    generate_name: str | None | Unset = UNSET
    namespace: str | None | Unset = UNSET
    uid: str | None | Unset = UNSET
    resource_version: str | None | Unset = UNSET
    generation: int | None | Unset = UNSET
    creation_timestamp: str | None | Unset = UNSET
    deletion_timestamp: str | None | Unset = UNSET
    deletion_grace_period_seconds: int | None | Unset = UNSET
    labels: dict[str, str] | None | Unset = UNSET
    annotations: dict[str, str] | None | Unset = UNSET
    owner_references: list[OwnerReferenceApplyConfiguration] | None | Unset = UNSET
    finalizers: list[str] | None | Unset = UNSET


class LabelSelectorRequirementApplyConfiguration(ApplyConfiguration):
    """A ``matchExpressions`` item."""

    key: str | None | Unset = UNSET
    operator: str | None | Unset = UNSET
    values: list[str] | None | Unset = UNSET


class FieldSelectorRequirementApplyConfiguration(LabelSelectorRequirementApplyConfiguration):
    """A field selector requirement (the same shape as a label selector's)."""


class LabelSelectorApplyConfiguration(ApplyConfiguration):
    """A label selector."""

    match_labels: dict[str, str] | None | Unset = UNSET
    match_expressions: list[LabelSelectorRequirementApplyConfiguration] | None | Unset = UNSET


class ConditionApplyConfiguration(ApplyConfiguration):
    """A ``status.conditions`` item (metav1.Condition)."""

    type: str | None | Unset = UNSET
    status: str | None | Unset = UNSET
    observed_generation: int | None | Unset = UNSET
    last_transition_time: str | None | Unset = UNSET
    reason: str | None | Unset = UNSET
    message: str | None | Unset = UNSET
