"""The transport contract: one HTTP request in, one response out.

The real transport (urllib3 on the ``kubernetes`` package's configuration), the test API
server and the fake clientset all meet at this boundary, so typed clients are the same code
whether they talk to a cluster, to an in-process server, or to a fake with reactors.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Request", "Response", "Transport", "cancel_on", "cancellation"]

_CANCELLATION: ContextVar[threading.Event | None] = ContextVar("kgen_cancel", default=None)


@contextmanager
def cancel_on(stop: threading.Event) -> Iterator[None]:
    """Let requests sent from this thread inside the block give up once ``stop`` is set.

    Go passes a cancellable ``context.Context`` to every request; here a loop that owns a
    stop event (a reflector, a controller) wraps its calls in ``cancel_on(stop)``, and the
    transport stops waiting — for a retry, for a throttled slot — as soon as ``stop`` is
    set, raising ``ConnectionError``. A socket read already in progress is not interrupted.
    """
    token = _CANCELLATION.set(stop)
    try:
        yield
    finally:
        _CANCELLATION.reset(token)


def cancellation() -> threading.Event | None:
    """The stop event of the innermost :func:`cancel_on` of this thread, if any."""
    return _CANCELLATION.get()


@dataclass(frozen=True, slots=True)
class Request:
    """An API request. ``path`` is absolute (``/apis/group/version/namespaces/ns/plural``).

    ``headers`` are extra HTTP headers (``Accept``, ``User-Agent``) that override the
    transport's own.
    """

    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive), if the request carries it."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)


class Response(Protocol):
    """A response; for a watch, the body is read incrementally with ``iter_lines``."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def read(self) -> bytes:
        """The whole body."""
        ...

    def iter_lines(self) -> Iterator[bytes]:
        """Newline-delimited chunks of a streamed body (one watch event each).

        Raises ``TimeoutError`` when no data arrives within the read timeout the request was
        sent with, so a silent connection is detected rather than waited on forever.
        """
        ...

    def close(self) -> None:
        """Release the connection; ends a stream early. Idempotent."""
        ...


class Transport(Protocol):
    """Sends requests. Implementations are thread-safe."""

    def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> Response:
        """Send ``request``; with ``stream`` the body is left unread for ``iter_lines``."""
        ...
