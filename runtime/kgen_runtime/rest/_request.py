"""The transport contract: one HTTP request in, one response out.

The real transport (urllib3 on the ``kubernetes`` package's configuration), the test API
server and the fake clientset all meet at this boundary, so typed clients are the same code
whether they talk to a cluster, to an in-process server, or to a fake with reactors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Request", "Response", "Transport"]


@dataclass(frozen=True, slots=True)
class Request:
    """An API request. ``path`` is absolute (``/apis/group/version/namespaces/ns/plural``)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    content_type: str | None = None


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
