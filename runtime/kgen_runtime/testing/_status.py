"""API errors as the Kubernetes API server reports them: a ``Status`` body with code and reason.

Every failure the test server produces is a :class:`StatusError`; its :meth:`StatusError.body`
is the exact JSON a real kube-apiserver sends (``apimachinery/pkg/api/errors``), so clients
built against the test server parse the same bytes they will meet on a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Cause", "StatusError"]


@dataclass(frozen=True, slots=True)
class Cause:
    """One entry of ``details.causes``: a field path and what is wrong with it."""

    reason: str
    message: str
    field: str

    def as_json(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.message, "field": self.field}


def qualified_resource(group: str, plural: str) -> str:
    """``foos.samplecontroller.k8s.io`` (or ``pods`` for the core group), as messages print."""
    return f"{plural}.{group}" if group else plural


def qualified_kind(group: str, kind: str) -> str:
    return f"{kind}.{group}" if group else kind


@dataclass(slots=True)
class StatusError(Exception):
    """A failed request: HTTP ``code``, machine ``reason`` and the ``details`` object."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] | None = None  # Status.details is a pointer: None leaves it out
    headers: dict[str, str] = field(default_factory=dict)
    #: The Status's ListMeta (an expired continue token's ``continue``).
    metadata: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}"

    def status(self) -> dict[str, Any]:
        """The ``Status`` object (``kind: Status``, ``status: Failure``)."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.metadata),
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # StatusReasonUnknown ("") is omitted, as omitempty does
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body

    # -- constructors, one per apimachinery ``errors.NewXxx`` ---------------------------------

    @classmethod
    def not_found(cls, group: str, plural: str, name: str) -> StatusError:
        return cls(
            404,
            "NotFound",
            f'{qualified_resource(group, plural)} "{name}" not found',
            _details(name, group, plural),
        )

    @classmethod
    def no_route(cls) -> StatusError:
        """An unknown path under a group the server serves itself: go-restful's 404, written
        as ``errors.NewGenericServerResponse`` does (apimachinery pkg/api/errors/errors.go:
        its ``details`` is set, here empty)."""
        return cls(404, "NotFound", "the server could not find the requested resource", {})

    @classmethod
    def forbidden(cls, group: str, plural: str, name: str, why: str) -> StatusError:
        return cls(
            403,
            "Forbidden",
            f'{qualified_resource(group, plural)} "{name}" is forbidden: {why}',
            _details(name, group, plural),
        )

    @classmethod
    def already_exists(cls, group: str, plural: str, name: str) -> StatusError:
        return cls(
            409,
            "AlreadyExists",
            f'{qualified_resource(group, plural)} "{name}" already exists',
            _details(name, group, plural),
        )

    @classmethod
    def conflict(cls, group: str, plural: str, name: str, why: str) -> StatusError:
        return cls(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {qualified_resource(group, plural)} "{name}": {why}',
            _details(name, group, plural),
        )

    @classmethod
    def modified(cls, group: str, plural: str, name: str) -> StatusError:
        """The optimistic-concurrency conflict of an update with a stale resourceVersion."""
        return cls.conflict(
            group,
            plural,
            name,
            "the object has been modified; please apply your changes to the latest version "
            "and try again",
        )

    @classmethod
    def invalid(cls, group: str, kind: str, name: str, causes: list[Cause]) -> StatusError:
        texts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
        summary = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        details = _details(name, group, kind)
        details["causes"] = [c.as_json() for c in causes]
        return cls(
            422,
            "Invalid",
            f'{qualified_kind(group, kind)} "{name}" is invalid: {summary}',
            details,
        )

    @classmethod
    def bad_request(cls, message: str) -> StatusError:
        return cls(400, "BadRequest", message)

    @classmethod
    def gone(cls, message: str, continue_token: str = "") -> StatusError:
        """410 Expired: the requested resourceVersion is older than the retained history
        (``errors.NewResourceExpired``; a continue token's carries one to go on with)."""
        return cls(410, "Expired", message,
                   metadata={"continue": continue_token} if continue_token else {})

    @classmethod
    def method_not_allowed(cls) -> StatusError:
        """go-restful's 405, written by ``errors.NewGenericServerResponse`` (details empty)."""
        return cls(405, "MethodNotAllowed",
                   "the server does not allow this method on the requested resource", {})

    @classmethod
    def unsupported_media_type(cls) -> StatusError:
        """apimachinery's ``errUnsupportedMediaType`` for a PATCH of a type the resource
        does not take (the type sent is not named)."""
        return cls(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/apply-patch+yaml",
        )

    @classmethod
    def unconsumable_media_type(cls) -> StatusError:
        """go-restful's 415 for a body whose type no route consumes (a PATCH that is none of
        the patch types), written by ``errors.NewGenericServerResponse`` (details empty)."""
        return cls(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})

    @classmethod
    def unknown(cls, message: str) -> StatusError:
        """What ``responsewriters.ErrorToAPIStatus`` makes of an error that carries no
        status: 500, no reason, the error's text as it is."""
        return cls(500, "", message)

    @classmethod
    def internal(cls, message: str) -> StatusError:
        """``errors.NewInternalError``: the error's text is also the one cause."""
        return cls(500, "InternalError", f"Internal error occurred: {message}",
                   {"causes": [{"message": message}]})

    @classmethod
    def too_large_resource_version(cls, requested: int, current: int) -> StatusError:
        return cls(
            504,
            "Timeout",
            f"Timeout: Too large resource version: {requested}, current: {current}",
            {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource "
                         "version"}], "retryAfterSeconds": 1},
        )


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    """StatusDetails' ``name``, ``group``, ``kind``: each ``omitempty`` (apimachinery
    pkg/apis/meta/v1/types.go)."""
    return {key: value for key, value in (("name", name), ("group", group), ("kind", kind))
            if value}
