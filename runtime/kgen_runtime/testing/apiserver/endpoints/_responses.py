"""In-process responses of the server core, implementing the rest ``Response`` protocol.

A :class:`BufferedResponse` carries a complete body. A :class:`WatchResponse` streams a
watch: one JSON event (``{"type": ..., "object": ...}``) per line, produced as the store
emits them; the HTTP server copies these lines into chunks, the fake transport hands the
response to the client directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import orjson

from kgen_runtime.testing.apiserver.storage._watch import Subscription, WatchEnded

__all__ = ["BufferedResponse", "CoreResponse", "WatchResponse", "json_response"]

_JSON = "application/json"


class BufferedResponse:
    """A complete response. Immutable after construction; ``close`` is a no-op."""

    def __init__(self, status: int, body: bytes, headers: Mapping[str, str] | None = None):
        self._status = status
        self._body = body
        # A 304 has no body, so no media type (Go's net/http sends none for it either).
        self._headers = {**({} if status == 304 else {"Content-Type": _JSON}), **(headers or {})}

    @property
    def status(self) -> int:
        return self._status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._headers

    def read(self) -> bytes:
        return self._body

    def iter_lines(self) -> Iterator[bytes]:
        yield from (line for line in self._body.split(b"\n") if line)

    def close(self) -> None:
        """Nothing to release."""


class WatchResponse:
    """A streamed watch. ``iter_lines`` blocks for events; ``close`` ends it from any thread.

    Args:
        subscription: The store's watch.
        transform: Rewrites each event's object (a Table row, for ``as=Table``); its second
            argument is True for the first event only (the one that carries the headers).
        read_timeout: Seconds ``iter_lines`` waits for the next event before raising
            ``TimeoutError`` (what a client sees on a silent connection); ``None`` waits
            until the stream ends.
    """

    def __init__(
        self,
        subscription: Subscription,
        read_timeout: float | None = None,
        transform: Callable[[dict[str, Any], bool], dict[str, Any]] | None = None,
    ) -> None:
        self._subscription = subscription
        self.read_timeout = read_timeout
        self._transform = transform
        self._first = True

    @property
    def status(self) -> int:
        return 200

    @property
    def headers(self) -> Mapping[str, str]:
        return {"Content-Type": _JSON, "Transfer-Encoding": "chunked"}

    def read(self) -> bytes:
        """Every remaining event, newline-terminated; blocks until the stream ends."""
        return b"".join(line + b"\n" for line in self.iter_lines())

    def iter_lines(self) -> Iterator[bytes]:
        while True:
            try:
                event = self._subscription.next(self.read_timeout)
            except WatchEnded:
                return
            if event is None:
                raise TimeoutError(f"no watch event within {self.read_timeout} s")
            kind, obj = event
            if self._transform is not None and kind not in ("BOOKMARK", "ERROR"):
                obj, self._first = self._transform(obj, self._first), False
            yield orjson.dumps({"type": kind, "object": obj})

    def close(self) -> None:
        self._subscription.close()


CoreResponse = BufferedResponse | WatchResponse


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> (
        BufferedResponse):
    """A JSON body ending in a newline, as kube-apiserver writes it: its JSON serializer is
    Go's ``json.Encoder`` (apimachinery ``runtime/serializer/json`` ``Encode``), whose
    ``Encode`` terminates each value with ``\\n``."""
    return BufferedResponse(status, orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE),
                            headers)
