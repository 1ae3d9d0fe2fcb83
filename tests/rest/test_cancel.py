"""cancel_on: a request waiting to retry an unreachable server gives up when its stop is set."""

from __future__ import annotations

import socket
import threading

import pytest

from kgen_runtime.rest import Config, HTTPTransport, Request, cancel_on, cancellation
from kgen_runtime.util.clock import FakeClock


def _refused_url() -> str:
    """The URL of a local port nothing listens on (connections are refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_a_retrying_request_gives_up_once_its_stop_is_set() -> None:
    clock = FakeClock()  # the retry backoff never passes by itself: only stop can end it
    transport = HTTPTransport(Config(host=_refused_url(), max_retries=10, qps=0), clock=clock)
    stop = threading.Event()
    outcome: list[BaseException] = []

    def send() -> None:
        with cancel_on(stop):
            try:
                transport.send(Request("GET", "/api"))
            except BaseException as err:  # the test inspects it below
                outcome.append(err)

    worker = threading.Thread(target=send)
    worker.start()
    assert clock.wait_for_sleepers(1)  # refused once, now waiting to retry
    stop.set()
    worker.join(5.0)
    assert not worker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ConnectionError)
    assert "cancelled" in str(outcome[0])
    transport.close()


def test_cancellation_is_per_block_and_per_thread() -> None:
    stop = threading.Event()
    assert cancellation() is None
    with cancel_on(stop):
        assert cancellation() is stop
        seen: list[object] = []
        other = threading.Thread(target=lambda: seen.append(cancellation()))
        other.start()
        other.join()
        assert seen == [None]
    assert cancellation() is None


def test_a_cancelled_request_is_not_sent() -> None:
    transport = HTTPTransport(Config(host=_refused_url()))
    stop = threading.Event()
    stop.set()
    with cancel_on(stop), pytest.raises(ConnectionError, match="cancelled"):
        transport.send(Request("GET", "/api"))
    transport.close()
