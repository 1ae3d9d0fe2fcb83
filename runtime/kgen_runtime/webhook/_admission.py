"""Typed admission handlers: defaulting (mutating) and validating webhooks for one kind.

controller-runtime's ``admission.CustomDefaulter`` / ``CustomValidator``, in Python idiom:

- a *defaulter* is ``fn(obj) -> obj | None``: it changes ``obj`` in place (or returns a new
  object); the response carries the JSON Patch from what the API server sent to what the
  function left, so fields the model does not know survive untouched;
- a *validator* has ``on_create(obj)``, ``on_update(old, new)`` and ``on_delete(old)``, each
  returning warnings (or ``None``) to admit, or raising :class:`AdmissionDenied` to refuse
  with its message and code (403 by default).

Any other exception is a bug in the handler: the request is refused with code 500 and the
error's text, and the webhook server keeps serving (controller-runtime's RecoverPanic).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import jsonpatch  # type: ignore[import-untyped,unused-ignore]
import orjson

from kgen_runtime.meta import KubeModel, Status
from kgen_runtime.webhook._review import AdmissionRequest, AdmissionResponse

__all__ = [
    "AdmissionDenied",
    "AdmissionHandler",
    "Defaulter",
    "DefaultingHandler",
    "ValidatingHandler",
    "Warnings",
    "allowed",
    "denied",
    "errored",
]

T = TypeVar("T", bound=KubeModel)

Warnings = Sequence[str] | None
"""What a validator returns to admit a request: warnings shown to the client, or None."""

Defaulter = Callable[[T], T | None]
"""Sets defaults on an object in place, or returns the defaulted object."""


class AdmissionDenied(Exception):
    """Raised by a handler to refuse a request with ``message`` (shown to the client).

    ``code`` is the HTTP code in the response's Status (403 Forbidden by default, as
    controller-runtime's ``admission.Denied``); ``warnings`` are returned alongside.
    """

    def __init__(self, message: str, *, code: int = 403, warnings: Warnings = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.warnings = list(warnings or ())


class AdmissionHandler(Protocol):
    """Answers one AdmissionRequest (``admission.Handler``)."""

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        """Return the response; raising is treated as a handler bug (500)."""
        ...


def allowed(request: AdmissionRequest, warnings: Warnings = None) -> AdmissionResponse:
    """Admit ``request`` unchanged."""
    response = AdmissionResponse(uid=request.uid, allowed=True)
    if warnings:
        response.warnings = list(warnings)
    return response


def denied(request: AdmissionRequest, message: str, code: int = 403,
           warnings: Warnings = None) -> AdmissionResponse:
    """Refuse ``request`` with ``message``; ``code`` 403 reads as Forbidden."""
    status = Status(status="Failure", message=message, code=code)
    if code == 403:
        status.reason = "Forbidden"
    response = AdmissionResponse(uid=request.uid, allowed=False, status=status)
    if warnings:
        response.warnings = list(warnings)
    return response


def errored(request: AdmissionRequest, code: int, error: BaseException | str) -> AdmissionResponse:
    """Refuse ``request`` because the webhook itself failed (``admission.Errored``)."""
    return AdmissionResponse(
        uid=request.uid,
        allowed=False,
        status=Status(status="Failure", message=str(error), code=code),
    )


class DefaultingHandler(Generic[T]):
    """A mutating webhook for ``model``: runs ``defaulter`` and answers with a JSON Patch."""

    def __init__(self, model: type[T], defaulter: Defaulter[T]) -> None:
        self.model = model
        self.defaulter = defaulter

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.operation not in ("CREATE", "UPDATE") or request.object is None:
            return allowed(request)  # nothing to default on DELETE or CONNECT
        original = request.object
        obj = self.model.model_validate(original)
        try:
            result = self.defaulter(obj)
        except AdmissionDenied as refusal:
            return denied(request, refusal.message, refusal.code, refusal.warnings)
        defaulted = (obj if result is None else result).model_dump(mode="json")
        operations = jsonpatch.make_patch(original, defaulted).patch
        if not operations:
            return allowed(request)
        response = allowed(request)
        response.patch = base64.b64encode(orjson.dumps(operations)).decode()
        response.patch_type = "JSONPatch"
        return response


class ValidatingHandler(Generic[T]):
    """A validating webhook for ``model``: calls the hook for the request's operation.

    A missing hook admits that operation.
    """

    def __init__(
        self,
        model: type[T],
        on_create: Callable[[T], Warnings] | None = None,
        on_update: Callable[[T, T], Warnings] | None = None,
        on_delete: Callable[[T], Warnings] | None = None,
    ) -> None:
        self.model = model
        self.on_create = on_create
        self.on_update = on_update
        self.on_delete = on_delete

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        try:
            warnings = self._call(request)
        except AdmissionDenied as refusal:
            return denied(request, refusal.message, refusal.code, refusal.warnings)
        return allowed(request, warnings)

    def _call(self, request: AdmissionRequest) -> Warnings:
        decode = self._decode
        if request.operation == "CREATE" and self.on_create is not None:
            return self.on_create(decode(request.object, "object"))
        if request.operation == "UPDATE" and self.on_update is not None:
            return self.on_update(decode(request.old_object, "oldObject"),
                                  decode(request.object, "object"))
        if request.operation == "DELETE" and self.on_delete is not None:
            return self.on_delete(decode(request.old_object, "oldObject"))
        return None

    def _decode(self, raw: dict[str, Any] | None, field: str) -> T:
        if raw is None:
            raise AdmissionDenied(f"the request has no {field}", code=400)
        return self.model.model_validate(raw)
