"""One API call without I/O: the request both transports send, and how a blocking caller's
calls give up.

The request value is shared by the blocking and the async transports (:mod:`._request`,
:mod:`._request_aio`); :func:`cancel_on` is the blocking side's stand-in for Go's
cancellable ``context.Context`` (an async caller cancels its task instead).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["Request", "cancel_on", "cancellation"]

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
