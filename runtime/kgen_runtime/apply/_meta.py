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

    api_version: str | Unset | None = UNSET
    kind: str | Unset | None = UNSET
    name: str | Unset | None = UNSET
    uid: str | Unset | None = UNSET
    controller: bool | Unset | None = UNSET
    block_owner_deletion: bool | Unset | None = UNSET


class ObjectMetaApplyConfiguration(ApplyConfiguration):
    """``metadata`` of an applied object. ``managedFields`` is not here: an apply must not
    send it."""

    name: str | Unset | None = UNSET
    generate_name: str | Unset | None = UNSET
    namespace: str | Unset | None = UNSET
    uid: str | Unset | None = UNSET
    resource_version: str | Unset | None = UNSET
    generation: int | Unset | None = UNSET
    creation_timestamp: str | Unset | None = UNSET
    deletion_timestamp: str | Unset | None = UNSET
    deletion_grace_period_seconds: int | Unset | None = UNSET
    labels: dict[str, str] | Unset | None = UNSET
    annotations: dict[str, str] | Unset | None = UNSET
    owner_references: list[OwnerReferenceApplyConfiguration] | Unset | None = UNSET
    finalizers: list[str] | Unset | None = UNSET


class LabelSelectorRequirementApplyConfiguration(ApplyConfiguration):
    """A ``matchExpressions`` item."""

    key: str | Unset | None = UNSET
    operator: str | Unset | None = UNSET
    values: list[str] | Unset | None = UNSET


class FieldSelectorRequirementApplyConfiguration(LabelSelectorRequirementApplyConfiguration):
    """A field selector requirement (the same shape as a label selector's)."""


class LabelSelectorApplyConfiguration(ApplyConfiguration):
    """A label selector."""

    match_labels: dict[str, str] | Unset | None = UNSET
    match_expressions: list[LabelSelectorRequirementApplyConfiguration] | Unset | None = UNSET


class ConditionApplyConfiguration(ApplyConfiguration):
    """A ``status.conditions`` item (metav1.Condition)."""

    type: str | Unset | None = UNSET
    status: str | Unset | None = UNSET
    observed_generation: int | Unset | None = UNSET
    last_transition_time: str | Unset | None = UNSET
    reason: str | Unset | None = UNSET
    message: str | Unset | None = UNSET
