"""An informer whose server is unreachable still shuts down promptly."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kgen_runtime.cache import SharedInformerFactory
from kgen_runtime.rest import Config, HTTPTransport
from tests.cache._fakes import WAIT
from tests.cache._foo import FOO


class _HangUpServer:
    """Accepts connections and closes them at once, counting them (a dead backend)."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._accepted = threading.Condition()
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            conn.close()
            with self._accepted:
                self.connections += 1
                self._accepted.notify_all()

    def wait_for_connections(self, count: int) -> bool:
        with self._accepted:
            return self._accepted.wait_for(lambda: self.connections >= count, WAIT)

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def dead_server() -> Iterator[_HangUpServer]:
    server = _HangUpServer()
    yield server
    server.close()


def test_shutdown_does_not_wait_for_the_transport_retries(dead_server: _HangUpServer) -> None:
    transport = HTTPTransport(Config(host=dead_server.url, max_retries=10))
    factory = SharedInformerFactory(transport)
    factory.informer_for(FOO).set_watch_error_handler(lambda r, e: None)
    stop = threading.Event()
    factory.start(stop)
    # The list was refused and retried: the reflector now sits in the transport's backoff,
    # which would last ~25 s over ten retries without cancellation.
    assert dead_server.wait_for_connections(2)
    started = time.monotonic()
    factory.shutdown()
    assert time.monotonic() - started < 2.0
    transport.close()
