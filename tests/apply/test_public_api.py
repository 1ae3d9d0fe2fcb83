"""The public surface of kgen_runtime.apply, pinned."""

from __future__ import annotations

import kgen_runtime.apply as apply


def test_public_names() -> None:
    assert sorted(apply.__all__) == [
        "ApplyConfiguration",
        "ConditionApplyConfiguration",
        "FieldSelectorRequirementApplyConfiguration",
        "LabelSelectorApplyConfiguration",
        "LabelSelectorRequirementApplyConfiguration",
        "ObjectApplyConfiguration",
        "ObjectMetaApplyConfiguration",
        "OwnerReferenceApplyConfiguration",
        "UNSET",
        "Unset",
        "applied_fields",
        "extract_owned",
    ]
    assert all(hasattr(apply, name) for name in apply.__all__)
