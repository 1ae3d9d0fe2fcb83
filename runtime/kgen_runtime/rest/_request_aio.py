"""The asyncio twin of the transport contract (:mod:`kgen_runtime.rest._request`).

The same :class:`~kgen_runtime.rest.Request` goes in; the response's body is awaited.
:class:`~kgen_runtime.rest.AsyncHTTPTransport` (aiohttp) and the async fake clientset's
transport meet here, so async typed clients are the same code over either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Protocol

from kgen_runtime.rest._request import Request

__all__ = ["AsyncResponse", "AsyncTransport"]


class AsyncResponse(Protocol):
    """A response; for a watch, the body is read incrementally with ``aiter_lines``."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def read(self) -> bytes:
        """The whole body."""
        ...

    def aiter_lines(self) -> AsyncIterator[bytes]:
        """Newline-delimited chunks of a streamed body (one watch event each).

        Raises ``TimeoutError`` when no data arrives within the request's read timeout; ends
        quietly at the end of the body, on a broken connection, or after :meth:`close`.
        """
        ...

    def close(self) -> None:
        """Release the connection; ends a stream early (its reader wakes). Idempotent."""
        ...


class AsyncTransport(Protocol):
    """Sends requests from coroutines of one event loop."""

    async def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> AsyncResponse:
        """Send ``request``; with ``stream`` the body is left unread for ``aiter_lines``."""
        ...
