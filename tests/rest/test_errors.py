"""Mapping of error responses to typed errors, like apimachinery's errors package."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from kgen_runtime.meta import Status, StatusCause
from kgen_runtime.rest import errors
from kgen_runtime.rest.errors import (
    AlreadyExistsError,
    ApiError,
    BadRequestError,
    ConflictError,
    ExpiredError,
    ForbiddenError,
    GatewayTimeoutError,
    GoneError,
    InternalError,
    InvalidError,
    MethodNotAllowedError,
    NotAcceptableError,
    NotFoundError,
    RequestEntityTooLargeError,
    ServerTimeoutError,
    ServiceUnavailableError,
    TooManyRequestsError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
    api_error_from_response,
)

BY_REASON = [
    (400, "BadRequest", BadRequestError),
    (401, "Unauthorized", UnauthorizedError),
    (403, "Forbidden", ForbiddenError),
    (404, "NotFound", NotFoundError),
    (405, "MethodNotAllowed", MethodNotAllowedError),
    (406, "NotAcceptable", NotAcceptableError),
    (409, "AlreadyExists", AlreadyExistsError),
    (409, "Conflict", ConflictError),
    (410, "Gone", GoneError),
    (410, "Expired", ExpiredError),
    (413, "RequestEntityTooLarge", RequestEntityTooLargeError),
    (415, "UnsupportedMediaType", UnsupportedMediaTypeError),
    (422, "Invalid", InvalidError),
    (429, "TooManyRequests", TooManyRequestsError),
    (500, "InternalError", InternalError),
    (500, "ServerTimeout", ServerTimeoutError),
    (503, "ServiceUnavailable", ServiceUnavailableError),
    (504, "Timeout", GatewayTimeoutError),
]


def status_body(code: int, reason: str, message: str = "boom", **details: object) -> bytes:
    status: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        status["details"] = details
    return json.dumps(status).encode()


@pytest.mark.parametrize(("code", "reason", "cls"), BY_REASON)
def test_status_reason_picks_the_class(code: int, reason: str, cls: type[ApiError]) -> None:
    error = api_error_from_response(code, status_body(code, reason, f"{reason} happened"))
    assert type(error) is cls
    assert (error.code, error.reason, error.message) == (code, reason, f"{reason} happened")
    assert str(error) == f"{reason} happened"
    assert isinstance(error.status, Status)


@pytest.mark.parametrize(
    ("code", "cls"),
    [(c, cls) for c, r, cls in BY_REASON if r not in {"AlreadyExists", "Expired", "ServerTimeout"}],
)
def test_code_picks_the_class_when_the_body_is_not_a_status(code: int, cls: type[ApiError]) -> None:
    error = api_error_from_response(code, b"<html>proxy says no</html>")
    assert type(error) is cls
    assert error.code == code
    assert error.message == f"the server responded with status {code}: <html>proxy says no</html>"
    assert error.status.status == "Failure"


def test_unknown_reason_falls_back_to_the_code() -> None:
    error = api_error_from_response(404, status_body(404, "SomethingNew"))
    assert type(error) is NotFoundError
    assert error.reason == "SomethingNew"


def test_status_without_code_takes_the_http_code() -> None:
    body = json.dumps({"kind": "Status", "status": "Failure", "reason": "Conflict"}).encode()
    error = api_error_from_response(409, body)
    assert type(error) is ConflictError
    assert error.code == 409


def test_unmapped_code_gives_the_base_class() -> None:
    error = api_error_from_response(418, b"")
    assert type(error) is ApiError
    assert error.message == "the server responded with status 418"


def test_a_json_body_that_is_not_a_status_is_quoted() -> None:
    error = api_error_from_response(500, b'{"kind":"Foo"}')
    assert type(error) is InternalError
    assert error.message.endswith(': {"kind":"Foo"}')


def test_long_bodies_are_truncated_in_the_message() -> None:
    error = api_error_from_response(502, b"x" * 5000)
    assert error.message.count("x") == 512


def test_invalid_carries_causes() -> None:
    causes = [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.x"}]
    error = api_error_from_response(422, status_body(422, "Invalid", causes=causes))
    assert isinstance(error, InvalidError)
    assert error.causes == [
        StatusCause(reason="FieldValueRequired", message="Required value", field="spec.x")
    ]


def test_retry_after_from_details_or_header() -> None:
    from_details = api_error_from_response(
        429, status_body(429, "TooManyRequests", retryAfterSeconds=7), {"Retry-After": "3"}
    )
    assert from_details.retry_after == 7
    from_header = api_error_from_response(429, b"slow down", {"Retry-After": "3"})
    assert isinstance(from_header, TooManyRequestsError)
    assert from_header.retry_after == 3
    assert api_error_from_response(429, b"", {"Retry-After": "soon"}).retry_after is None
    assert api_error_from_response(429, b"").retry_after is None


def test_construct_from_a_dict_or_a_status() -> None:
    from_dict = NotFoundError({"code": 404, "reason": "NotFound", "message": "gone fishing"})
    assert from_dict.status == Status(code=404, reason="NotFound", message="gone fishing")
    status = Status(code=409, reason="Conflict")
    from_model = ConflictError(status)
    assert from_model.status is status
    assert str(from_model) == "Conflict"
    assert repr(from_model) == "ConflictError(code=409, reason='Conflict', '')"
    assert ApiError({}).code == 0
    assert str(ApiError({})) == "API error 0"


def test_from_status_like_from_object() -> None:
    status = Status(code=410, reason="Expired", message="too old")
    error = errors.api_error_from_status(status)
    assert type(error) is ExpiredError and error.status is status
    assert type(errors.api_error_from_status({"code": 404})) is NotFoundError
    assert type(errors.api_error_from_status({"reason": "Conflict"})) is ConflictError


def test_expired_is_a_kind_of_gone() -> None:
    expired = api_error_from_response(410, status_body(410, "Expired"))
    gone = api_error_from_response(410, status_body(410, "Gone"))
    assert errors.is_gone(expired) and errors.is_gone(gone)
    assert errors.is_resource_expired(expired)
    assert not errors.is_resource_expired(gone)


CHECKS: list[tuple[Callable[[BaseException], bool], str]] = [
    (errors.is_bad_request, "BadRequest"),
    (errors.is_unauthorized, "Unauthorized"),
    (errors.is_forbidden, "Forbidden"),
    (errors.is_not_found, "NotFound"),
    (errors.is_method_not_allowed, "MethodNotAllowed"),
    (errors.is_already_exists, "AlreadyExists"),
    (errors.is_conflict, "Conflict"),
    (errors.is_invalid, "Invalid"),
    (errors.is_too_many_requests, "TooManyRequests"),
    (errors.is_internal_error, "InternalError"),
    (errors.is_server_timeout, "ServerTimeout"),
    (errors.is_service_unavailable, "ServiceUnavailable"),
    (errors.is_timeout, "Timeout"),
]


@pytest.mark.parametrize(("check", "reason"), CHECKS)
def test_each_helper_matches_only_its_reason(
    check: Callable[[BaseException], bool], reason: str
) -> None:
    for code, other, _ in BY_REASON:
        assert check(api_error_from_response(code, status_body(code, other))) == (other == reason)
    assert not check(ValueError("not an API error"))


def test_already_exists_is_not_a_conflict() -> None:
    error = api_error_from_response(409, status_body(409, "AlreadyExists"))
    assert errors.is_already_exists(error)
    assert not errors.is_conflict(error)
