"""metav1.Condition: the standard shape of an entry in ``status.conditions``."""

from __future__ import annotations

from typing import ClassVar

from kgen_runtime.meta._model import FieldRules, KubeModel

__all__ = ["Condition"]

_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


class Condition(KubeModel):
    """One observation of an object's state, with the schema rules of metav1.Condition.

    ``last_transition_time`` is an RFC 3339 string (see ``format_time``); ``status`` is
    ``"True"``, ``"False"`` or ``"Unknown"``.
    """

    __kgen_rules__: ClassVar = {
        "type": FieldRules(required=True, pattern=_TYPE_PATTERN, max_length=316),
        "status": FieldRules(required=True, enum=("True", "False", "Unknown")),
        "observed_generation": FieldRules(minimum=0),
        "last_transition_time": FieldRules(required=True),
        "reason": FieldRules(required=True, pattern=_REASON_PATTERN, min_length=1, max_length=1024),
        "message": FieldRules(required=True, max_length=32768),
    }

    type: str | None = None
    status: str | None = None
    observed_generation: int | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None

    def deepcopy(self) -> Condition:
        d = self.__dict__
        return Condition._kgen_new(
            self,
            {
                "type": d["type"],
                "status": d["status"],
                "observed_generation": d["observed_generation"],
                "last_transition_time": d["last_transition_time"],
                "reason": d["reason"],
                "message": d["message"],
            },
        )
