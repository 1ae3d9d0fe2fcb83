"""Fixtures of the REST tests: a scripted HTTP server on 127.0.0.1, a fake clock, test kinds."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from pydantic import Field

from kgen_runtime.meta import KubeList, KubeModel, KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import Config, HTTPTransport

#: Upper bound of any wait in these tests; reaching it means a bug, not slowness.
BOUND = 10.0


class FooSpec(KubeModel):
    deployment_name: str | None = Field(
        default=None, validation_alias="deploymentName", serialization_alias="deploymentName"
    )
    replicas: int | None = None


class FooStatus(KubeModel):
    available_replicas: int | None = Field(
        default=None, validation_alias="availableReplicas", serialization_alias="availableReplicas"
    )


class Foo(KubeObject):
    api_version: str = Field(
        default="samplecontroller.k8s.io/v1alpha1",
        validation_alias="apiVersion",
        serialization_alias="apiVersion",
    )
    kind: str = "Foo"
    spec: FooSpec | None = None
    status: FooStatus | None = None


class FooList(KubeList[Foo]):
    pass


class Thing(KubeObject):
    """A kind whose instances leave apiVersion/kind to the client."""


class ThingList(KubeList[Thing]):
    pass


FOO_RESOURCE: Resource[Foo] = Resource(
    group="samplecontroller.k8s.io",
    version="v1alpha1",
    kind="Foo",
    plural="foos",
    singular="foo",
    namespaced=True,
    model=Foo,
    list_model=FooList,
    status_subresource=True,
)
CLUSTER_THING: Resource[Thing] = Resource(
    group="example.com",
    version="v1",
    kind="Thing",
    plural="things",
    singular="thing",
    namespaced=False,
    model=Thing,
    list_model=ThingList,
)
CORE_THING: Resource[Thing] = Resource(
    group="",
    version="v1",
    kind="ConfigMap",
    plural="configmaps",
    singular="configmap",
    namespaced=True,
    model=Thing,
    list_model=ThingList,
)


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes
    #: The client's port: requests with the same one came over the same connection.
    client_port: int

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    #: Streamed as chunks (a watch) when not None.
    lines: Sequence[bytes] | None = None
    #: For a stream: after the lines, hold the connection open until this is set.
    hold: threading.Event | None = None
    #: For a stream: end with a truncated chunk and a dropped connection.
    broken: bool = False
    #: Close the connection without a word: ``"before"`` replying (the request is lost),
    #: ``"after"`` (a kept-alive connection the server closes while it is idle); or
    #: ``"unread"``: reply at once, without reading the body, and close (an early 413).
    hang_up: str | None = None


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Failed TLS handshakes are expected in the TLS tests; the client reports them."""


class StubServer:
    """Answers requests with queued replies (default ``200 {}``) and records every request."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.requests: list[Recorded] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.holds: list[threading.Event] = []
        self.stream_started = threading.Event()
        #: Set once a ``hang_up`` reply has closed its connection.
        self.hung_up = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            wbufsize = 64 * 1024  # one segment per reply; flushed after each request

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                with stub._lock:
                    reply = stub._replies.popleft() if stub._replies else Reply()
                length = int(self.headers.get("Content-Length") or 0)
                unread = reply.hang_up == "unread"
                body = self.rfile.read(length) if length and not unread else b""
                parts = urlsplit(self.path)
                recorded = Recorded(
                    self.command,
                    parts.path,
                    parse_qsl(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    self.client_address[1],
                )
                with stub._lock:
                    stub.requests.append(recorded)
                if unread:  # closing with the body unread resets the connection
                    self._plain(reply)
                    self.close_connection = True
                elif reply.hang_up == "before":
                    self._hang_up()
                elif reply.lines is None:
                    self._plain(reply)
                else:
                    self._stream(reply)
                if reply.hang_up == "after":
                    self.wfile.flush()
                    self._hang_up()

            def _hang_up(self) -> None:
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                stub.hung_up.set()

            def _plain(self, reply: Reply) -> None:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def _stream(self, reply: Reply) -> None:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for line in reply.lines or ():
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                        self.wfile.flush()
                    stub.stream_started.set()
                    if reply.broken:
                        self.wfile.write(b'100\r\n{"half')
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if reply.hold is not None:
                        reply.hold.wait(BOUND)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except OSError:
                    pass  # the client went away
                self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._scheme = "http"
        if tls is not None:
            self._scheme = "https"
            self._server.socket = tls.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.01,), daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{self._scheme}://{host!s}:{port}"

    def reply(
        self,
        status: int = 200,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body or {}).encode()
        with self._lock:
            self._replies.append(Reply(status, raw, headers or {}))

    def reject_unread(self, status: int) -> None:
        """Queue a reply sent before reading the request's body, the connection then closed
        with the body unread (a server refusing a body too large)."""
        with self._lock:
            self._replies.append(Reply(status, b"{}", {"Connection": "close"}, hang_up="unread"))

    def hang_up(self, *, after_reply: bool) -> None:
        """Queue a reply that closes the connection silently, before or after replying."""
        with self._lock:
            self._replies.append(Reply(hang_up="after" if after_reply else "before"))

    def stream(
        self,
        lines: Sequence[bytes],
        *,
        hold: bool = False,
        broken: bool = False,
        headers: dict[str, str] | None = None,
    ) -> threading.Event | None:
        """Queue a streamed reply (each of ``lines`` one chunk); with ``hold`` it stays open
        until the returned event is set."""
        event = threading.Event() if hold else None
        if event is not None:
            self.holds.append(event)
        with self._lock:
            self._replies.append(
                Reply(lines=lines, hold=event, broken=broken, headers=headers or {})
            )
        return event

    @property
    def last(self) -> Recorded:
        return self.requests[-1]

    def close(self) -> None:
        for hold in self.holds:
            hold.set()
        self._server.shutdown()
        self._server.server_close()


class FakeClock:
    """Time stands still until someone sleeps, which advances it at once; sleeps are recorded.

    (``kgen_runtime.util.clock.FakeClock`` blocks sleepers until a test steps it; retry and
    throttling tests read more simply when a sleep just happens.)
    """

    def __init__(self, *, advance: bool = True) -> None:
        self.time = 1000.0
        #: Whether a sleep moves the time on; a frozen clock shows each caller's reserved delay.
        self.advance = advance
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self.time

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        with self._lock:
            self.sleeps.append(seconds)
            if self.advance:
                self.time += seconds
        return stop.is_set()

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        with self._lock:
            if deadline is not None:
                self.time = max(self.time, deadline)


@pytest.fixture
def server() -> Iterator[StubServer]:
    stub = StubServer()
    yield stub
    stub.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def transport(server: StubServer, clock: FakeClock) -> Iterator[HTTPTransport]:
    """An HTTP transport to the stub server, throttled and retried on the fake clock."""
    http = HTTPTransport(
        Config(host=server.url, auth=lambda: {"Authorization": "Bearer t0ken"}), clock=clock
    )
    yield http
    http.close()
