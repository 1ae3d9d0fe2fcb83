"""metav1.Condition, the standard entry of ``status.conditions``, and helpers for such lists
(apimachinery's ``api/meta/conditions.go``).

The helpers work on :class:`Condition` and on any generated class of the same shape (a CRD's
``FooStatusCondition``): whatever has ``type``, ``status``, ``reason``, ``message``,
``observed_generation`` and ``last_transition_time``. A list holds at most one condition per
``type``; the helpers keep it that way. They change the list in place: call them on your own
copy (``obj.deepcopy()``), never on an object from an informer's cache. Not thread-safe, like
the objects they change.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Protocol, Self, TypeVar

from kgen_runtime.markers._fields import Format, Required
from kgen_runtime.meta._model import Field, FieldRules, KubeModel
from kgen_runtime.meta._time import format_time

__all__ = [
    "Condition",
    "ConditionLike",
    "find_status_condition",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "remove_status_condition",
    "set_status_condition",
]

_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


class Condition(KubeModel):
    """Condition contains details for one aspect of the current state of this API Resource."""

    # metav1.Condition, whose CRD schema (``kgen crd``'s of ``list[Condition]``) is exactly the
    # one controller-gen writes for ``[]metav1.Condition``: the same descriptions, formats and
    # rules, fields in its (alphabetical) order; ``kgen generate`` maps that schema back here.
    #
    # ``last_transition_time`` is required on the wire (metav1.Condition's ``+required``, kept
    # in a CRD by the Required marker) but not at construction: a condition goes into a status
    # through set_status_condition, which stamps a missing time with the current one
    # (apimachinery's SetStatusCondition does the same with a zero time), so requiring it here
    # only forced callers to invent a time the helper then discarded.
    __kgen_rules__: ClassVar = {
        "message": FieldRules(required=True, max_length=32768),
        "observed_generation": FieldRules(minimum=0),
        "reason": FieldRules(required=True, pattern=_REASON_PATTERN, min_length=1, max_length=1024),
        "status": FieldRules(required=True, enum=("True", "False", "Unknown")),
        "type": FieldRules(required=True, pattern=_TYPE_PATTERN, max_length=316),
    }

    last_transition_time: Annotated[str | None, Required(), Format("date-time")] = Field(
        default=None,
        description="lastTransitionTime is the last time the condition transitioned from one "
        "status to another.\nThis should be when the underlying condition changed.  If that "
        "is not known, then using the time when the API field changed is acceptable.",
    )
    message: str | None = Field(
        default=None,
        description="message is a human readable message indicating details about the "
        "transition.\nThis may be an empty string.",
    )
    observed_generation: Annotated[int | None, Format("int64")] = Field(
        default=None,
        description="observedGeneration represents the .metadata.generation that the condition "
        "was set based upon.\nFor instance, if .metadata.generation is currently 12, but the "
        ".status.conditions[x].observedGeneration is 9, the condition is out of date\nwith "
        "respect to the current state of the instance.",
    )
    reason: str | None = Field(
        default=None,
        description="reason contains a programmatic identifier indicating the reason for the "
        "condition's last transition.\nProducers of specific condition types may define "
        "expected values and meanings for this field,\nand whether the values are considered a "
        "guaranteed API.\nThe value should be a CamelCase string.\nThis field may not be empty.",
    )
    status: str | None = Field(
        default=None, description="status of the condition, one of True, False, Unknown."
    )
    type: str | None = Field(
        default=None, description="type of condition in CamelCase or in foo.example.com/CamelCase."
    )


class ConditionLike(Protocol):
    """The shape of metav1.Condition, matched by :class:`Condition` and generated classes."""

    type: str | None
    status: str | None
    observed_generation: int | None
    last_transition_time: str | None
    reason: str | None
    message: str | None

    def deepcopy(self) -> Self: ...


C = TypeVar("C", bound=ConditionLike)


def find_status_condition(conditions: Iterable[C] | None, condition_type: str) -> C | None:
    """The condition of ``condition_type`` (the list's own object, not a copy), or None."""
    for condition in conditions or ():
        if condition.type == condition_type:
            return condition
    return None


def set_status_condition(conditions: list[C], new: C, *, now: datetime | None = None) -> bool:
    """Add ``new`` or merge it into the condition of the same type; return whether it changed.

    A new type is appended as a copy of ``new``. An existing condition takes ``new``'s status,
    reason, message and observed generation; ``last_transition_time`` moves only when the
    status changes. A missing ``last_transition_time`` on ``new`` means ``now`` (default: the
    current time), formatted like metav1.Time. ``new`` itself is never modified.
    """
    stamp = new.last_transition_time or format_time(now or datetime.now(UTC))
    existing = find_status_condition(conditions, new.type or "")
    if existing is None:
        added = new.deepcopy()
        added.last_transition_time = stamp
        conditions.append(added)
        return True
    changed = False
    if existing.status != new.status:
        existing.status = new.status
        existing.last_transition_time = stamp
        changed = True
    if existing.reason != new.reason:
        existing.reason = new.reason
        changed = True
    if existing.message != new.message:
        existing.message = new.message
        changed = True
    if existing.observed_generation != new.observed_generation:
        existing.observed_generation = new.observed_generation
        changed = True
    return changed


def remove_status_condition(conditions: list[C], condition_type: str) -> bool:
    """Remove the condition of ``condition_type``; return whether there was one."""
    for index, condition in enumerate(conditions):
        if condition.type == condition_type:
            del conditions[index]
            return True
    return False


def is_status_condition_true(conditions: Iterable[C] | None, condition_type: str) -> bool:
    """Whether the condition of ``condition_type`` is present with status ``"True"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, "True")


def is_status_condition_false(conditions: Iterable[C] | None, condition_type: str) -> bool:
    """Whether the condition of ``condition_type`` is present with status ``"False"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, "False")


def is_status_condition_present_and_equal(
    conditions: Iterable[C] | None, condition_type: str, status: str
) -> bool:
    """Whether the condition of ``condition_type`` is present with exactly ``status``."""
    condition = find_status_condition(conditions, condition_type)
    return condition is not None and condition.status == status
