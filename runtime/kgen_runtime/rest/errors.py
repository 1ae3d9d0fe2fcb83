"""Typed API errors (apimachinery's ``pkg/api/errors``).

Every error the API server reports becomes an :class:`ApiError` carrying the server's
``Status``. The subclass is chosen like apimachinery's
``ReasonForError``: by ``Status.reason`` when the server gave a known one, else by the HTTP
status code, so ``is_not_found(e)`` and ``except NotFoundError`` agree with ``errors.IsNotFound``.

Differences from Go, on purpose: :class:`ExpiredError` (410, reason ``Expired``) subclasses
:class:`GoneError`, so ``is_gone`` (and ``except GoneError``) catch both ways the server says
"that resourceVersion is too old — relist"; ``is_resource_expired`` still tells them apart.

Failures below HTTP (connection refused, reset, TLS) are the built-in ``ConnectionError`` and a
silent connection is the built-in ``TimeoutError``; neither is an ``ApiError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from kgen_runtime.meta import Status, StatusCause, StatusDetails

__all__ = [
    "AlreadyExistsError",
    "ApiError",
    "BadRequestError",
    "ConflictError",
    "ExpiredError",
    "ForbiddenError",
    "GatewayTimeoutError",
    "GoneError",
    "InternalError",
    "InvalidError",
    "MethodNotAllowedError",
    "NotAcceptableError",
    "NotFoundError",
    "RequestEntityTooLargeError",
    "ServerTimeoutError",
    "ServiceUnavailableError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "UnsupportedMediaTypeError",
    "api_error_from_response",
    "api_error_from_status",
    "is_already_exists",
    "is_bad_request",
    "is_conflict",
    "is_forbidden",
    "is_gone",
    "is_internal_error",
    "is_invalid",
    "is_method_not_allowed",
    "is_not_found",
    "is_resource_expired",
    "is_server_timeout",
    "is_service_unavailable",
    "is_timeout",
    "is_too_large_resource_version",
    "is_too_many_requests",
    "is_unauthorized",
    "retry_after_seconds",
]

#: Longest slice of a non-Status response body quoted in an error message.
_MAX_QUOTED_BODY = 512


class ApiError(Exception):
    """An error status returned by the API server, carrying the server's ``Status``.

    ``status`` is owned by the error (a dict argument is decoded into a new ``Status``); the
    properties below read it and never return ``None``.
    """

    def __init__(self, status: Status | Mapping[str, Any]) -> None:
        self.status = status if isinstance(status, Status) else Status.model_validate(status)
        super().__init__(self.message or self.reason or f"API error {self.code}")

    @property
    def code(self) -> int:
        """The HTTP status code the Status reports (0 if it has none)."""
        return self.status.code or 0

    @property
    def reason(self) -> str:
        """The machine-readable ``Status.reason`` (``"NotFound"``, ``"Conflict"``, …)."""
        return self.status.reason or ""

    @property
    def message(self) -> str:
        return self.status.message or ""

    @property
    def causes(self) -> list[StatusCause]:
        """``details.causes``: one cause (reason, message, field) per problem."""
        details = self.status.details
        return list(details.causes or ()) if details is not None else []

    @property
    def retry_after(self) -> int | None:
        """Seconds the server asked the client to wait (``details.retryAfterSeconds``)."""
        details = self.status.details
        seconds = details.retry_after_seconds if details is not None else None
        return seconds if seconds is not None and seconds > 0 else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, {self.message!r})"


class BadRequestError(ApiError):
    """400, reason ``BadRequest``."""


class UnauthorizedError(ApiError):
    """401, reason ``Unauthorized``: the credentials were missing or rejected."""


class ForbiddenError(ApiError):
    """403, reason ``Forbidden``: authenticated, but not allowed."""


class NotFoundError(ApiError):
    """404, reason ``NotFound``."""


class MethodNotAllowedError(ApiError):
    """405, reason ``MethodNotAllowed``: the resource does not support the verb."""


class NotAcceptableError(ApiError):
    """406, reason ``NotAcceptable``."""


class AlreadyExistsError(ApiError):
    """409, reason ``AlreadyExists``: a create named an existing object."""


class ConflictError(ApiError):
    """409, reason ``Conflict``: the object changed since it was read (stale resourceVersion)."""


class GoneError(ApiError):
    """410, reason ``Gone``: the requested resourceVersion is no longer available."""


class ExpiredError(GoneError):
    """410, reason ``Expired``: a watch or continue token is too old; list again."""


class RequestEntityTooLargeError(ApiError):
    """413, reason ``RequestEntityTooLarge``."""


class UnsupportedMediaTypeError(ApiError):
    """415, reason ``UnsupportedMediaType``: e.g. a strategic merge patch sent for a CRD."""


class InvalidError(ApiError):
    """422, reason ``Invalid``: the object failed validation; ``causes`` names the fields."""


class TooManyRequestsError(ApiError):
    """429, reason ``TooManyRequests``; ``retry_after`` says how long the server wants."""


class InternalError(ApiError):
    """500, reason ``InternalError``."""


class ServerTimeoutError(ApiError):
    """Reason ``ServerTimeout`` (500 or 504): the server could not finish in time; retry."""


class ServiceUnavailableError(ApiError):
    """503, reason ``ServiceUnavailable``."""


class GatewayTimeoutError(ApiError):
    """504, reason ``Timeout``: the request timed out before the server could respond."""


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequestError,
    "Unauthorized": UnauthorizedError,
    "Forbidden": ForbiddenError,
    "NotFound": NotFoundError,
    "MethodNotAllowed": MethodNotAllowedError,
    "NotAcceptable": NotAcceptableError,
    "AlreadyExists": AlreadyExistsError,
    "Conflict": ConflictError,
    "Gone": GoneError,
    "Expired": ExpiredError,
    "RequestEntityTooLarge": RequestEntityTooLargeError,
    "UnsupportedMediaType": UnsupportedMediaTypeError,
    "Invalid": InvalidError,
    "TooManyRequests": TooManyRequestsError,
    "InternalError": InternalError,
    "ServerTimeout": ServerTimeoutError,
    "ServiceUnavailable": ServiceUnavailableError,
    "Timeout": GatewayTimeoutError,
}

#: The reason apimachinery's ``NewGenericServerResponse`` gives each code.
_REASON_BY_CODE: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Gone",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def api_error_from_response(
    status_code: int, body: bytes, headers: Mapping[str, str] | None = None
) -> ApiError:
    """The typed error for a failed response.

    ``body`` is used as the Status when it is one (``kind: Status``); otherwise a Status is
    synthesised from the code with the body quoted in the message. A ``Retry-After`` header
    fills ``details.retryAfterSeconds`` when the body has none.
    """
    retry_after = retry_after_seconds(headers) if headers is not None else None
    wire = _parse_status(body)
    if wire is None:
        text = body[:_MAX_QUOTED_BODY].decode("utf-8", "replace").strip()
        message = f"the server responded with status {status_code}"
        wire = {
            "status": "Failure",
            "code": status_code,
            "reason": _REASON_BY_CODE.get(status_code, ""),
            "message": f"{message}: {text}" if text else message,
        }
    status = Status.model_validate(wire)
    if not status.code:
        status.code = status_code
    if retry_after is not None:
        if status.details is None:
            status.details = StatusDetails()
        if status.details.retry_after_seconds is None:
            status.details.retry_after_seconds = retry_after
    return api_error_from_status(status)


def api_error_from_status(status: Status | Mapping[str, Any]) -> ApiError:
    """The typed error for a ``Status`` (apimachinery's ``FromObject``), e.g. the object of a
    watch ``ERROR`` event. A dict is decoded into a new ``Status``; a model is used as is."""
    model = status if isinstance(status, Status) else Status.model_validate(status)
    return _error_class(model)(model)


def retry_after_seconds(headers: Mapping[str, str]) -> int | None:
    """The ``Retry-After`` header in whole seconds; ``None`` if absent or not an integer.

    Like client-go, the HTTP-date form is not honoured. ``headers`` must look keys up
    case-insensitively (urllib3's and http.client's header mappings do).
    """
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = int(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _parse_status(body: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, dict) and value.get("kind") == "Status":
        return value
    return None


def _error_class(status: Status) -> type[ApiError]:
    if status.reason in _BY_REASON:
        return _BY_REASON[status.reason]
    by_code = _REASON_BY_CODE.get(status.code or 0)
    return _BY_REASON[by_code] if by_code is not None else ApiError


def _checker(cls: type[ApiError]) -> Callable[[BaseException], bool]:
    def check(error: BaseException) -> bool:
        return isinstance(error, cls)

    check.__doc__ = f"Whether ``error`` is a :class:`{cls.__name__}` (or a subclass)."
    return check


is_bad_request = _checker(BadRequestError)
is_unauthorized = _checker(UnauthorizedError)
is_forbidden = _checker(ForbiddenError)
is_not_found = _checker(NotFoundError)
is_method_not_allowed = _checker(MethodNotAllowedError)
is_already_exists = _checker(AlreadyExistsError)
is_conflict = _checker(ConflictError)
#: True for both ``Gone`` and ``Expired``: either way, the client must list again.
is_gone = _checker(GoneError)
is_resource_expired = _checker(ExpiredError)
is_invalid = _checker(InvalidError)
is_too_many_requests = _checker(TooManyRequestsError)
is_internal_error = _checker(InternalError)
is_server_timeout = _checker(ServerTimeoutError)
is_service_unavailable = _checker(ServiceUnavailableError)
is_timeout = _checker(GatewayTimeoutError)


def is_too_large_resource_version(error: BaseException) -> bool:
    """A 504 "Too large resource version": the server has not reached the resourceVersion
    asked for (after an etcd restore, or on a lagging server). client-go's
    ``isTooLargeResourceVersionError``, including its fallbacks for servers before 1.19 (the
    cause's message, then the status message)."""
    if not isinstance(error, ApiError):
        return False
    if any(cause.reason == "ResourceVersionTooLarge" for cause in error.causes):
        return True
    if not is_timeout(error):
        return False
    return (any(cause.message == "Too large resource version" for cause in error.causes)
            or "Too large resource version" in error.message)
