"""metav1.Status: the API server's answer to a failed request (and to some deletes)."""

from __future__ import annotations

from typing import ClassVar

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


class StatusDetails(KubeModel):
    """metav1.StatusDetails: which object a failure concerns, its causes, and retry advice."""

    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: list[StatusCause] | None = None
    retry_after_seconds: int | None = None


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
