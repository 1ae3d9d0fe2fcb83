"""The transport contract: one HTTP request in, one response out.

The real transports (urllib3 for threads, aiohttp for coroutines), the test API server and the
fake clientsets all meet at this boundary, so typed clients are the same code whether they talk
to a cluster, to an in-process server, or to a fake with reactors. The same
:class:`~kgen_runtime.rest.Request` goes into every transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Protocol

from kgen_runtime.rest._call import Request

__all__ = ["AsyncResponse", "AsyncTransport"]
__all__ += ["Request"]  # shared by every transport; apart, so the twin's list stays sorted


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

        Raises ``TimeoutError`` when no data arrives within the read timeout the request was
        sent with, so a silent connection is detected rather than waited on forever; ends
        quietly at the end of the body, on a broken connection, or after :meth:`close`.
        """
        ...

    def close(self) -> None:
        """Release the connection; ends a stream early (its reader wakes). Idempotent."""
        ...


class AsyncTransport(Protocol):
    """Sends requests; implementations are safe to share as their kind allows (the blocking
    ones across threads, the async ones among the coroutines of one event loop)."""

    async def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> AsyncResponse:
        """Send ``request``; with ``stream`` the body is left unread for ``aiter_lines``."""
        ...
