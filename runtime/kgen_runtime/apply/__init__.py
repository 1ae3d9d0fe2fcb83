"""Typed server-side apply: apply configurations (client-go's ``applyconfigurations``).

A generated package has, per group/version, an ``applyconfigurations`` module with one
``…ApplyConfiguration`` class per model and one ``extract_<kind>`` function per kind; the
typed clients' ``apply``/``apply_status`` accept them::

    config = FooApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="example", namespace="default"),
        spec=FooSpecApplyConfiguration(replicas=3),
    )
    foo = client.foos("default").apply(config, field_manager="my-controller")
    mine = extract_foo(foo, "my-controller")   # exactly the fields my-controller owns
"""

from kgen_runtime.apply._configuration import UNSET, ApplyConfiguration, Unset
from kgen_runtime.apply._extract import applied_fields, extract_owned
from kgen_runtime.apply._meta import (
    ConditionApplyConfiguration,
    FieldSelectorRequirementApplyConfiguration,
    LabelSelectorApplyConfiguration,
    LabelSelectorRequirementApplyConfiguration,
    ObjectMetaApplyConfiguration,
    OwnerReferenceApplyConfiguration,
)
from kgen_runtime.apply._object import ObjectApplyConfiguration

__all__ = [
    "UNSET",
    "ApplyConfiguration",
    "ConditionApplyConfiguration",
    "FieldSelectorRequirementApplyConfiguration",
    "LabelSelectorApplyConfiguration",
    "LabelSelectorRequirementApplyConfiguration",
    "ObjectApplyConfiguration",
    "ObjectMetaApplyConfiguration",
    "OwnerReferenceApplyConfiguration",
    "Unset",
    "applied_fields",
    "extract_owned",
]
