"""One recorded request sent over HTTP as the client sent it, and the answer read back.

The request keeps the recorded method, path, query, ``Content-Type``, ``Accept``,
``User-Agent`` and ``If-None-Match`` (no header the client did not send, as the recording
proxy forwarded them); protobuf bodies are sent from their base64 record. A watch is read
event by event until it has as many events as the recording, or the server ends it, or
5 s pass (the recording's own limit).
"""

from __future__ import annotations

import base64
import dataclasses
import http.client
import json
import re
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

__all__ = ["Answer", "Endpoint", "send", "split_warnings", "status_of"]

WATCH_LIMIT = 5.0
_WARNING = re.compile(r'\s*(\d{3})\s+\S+\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,|$)')


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where requests go: a base URL, and for a cluster its TLS context and auth headers."""

    url: str
    context: ssl.SSLContext | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def connect(self, timeout: float) -> http.client.HTTPConnection:
        parts = urlsplit(self.url)
        host, port = parts.hostname or "127.0.0.1", parts.port
        if parts.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout, context=self.context)
        return http.client.HTTPConnection(host, port, timeout=timeout)


@dataclasses.dataclass(frozen=True)
class Answer:
    """What the server answered, in the record's terms."""

    status: int
    content_type: str | None
    warnings: tuple[str, ...]
    etag: str | None
    body: bytes
    events: list[Any] | None  # a watch's events, parsed

    def parsed(self) -> tuple[Any, str | None]:
        """``(body, body_format)`` as the recording would have kept them."""
        if not self.body:
            return None, None
        media = (self.content_type or "").split(";")[0].strip()
        if "protobuf" in media:
            return base64.b64encode(self.body).decode(), "base64"
        if media.endswith("json") or (media == "text/plain" and self.body[:1] in (b"{", b"[")):
            try:
                return json.loads(self.body), "json"
            except ValueError:
                pass
        return self.body.decode("utf-8", "replace"), "text"


def split_warnings(values: list[str]) -> tuple[str, ...]:
    """The warning texts of ``Warning`` headers (several headers or one with commas)."""
    texts = []
    for value in values:
        for match in _WARNING.finditer(value):
            texts.append(f'{match.group(1)} - "{match.group(2)}"')
    return tuple(texts)


def send(endpoint: Endpoint, request: dict[str, Any], query: list[tuple[str, str]],
         path: str, body: bytes | None, headers: dict[str, str], *,
         expected_events: int | None) -> Answer:
    """Send one request; for a watch (``expected_events`` given) read its event stream."""
    target = path + ("?" + urlencode(query) if query else "")
    connection = endpoint.connect(timeout=WATCH_LIMIT if expected_events is not None else 60)
    try:
        connection.putrequest(request["method"], target, skip_accept_encoding=True)
        for name, value in {**endpoint.headers, **headers}.items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        warnings = split_warnings(response.headers.get_all("Warning") or [])
        common = (response.status, response.headers.get("Content-Type"), warnings,
                  response.headers.get("ETag"))
        if expected_events is not None and response.status == 200:
            return Answer(*common, b"", _read_events(response, expected_events))
        return Answer(*common, response.read(), None)
    finally:
        connection.close()


def status_of(endpoint: Endpoint, path: str) -> int:
    """The status code of a plain GET of ``path`` (for the waits of :mod:`.settle`)."""
    connection = endpoint.connect(timeout=10)
    try:
        connection.request("GET", path, headers={"Accept": "application/json",
                                                 **endpoint.headers})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _read_events(response: http.client.HTTPResponse, expected: int) -> list[Any]:
    events: list[Any] = []
    try:
        while len(events) < expected:
            line = response.readline()
            if not line:
                break
            if line.strip():
                events.append(json.loads(line))
    except TimeoutError:
        pass
    return events
