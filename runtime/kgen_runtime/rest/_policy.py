"""Everything the HTTP transports decide without doing I/O, shared by the sync and async one.

:class:`~kgen_runtime.rest.HTTPTransport` (urllib3, threads) and
:class:`~kgen_runtime.rest.AsyncHTTPTransport` (aiohttp, asyncio) differ only in how bytes
move; the URL, the headers, which failure is retried after how long, which server warnings are
logged and how a stream is cut into lines are decided here, once, so the two cannot drift.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterable
from enum import Enum
from urllib.parse import quote, urlencode

from kgen_runtime.rest._request import Request
from kgen_runtime.rest.config import Config
from kgen_runtime.rest.errors import retry_after_seconds

__all__ = [
    "Failure",
    "LineSplitter",
    "log_retry",
    "log_server_warnings",
    "request_headers",
    "request_target",
    "request_url",
    "retry_delay_after_failure",
    "retry_delay_after_response",
    "tls_context",
]

#: Both transports log here, so one logger configuration covers either.
_log = logging.getLogger("kgen_runtime.rest.transport")

_SAFE_METHODS = frozenset({"GET", "HEAD"})
_TRANSIENT_STATUSES = frozenset({502, 503, 504})
_BACKOFF_BASE = 0.2
_BACKOFF_CAP = 5.0


class Failure(Enum):
    """What went wrong below HTTP, as each transport classifies its library's exceptions."""

    CONNECT = "connect"
    """The connection could not be opened (refused, unresolvable, connect timeout): nothing
    was sent, so any verb may be retried."""
    BROKEN = "broken"
    """The connection broke after the request went out (reset, truncated response)."""
    OTHER = "other"
    """Anything else: a read timeout (the server accepted the request and stayed silent), a
    TLS failure. Never retried."""


def request_url(base: str, request: Request) -> str:
    """``base`` (``Config.host`` without a trailing slash) + :func:`request_target`."""
    return base + request_target(request)


def request_target(request: Request) -> str:
    """The quoted path and query of ``request``, as the request line carries them."""
    path = quote(request.path, safe="/:@")
    return f"{path}?{urlencode(request.query)}" if request.query else path


def tls_context(config: Config) -> ssl.SSLContext:
    """The TLS settings of ``config``, for every transport and path: the server verified
    against ``ca_file`` or the system store (and its name, ``tls_server_name`` or the host's,
    checked by the caller's connection) unless ``verify_tls`` is off; ``cert_file``/
    ``key_file`` presented.

    The name is looked for in the certificate's subjectAltName only, never its Common Name:
    as urllib3 did with its own context, and Go since 1.15 ("x509: certificate relies on
    legacy Common Name field"); ``ssl.create_default_context`` alone accepts a Common Name.
    """
    context = ssl.create_default_context(cafile=config.ca_file)
    context.hostname_checks_common_name = False
    if not config.verify_tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.cert_file:
        context.load_cert_chain(config.cert_file, config.key_file)
    return context


def request_headers(
    config: Config, request: Request, auth: dict[str, str] | None = None
) -> dict[str, str]:
    """The headers of one request: JSON in and out, the user agent, ``auth``'s headers (the
    caller asks ``config.auth`` for them per request, as it may refresh a token), then the
    request's own, which override them (a Table's ``Accept``, a ``User-Agent``)."""
    headers = {"Accept": "application/json", "User-Agent": config.user_agent}
    if request.body is not None:
        headers["Content-Type"] = request.content_type or "application/json"
    if auth:
        headers.update(auth)
    headers.update(request.headers)
    return headers


def retry_delay_after_response(
    config: Config, method: str, status: int, retry_after: str | None, attempt: int
) -> float | None:
    """Seconds to wait before retrying a request answered with ``status``; ``None``: do not.

    A 429 or 5xx with ``Retry-After`` is retried for every verb (the server did not process
    it); a 502/503/504 without one only for GET/HEAD, with exponential backoff.
    """
    if attempt >= config.max_retries:
        return None
    if status == 429 or status >= 500:
        seconds = retry_after_seconds({"Retry-After": retry_after} if retry_after else {})
        if seconds is not None:
            return float(seconds)
    if status in _TRANSIENT_STATUSES and method in _SAFE_METHODS:
        return _backoff(attempt)
    return None


def retry_delay_after_failure(
    config: Config, method: str, failure: Failure, attempt: int
) -> float | None:
    """Seconds to wait before retrying after ``failure``; ``None``: raise it.

    Connections never opened are retried for every verb, broken ones for GET/HEAD only (a
    replayed write whose lost response was a success would report a misleading 409/404),
    anything else never.
    """
    if attempt >= config.max_retries:
        return None
    if failure is Failure.CONNECT:
        return _backoff(attempt)
    if failure is Failure.BROKEN and method in _SAFE_METHODS:
        return _backoff(attempt)
    return None


def log_server_warnings(request: Request, warnings: Iterable[str]) -> None:
    """Log the server's ``Warning`` headers (deprecated APIs, unknown fields), like client-go."""
    for warning in warnings:
        _log.warning("%s %s: server warning: %s", request.method, request.path, warning)


def log_retry(request: Request, delay: float, attempt: int) -> None:
    _log.debug("retrying %s %s in %.2fs (attempt %d)", request.method, request.path, delay, attempt)


def _backoff(attempt: int) -> float:
    return float(min(_BACKOFF_CAP, _BACKOFF_BASE * 2**attempt))


class LineSplitter:
    """Cuts a streamed body into its non-empty lines (one watch event each), chunk by chunk."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes; a partial last line waits for the next chunk."""
        *lines, self._buffer = (self._buffer + chunk).split(b"\n")
        return [line for line in lines if line.strip()]

    def end(self) -> bytes | None:
        """The last line of a body that ended without a newline, if any."""
        rest, self._buffer = self._buffer, b""
        return rest if rest.strip() else None
