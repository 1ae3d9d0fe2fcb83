"""status.conditions helpers, on metav1 Condition and on a generated class of the same shape."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal, Self

import pytest

from kgen_runtime.meta import (
    Condition,
    KubeModel,
    find_status_condition,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)

T0 = "2024-05-01T12:00:00Z"
NOW = datetime(2024, 6, 1, 8, 30, tzinfo=UTC)
NOW_TEXT = "2024-06-01T08:30:00Z"


class FooStatusCondition(KubeModel):
    """What the generator emits for a CRD's metav1.Condition-shaped schema."""

    last_transition_time: str | None = None
    message: str | None = None
    observed_generation: int | None = None
    reason: str | None = None
    status: Literal["True", "False", "Unknown"] | str | None = None
    type: str | None = None

    def deepcopy(self) -> Self:
        return self.model_copy()


def ready(status: str = "True", **changes: object) -> Condition:
    fields: dict[str, object] = {
        "type": "Ready",
        "status": status,
        "reason": "Ok",
        "message": "fine",
        "observed_generation": 1,
        "last_transition_time": T0,
    }
    return Condition.model_validate({**fields, **changes}, by_name=True)


def test_set_appends_a_copy_and_stamps_missing_time() -> None:
    conditions: list[Condition] = []
    new = ready(last_transition_time=None)
    assert set_status_condition(conditions, new, now=NOW) is True
    assert conditions == [ready(last_transition_time=NOW_TEXT)]
    assert conditions[0] is not new and new.last_transition_time is None


def test_set_keeps_a_given_time() -> None:
    conditions: list[Condition] = []
    set_status_condition(conditions, ready(), now=NOW)
    assert conditions[0].last_transition_time == T0


def test_set_merges_and_moves_the_time_only_on_status_change() -> None:
    conditions = [ready(), ready(type="Synced")]
    assert set_status_condition(conditions, ready(reason="Other", message="m"), now=NOW) is True
    assert conditions[0] == ready(reason="Other", message="m")
    assert set_status_condition(conditions, ready(reason="Other", message="m"), now=NOW) is False
    flipped = ready("False", reason="Broken", last_transition_time=None, observed_generation=2)
    assert set_status_condition(conditions, flipped, now=NOW) is True
    assert conditions == [
        ready(
            "False",
            reason="Broken",
            message="fine",
            last_transition_time=NOW_TEXT,
            observed_generation=2,
        ),
        ready(type="Synced"),
    ]


def test_find_remove_and_predicates() -> None:
    conditions = [ready(), ready("False", type="Synced")]
    assert find_status_condition(conditions, "Synced") is conditions[1]
    assert find_status_condition(None, "Synced") is None
    assert is_status_condition_true(conditions, "Ready")
    assert not is_status_condition_true(conditions, "Synced")
    assert is_status_condition_false(conditions, "Synced")
    assert not is_status_condition_false(conditions, "Missing")
    assert is_status_condition_present_and_equal(conditions, "Ready", "True")
    assert remove_status_condition(conditions, "Ready") is True
    assert remove_status_condition(conditions, "Ready") is False
    assert [c.type for c in conditions] == ["Synced"]


def test_generated_condition_classes_work_too() -> None:
    conditions: list[FooStatusCondition] = []
    new = FooStatusCondition(type="Ready", status="True", reason="Ok", message="")
    assert set_status_condition(conditions, new, now=NOW)
    assert conditions[0].last_transition_time == NOW_TEXT
    assert is_status_condition_true(conditions, "Ready")


@pytest.mark.parametrize("status", ["True", "False", "Unknown"])
def test_set_with_the_default_clock_writes_an_rfc3339_time(status: str) -> None:
    conditions: list[Condition] = []
    set_status_condition(conditions, ready(status, last_transition_time=None))
    stamp = conditions[0].last_transition_time
    assert stamp is not None
    parsed = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - parsed).total_seconds()) < 60


def test_a_condition_built_without_a_time_is_stamped_by_set_status_condition() -> None:
    """``Condition(type, status, reason, message)`` constructs (issue 19: it raised
    "last_transition_time Field required"); the helper gives it the current time."""
    conditions: list[Condition] = []
    new = Condition(type="Ready", status="True", reason="Ok", message="fine")
    assert set_status_condition(conditions, new, now=NOW) is True
    assert conditions[0].model_dump() == {"type": "Ready", "status": "True", "reason": "Ok",
                                          "message": "fine", "lastTransitionTime": NOW_TEXT}
