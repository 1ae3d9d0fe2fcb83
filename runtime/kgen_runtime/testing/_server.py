"""The test API server: :class:`APIServerCore` behind a real threaded HTTP server.

It listens on ``127.0.0.1`` on an ephemeral port and speaks the Kubernetes HTTP/JSON
protocol, so the real transport, typed clients, reflectors and controllers run against it
unchanged. Watches are chunked responses with one JSON event per line.
"""

from __future__ import annotations

import contextlib
import select
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast
from urllib.parse import parse_qsl, urlsplit

from kgen_runtime.resource import Resource
from kgen_runtime.rest import Request
from kgen_runtime.testing._core import APIServerCore
from kgen_runtime.testing._sharding import ShardRequest
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.admission._pod_admission import ENVTEST_DISABLED
from kgen_runtime.testing.apiserver.endpoints._bodies import check_body_size
from kgen_runtime.testing.apiserver.endpoints._responses import (
    BufferedResponse,
    CoreResponse,
    WatchResponse,
    json_response,
)
from kgen_runtime.testing.apiserver.storage._resources import ServedResource, builtin
from kgen_runtime.testing.apiserver.storage._store import utc_now
from kgen_runtime.util.clock import REAL_CLOCK, Clock

if TYPE_CHECKING:
    from kgen_runtime.rest.config import Config

__all__ = ["TestAPIServer"]


