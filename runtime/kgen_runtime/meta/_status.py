"""metav1.Status: the API server's answer to a failed request (and to some deletes)."""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import Field

from kgen_runtime.meta._model import KubeModel
from kgen_runtime.meta._object import APIObject
from kgen_runtime.meta._types import ListMeta

__all__ = ["Status", "StatusCause", "StatusDetails"]


class StatusCause(KubeModel):
    """metav1.StatusCause: one reason a request failed, e.g. an invalid field."""

    reason: str | None = None
    message: str | None = None
    field: str | None = None

    def deepcopy(self) -> Self:
        d = self.__dict__
        return self._kgen_new(
            self, {"reason": d["reason"], "message": d["message"], "field": d["field"]}
        )


class StatusDetails(KubeModel):
    """metav1.StatusDetails: which object a failure concerns, its causes, and retry advice."""

    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: list[StatusCause] | None = None
    retry_after_seconds: int | None = None

    def deepcopy(self) -> Self:
        d = self.__dict__
        causes = d["causes"]
        return self._kgen_new(
            self,
            {
                "name": d["name"],
                "group": d["group"],
                "kind": d["kind"],
                "uid": d["uid"],
                "causes": None if causes is None else [c.deepcopy() for c in causes],
                "retry_after_seconds": d["retry_after_seconds"],
            },
        )


class Status(APIObject):
    """metav1.Status (``apiVersion: v1``, ``kind: Status``).

    ``status`` is ``"Success"`` or ``"Failure"``; ``reason`` is machine-readable
    (``NotFound``, ``AlreadyExists``, ``Conflict``, ``Expired``, ...); ``code`` is the HTTP code.
    """

    __kgen_always__: ClassVar[frozenset[str]] = frozenset({"api_version", "kind", "metadata"})

    api_version: str = "v1"
    kind: str = "Status"
    metadata: ListMeta = Field(default_factory=ListMeta)
    status: str | None = None
    message: str | None = None
    reason: str | None = None
    details: StatusDetails | None = None
    code: int | None = None

    def deepcopy(self) -> Self:
        d = self.__dict__
        details = d["details"]
        return self._kgen_new(
            self,
            {
                "api_version": d["api_version"],
                "kind": d["kind"],
                "metadata": d["metadata"].deepcopy(),
                "status": d["status"],
                "message": d["message"],
                "reason": d["reason"],
                "details": None if details is None else details.deepcopy(),
                "code": d["code"],
            },
        )
