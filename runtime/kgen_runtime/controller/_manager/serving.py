"""An HTTP server answering GETs from a thread of its own: what the manager's health and
metrics servers share."""

from __future__ import annotations

import threading
from collections.abc import Callable
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Answer", "ServingThread", "get_handler"]

Answer = tuple[int, str, bytes]
"""An HTTP status, content type and body."""


def get_handler(respond: Callable[[str, Message], Answer]) -> type[BaseHTTPRequestHandler]:
    """A request handler answering each GET with ``respond(path, headers)``; requests are
    not logged (probes and scrapes would flood the log)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, content_type, body = respond(self.path, self.headers)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Not logged."""

    return Handler


class ServingThread:
    """Serves one :class:`ThreadingHTTPServer` from a daemon thread named ``name``, between
    :meth:`serve` and :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int] | None:
        """The bound ``(host, port)`` while serving, else ``None``."""
        if self._server is None:
            return None
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def serve(self, server: ThreadingHTTPServer) -> None:
        """Serve ``server`` (bound already) until :meth:`stop`; its connections on threads
        that do not keep the process alive."""
        server.daemon_threads = True
        self._server = server
        # A short poll interval: stop() (shutdown) waits up to one interval.
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,),
                                        name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket; waits for the serving thread."""
        if self._server is None or self._thread is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        self._server = self._thread = None