class TestAPIServer:
    """An in-process Kubernetes API server for tests (envtest without binaries).

    Serves the built-in kinds of :data:`~kgen_runtime.testing.BUILTINS`, any resource given
    to :meth:`register`/:meth:`register_builtin`, and every CustomResourceDefinition POSTed to
    it or passed to :meth:`install_crd` (validated, defaulted and pruned by its schema).

    Fault injection, all thread-safe and effective immediately: :meth:`fail_next`,
    :meth:`delay`, :meth:`drop_watches`, :meth:`drop_connections`, :meth:`stall_watches`,
    :meth:`compact`. ``core`` is
    the :class:`APIServerCore` behind it (``core.store`` holds the objects).

    Args:
        history_size: Write events retained; watching or listing from an older
            resourceVersion gets 410 Expired.
        bookmark_interval: Seconds of silence after which a watch with
            ``allowWatchBookmarks=true`` receives a BOOKMARK.
        wall_clock: Source of ``creationTimestamp``/``deletionTimestamp``.
        clock: Time of watch bookmarks, ``timeoutSeconds`` and :meth:`delay`.
        namespace_lifecycle: Refuse creations in missing namespaces (404), as a real cluster
            does; off by default. Creations in terminating namespaces are always refused.
        namespace_controller: Empty and remove deleted namespaces (on by default); off, they
            stay Terminating for good, as on a bare kube-apiserver (envtest).
        disabled_admission_plugins: Pod admission plugins not to run (kube-apiserver's
            ``--disable-admission-plugins``): ``ServiceAccount`` by default, as envtest
            (without a controller-manager no ``default`` ServiceAccount exists, and every Pod
            would be refused); ``()`` runs ServiceAccount, DefaultTolerationSeconds and
            Priority, as a cluster does.
        system_objects: Start with what a bare kube-apiserver creates itself (on by default):
            the ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``
            namespaces, the ``kubernetes`` Service and the system PriorityClasses.
        sharded_list_and_watch: kube-apiserver v1.36's ``ShardedListAndWatch`` feature gate:
            lists and watches honour ``shardSelector`` (and lists echo it in
            ``metadata.shardInfo``); off (the default, as the alpha gate is), the parameter
            is ignored. :meth:`sharding_requests` logs every list and watch either way.
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        *,
        history_size: int = 10_000,
        bookmark_interval: float = 1.0,
        wall_clock: Callable[[], datetime] = utc_now,
        clock: Clock = REAL_CLOCK,
        namespace_lifecycle: bool = False,
        namespace_controller: bool = True,
        disabled_admission_plugins: Iterable[str] = ENVTEST_DISABLED,
        system_objects: bool = True,
        sharded_list_and_watch: bool = False,
    ) -> None:
        self.core = APIServerCore(history_size=history_size,
                                  bookmark_interval=bookmark_interval, wall_clock=wall_clock,
                                  clock=clock, namespace_lifecycle=namespace_lifecycle,
                                  namespace_controller=namespace_controller,
                                  disabled_admission_plugins=disabled_admission_plugins,
                                  system_objects=system_objects,
                                  sharded_list_and_watch=sharded_list_and_watch)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind ``127.0.0.1:0`` and serve in a daemon thread. Returns ``self``.

        A server starts once; after :meth:`stop`, create a new one.
        """
        if self._httpd is not None or self._stopped:
            raise RuntimeError("the server is already started or was stopped")
        httpd = _HTTPServer(("127.0.0.1", 0), _handler_for(self.core))
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,),
                                        name="kgen-test-apiserver",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """End open watches, stop serving, close every connection and the socket.

        Clients' kept-alive connections fail afterwards, as with a real server going away.
        Idempotent.
        """
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopped = True
        self.core.shutdown()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def sharding_requests(self) -> list[ShardRequest]:
        """Every list and watch of a collection served so far, oldest first: which
        ``shardSelector`` each sent and whether it was applied."""
        return self.core.sharding.requests()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (the server must be started)."""
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def config(self, **overrides: Any) -> Config:
        """A rest ``Config`` for this server: no TLS, no auth, no client-side throttling."""
        return client_config(self.url, **overrides)

    # -- what is served -----------------------------------------------------------------------

    def register(self, resource: Resource[Any]) -> None:
        """Serve a generated package's resource (stored without schema validation)."""
        self.core.serve(ServedResource.from_resource(resource))

    def register_builtin(
        self,
        group: str,
        version: str,
        kind: str,
        plural: str,
        *,
        namespaced: bool = True,
        status_subresource: bool = False,
    ) -> None:
        """Serve a built-in kind that is not in the default table."""
        self.core.serve(builtin(group, version, kind, plural, namespaced=namespaced,
                                status_subresource=status_subresource))

    def install_crd(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Create a CustomResourceDefinition (as a POST would); its kinds are served at once."""
        return self.core.install_crd(manifest)

    def add_token(self, token: str, username: str, groups: Sequence[str] = ()) -> None:
        """Make TokenReviews of ``token`` authenticate ``username`` in ``groups`` (and
        ``system:authenticated``); SubjectAccessReviews are decided by the RBAC objects
        stored (see :mod:`kgen_runtime.testing.apiserver.reviews._reviews`)."""
        self.core.reviews.add_token(token, username, groups)

    # -- faults -------------------------------------------------------------------------------

    def fail_next(
        self, count: int = 1, status_code: int = 500, reason: str = "InternalError",
        *, message: str = "injected failure", retry_after: int | None = None,
    ) -> None:
        """Answer the next ``count`` requests with this error (``Retry-After`` if given)."""
        self.core.fail_next(count, status_code, reason, message=message,
                            retry_after=retry_after)

    def delay(self, seconds: float) -> None:
        """Hold every request ``seconds`` before answering; ``delay(0)`` turns it off."""
        self.core.delay(seconds)

    def drop_watches(self) -> None:
        """End every open watch stream cleanly, as a server restart or LB timeout would."""
        self.core.store.drop_watches()

    def drop_connections(self) -> None:
        """Cut every open connection abruptly (a network blip): open watches end without the
        chunked terminator, kept-alive connections die; the server goes on accepting."""
        if self._httpd is not None:
            self._httpd.close_connections()
            self.core.store.drop_watches()  # release the streams' handler threads

    def stall_watches(self) -> None:
        """Keep every open watch connection open but silent for good (a half-dead link)."""
        self.core.store.stall_watches()

    def compact(self) -> None:
        """Forget the history: older resourceVersions now get 410 Expired."""
        self.core.store.compact()


class _ClientWatch:
    """Ends watch streams whose client went away (closed or reset its connection).

    A stream's handler thread is blocked waiting for the next event and only notices a
    departed client when it next writes — never, for a stalled or quiet watch. One thread
    per server polls the streams' sockets: readable with nothing to read means the peer
    closed, and the stream is closed, which ends the handler and its store subscription.
    """

    _POLL = 0.1

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._streams: dict[socket.socket, WatchResponse] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, connection: socket.socket, response: WatchResponse) -> None:
        with self._cond:
            self._streams[connection] = response
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="kgen-test-apiserver-watch-clients")
                self._thread.start()
            self._cond.notify_all()

    def discard(self, connection: socket.socket) -> None:
        with self._cond:
            self._streams.pop(connection, None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            thread, self._thread = self._thread, None
            self._cond.notify_all()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._streams and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                streams = dict(self._streams)
            poller = select.poll()  # any number of descriptors, unlike select()
            by_fd: dict[int, socket.socket] = {}
            for connection in streams:
                fd = connection.fileno()
                if fd < 0:  # closed meanwhile: its handler is ending
                    self.discard(connection)
                    continue
                by_fd[fd] = connection
                poller.register(fd, select.POLLIN)
            for fd, _ in poller.poll(self._POLL * 1000):
                connection = by_fd[fd]
                self.discard(connection)  # readable once: departed, or sent more (unusual)
                if _peer_closed(connection):
                    streams[connection].close()


def _peer_closed(connection: socket.socket) -> bool:
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class _HTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server that can close the connections it is serving."""

    daemon_threads = True
    #: Listen backlog. socketserver's default of 5 overflows when a dozen clients connect at
    #: once: connections then stall for a SYN retry (1 s) or are reset mid-request.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]):
        super().__init__(address, handler)
        self._connections_lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self.client_watch = _ClientWatch()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request is not an error worth a traceback."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def server_close(self) -> None:
        self.client_watch.close()
        super().server_close()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._connections_lock:
                self._connections.discard(request)

    def close_connections(self) -> None:
        """Shut every open connection down; their handler threads then end."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


def _handler_for(core: APIServerCore) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_core = core

    return Handler


class _Handler(BaseHTTPRequestHandler):
    """Turns one HTTP request into a :class:`Request` for the core and writes the answer."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small writes (headers, watch events) go out at once
    server_core: APIServerCore

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def do_OPTIONS(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read responses, not access logs."""

    def _serve(self) -> None:
        url = urlsplit(self.path)
        response: CoreResponse | None = self._refusal(url.path)
        if response is None:
            length = int(self.headers.get("Content-Length") or 0)
            response = self.server_core.handle(Request(
                method=self.command,
                path=url.path,
                query=tuple(parse_qsl(url.query, keep_blank_values=True)),
                body=self.rfile.read(length) if length else None,
                content_type=self.headers.get("Content-Type"),
                headers=tuple((name, value) for name, value in self.headers.items()
                              if name.lower() in ("accept", "user-agent", "if-none-match",
                                                  "if-modified-since")),
            ))
        if isinstance(response, WatchResponse):
            self._stream(response)
            return
        payload = response.read()
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _refusal(self, path: str) -> BufferedResponse | None:
        """What is answered before the body is read: a body over the limit (the connection
        is then closed, the body unread), or OpenAPI asked for in protobuf only."""
        try:
            check_body_size(int(self.headers.get("Content-Length") or 0))
        except StatusError as error:
            self.close_connection = True
            return json_response(error.code, error.status(), {"Connection": "close"})
        accept = self.headers.get("Accept") or ""
        if path.startswith("/openapi/") and "protobuf" in accept and "json" not in accept \
                and "*/*" not in accept:
            refusal = StatusError(406, "NotAcceptable",
                                  f"only application/json is served (the test server does not "
                                  f"encode OpenAPI documents in protobuf; asked for {accept})")
            return json_response(refusal.code, refusal.status())
        return None

    def _stream(self, response: WatchResponse) -> None:
        client_watch = cast(_HTTPServer, self.server).client_watch
        client_watch.add(self.connection, response)
        try:
            self._write_stream(response)
        finally:
            client_watch.discard(self.connection)

    def _write_stream(self, response: WatchResponse) -> None:
        try:
            self.send_response(200)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.flush()
            for line in response.iter_lines():
                chunk = line + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:  # the client went away
            self.close_connection = True
        finally:
            response.close()
            with contextlib.suppress(OSError):
                self.wfile.flush()


def client_config(url: str, **overrides: Any) -> Config:
    """A rest ``Config`` for a test server at ``url``: no TLS, no auth, no client-side
    throttling (a test measures the server, not a rate limiter); ``overrides`` win."""
    from kgen_runtime.rest.config import Config

    settings: dict[str, Any] = {"host": url, "qps": 0.0, **overrides}
    return Config(**settings)
