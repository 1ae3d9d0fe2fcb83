"""HTTPTransport against a stub server: headers, retries, throttling, streaming, closing."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kgen_runtime.rest import Config, HTTPTransport, Request
from kgen_runtime.util.clock import FakeClock as BlockingFakeClock
from tests.rest.conftest import BOUND, FakeClock, StubServer


def make(server_url: str, clock: FakeClock, **config: object) -> HTTPTransport:
    return HTTPTransport(Config(host=server_url, **config), clock=clock)  # type: ignore[arg-type]


def test_request_line_headers_and_body(server: StubServer, transport: HTTPTransport) -> None:
    server.reply(201, {"ok": True}, {"X-Extra": "1"})
    request = Request(
        "POST",
        "/apis/g/v1/namespaces/ns/foos",
        (("labelSelector", "app=a,tier!=db"), ("dryRun", "All")),
        b'{"a":1}',
    )
    response = transport.send(request)
    assert (response.status, response.read()) == (201, b'{"ok": true}')
    assert response.headers["x-extra"] == "1"
    response.close()
    seen = server.last
    assert (seen.method, seen.path) == ("POST", "/apis/g/v1/namespaces/ns/foos")
    assert seen.query == [("labelSelector", "app=a,tier!=db"), ("dryRun", "All")]
    assert seen.body == b'{"a":1}'
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["authorization"] == "Bearer t0ken"
    assert seen.headers["user-agent"] == "kgen-runtime/0.1"


def test_explicit_content_type_and_no_body(server: StubServer, transport: HTTPTransport) -> None:
    transport.send(Request("PATCH", "/x", (), b"[]", "application/json-patch+json")).close()
    assert server.last.headers["content-type"] == "application/json-patch+json"
    transport.send(Request("GET", "/x")).close()
    assert "content-type" not in server.last.headers


def test_error_statuses_are_returned_not_raised(
    server: StubServer, transport: HTTPTransport
) -> None:
    server.reply(404, {"kind": "Status", "code": 404})
    response = transport.send(Request("GET", "/x"))
    assert response.status == 404
    assert b'"code": 404' in response.read()


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("status", [429, 500, 503])
def test_retry_after_is_honoured_for_every_verb(
    server: StubServer, transport: HTTPTransport, clock: FakeClock, method: str, status: int
) -> None:
    server.reply(status, {}, {"Retry-After": "3"})
    server.reply(status, {}, {"Retry-After": "1"})
    server.reply(200, {"done": 1})
    response = transport.send(Request(method, "/x", (), b"{}"))
    assert (response.status, response.read()) == (200, b'{"done": 1}')
    assert clock.sleeps == [3.0, 1.0]
    assert [r.body for r in server.requests] == [b"{}"] * 3


def test_retry_after_on_other_statuses_is_ignored(
    server: StubServer, transport: HTTPTransport, clock: FakeClock
) -> None:
    server.reply(409, {}, {"Retry-After": "3"})
    assert transport.send(Request("GET", "/x")).status == 409
    assert clock.sleeps == []


@pytest.mark.parametrize("status", [502, 503, 504])
def test_transient_5xx_retried_with_backoff_for_reads(
    server: StubServer, transport: HTTPTransport, clock: FakeClock, status: int
) -> None:
    for _ in range(3):
        server.reply(status)
    response = transport.send(Request("GET", "/x"))
    assert response.status == 200
    assert clock.sleeps == [0.2, 0.4, 0.8]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_transient_5xx_not_retried_for_writes(
    server: StubServer, transport: HTTPTransport, clock: FakeClock, method: str
) -> None:
    server.reply(503)
    assert transport.send(Request(method, "/x", (), b"{}")).status == 503
    assert clock.sleeps == [] and len(server.requests) == 1


def test_500_without_retry_after_is_not_retried(
    server: StubServer, transport: HTTPTransport, clock: FakeClock
) -> None:
    server.reply(500)
    assert transport.send(Request("GET", "/x")).status == 500
    assert clock.sleeps == []


def test_retries_are_bounded_and_backoff_capped(server: StubServer, clock: FakeClock) -> None:
    transport = make(server.url, clock, max_retries=7)
    for _ in range(20):
        server.reply(503)
    assert transport.send(Request("GET", "/x")).status == 503
    assert len(server.requests) == 8
    assert clock.sleeps == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    transport.close()


def test_no_retries_when_disabled(server: StubServer, clock: FakeClock) -> None:
    transport = make(server.url, clock, max_retries=0)
    server.reply(429, {}, {"Retry-After": "1"})
    assert transport.send(Request("GET", "/x")).status == 429
    assert clock.sleeps == []
    transport.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_connection_refused_is_retried_then_raised(clock: FakeClock, method: str) -> None:
    transport = make(f"http://127.0.0.1:{closed_port()}", clock, max_retries=3)
    with pytest.raises(ConnectionError):
        transport.send(Request(method, "/x", (), b"{}"))
    assert clock.sleeps == [0.2, 0.4, 0.8]
    transport.close()


def test_silent_server_raises_timeout_without_retry(clock: FakeClock) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        transport = make(f"http://127.0.0.1:{port}", clock, read_timeout=0.2)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            transport.send(Request("GET", "/x"))
        assert time.monotonic() - started < BOUND
        assert clock.sleeps == []
        transport.close()


def test_qps_and_burst_throttle_requests(server: StubServer, clock: FakeClock) -> None:
    transport = make(server.url, clock, qps=2.0, burst=2)
    for _ in range(5):
        transport.send(Request("GET", "/x")).close()
    assert clock.sleeps == [0.5, 0.5, 0.5]
    assert len(server.requests) == 5
    transport.close()


def test_throttling_disabled_with_zero_qps(server: StubServer, clock: FakeClock) -> None:
    transport = make(server.url, clock, qps=0.0)
    for _ in range(20):
        transport.send(Request("GET", "/x")).close()
    assert clock.sleeps == []
    transport.close()


def test_close_wakes_throttled_callers(server: StubServer) -> None:
    blocking_clock = BlockingFakeClock()
    transport = HTTPTransport(Config(host=server.url, qps=1.0, burst=1), clock=blocking_clock)
    transport.send(Request("GET", "/x")).close()
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(transport.send, Request("GET", "/x")) for _ in range(8)]
        assert blocking_clock.wait_for_sleepers(8, timeout=BOUND)
        transport.close()
        for future in futures:
            with pytest.raises(ConnectionError, match="closed"):
                future.result(timeout=BOUND)
    assert len(server.requests) == 1
    with pytest.raises(ConnectionError, match="closed"):
        transport.send(Request("GET", "/x"))


def test_concurrent_requests_all_arrive(server: StubServer, clock: FakeClock) -> None:
    transport = make(server.url, clock, qps=0.0, pool_size=4)

    def call(i: int) -> int:
        response = transport.send(Request("GET", f"/item/{i}"))
        response.read()
        response.close()
        return response.status

    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(call, range(200), timeout=BOUND * 3))
    assert statuses == [200] * 200
    assert sorted(r.path for r in server.requests) == sorted(f"/item/{i}" for i in range(200))
    transport.close()


def test_stream_yields_lines_as_they_come(server: StubServer, transport: HTTPTransport) -> None:
    server.stream([b'{"n":1}\n{"n"', b":2}\n\n", b'{"n":3}'])
    response = transport.send(Request("GET", "/w"), stream=True, read_timeout=BOUND)
    assert list(response.iter_lines()) == [b'{"n":1}', b'{"n":2}', b'{"n":3}']
    response.close()
    response.close()


def test_stream_with_a_content_encoding_is_decoded(
    server: StubServer, transport: HTTPTransport
) -> None:
    """A plain stream is read with http.client's ``read1`` directly; an encoded one still
    goes through urllib3, which decodes it."""
    body = gzip.compress(b'{"n":1}\n{"n":2}\n')
    server.stream([body[:10], body[10:]], headers={"Content-Encoding": "gzip"})
    response = transport.send(Request("GET", "/w"), stream=True, read_timeout=BOUND)
    assert list(response.iter_lines()) == [b'{"n":1}', b'{"n":2}']
    assert transport.send(Request("GET", "/after")).status == 200


def test_stalled_stream_raises_timeout_within_read_timeout(
    server: StubServer, transport: HTTPTransport
) -> None:
    server.stream([b'{"n":1}\n'], hold=True)
    response = transport.send(Request("GET", "/w"), stream=True, read_timeout=0.3)
    lines = response.iter_lines()
    assert next(lines) == b'{"n":1}'
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        next(lines)
    assert 0.25 <= time.monotonic() - started < 3.0
    response.close()


def test_close_from_another_thread_ends_a_blocked_stream(
    server: StubServer, transport: HTTPTransport
) -> None:
    server.stream([b'{"n":1}\n'], hold=True)
    response = transport.send(Request("GET", "/w"), stream=True, read_timeout=BOUND * 2)
    got: list[bytes] = []
    first = threading.Event()

    def consume() -> None:
        for line in response.iter_lines():
            got.append(line)
            first.set()

    reader = threading.Thread(target=consume)
    reader.start()
    assert first.wait(BOUND)
    started = time.monotonic()
    response.close()
    reader.join(BOUND)
    assert not reader.is_alive()
    assert time.monotonic() - started < 2.0
    assert got == [b'{"n":1}']


def test_broken_stream_ends_quietly_without_the_partial_line(
    server: StubServer, transport: HTTPTransport
) -> None:
    server.stream([b'{"n":1}\n', b'{"n":2}\n'], broken=True)
    response = transport.send(Request("GET", "/w"), stream=True, read_timeout=BOUND)
    assert list(response.iter_lines()) == [b'{"n":1}', b'{"n":2}']
    assert transport.send(Request("GET", "/after")).status == 200


def test_closed_stream_yields_nothing(server: StubServer, transport: HTTPTransport) -> None:
    server.stream([b"{}\n"])
    response = transport.send(Request("GET", "/w"), stream=True)
    response.close()
    assert list(response.iter_lines()) == []


def test_connection_reuse_after_a_finished_stream(
    server: StubServer, transport: HTTPTransport
) -> None:
    server.stream([b"{}\n"])
    response = transport.send(Request("GET", "/w"), stream=True)
    assert list(response.iter_lines()) == [b"{}"]
    assert transport.send(Request("GET", "/after")).status == 200


def test_server_warnings_are_logged(
    server: StubServer, transport: HTTPTransport, caplog: pytest.LogCaptureFixture
) -> None:
    server.reply(200, {}, {"Warning": '299 - "v1alpha1 Foo is deprecated"'})
    with caplog.at_level("WARNING", logger="kgen_runtime.rest.transport"):
        transport.send(Request("GET", "/apis/g/v1alpha1/foos")).close()
    assert [r.getMessage() for r in caplog.records] == [
        'GET /apis/g/v1alpha1/foos: server warning: 299 - "v1alpha1 Foo is deprecated"'
    ]


def test_auth_headers_are_fetched_per_request(server: StubServer, clock: FakeClock) -> None:
    tokens = iter(f"Bearer t{i}" for i in range(100))
    transport = HTTPTransport(
        Config(host=server.url, auth=lambda: {"Authorization": next(tokens)}), clock=clock
    )
    server.reply(503, {}, {"Retry-After": "1"})
    for _ in range(2):
        transport.send(Request("GET", "/x")).close()
    assert [r.headers["authorization"] for r in server.requests] == [
        "Bearer t0",
        "Bearer t1",
        "Bearer t2",
    ]
    transport.close()


def test_throttling_under_many_threads(server: StubServer) -> None:
    clock = FakeClock(advance=False)
    transport = make(server.url, clock, qps=100.0, burst=5)
    start = threading.Barrier(16)

    def calls(worker: int) -> list[int]:
        start.wait(BOUND)
        statuses = []
        for i in range(10):
            response = transport.send(Request("GET", f"/w{worker}/{i}"))
            statuses.append(response.status)
            response.close()
        return statuses

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(calls, range(16), timeout=BOUND * 3))
    assert results == [[200] * 10] * 16
    assert len(server.requests) == 160
    # Time stands still: 5 requests ride the burst, the other 155 each wait for their own
    # token, 10 ms apart, whatever the interleaving of the threads.
    assert sorted(clock.sleeps) == pytest.approx([k / 100.0 for k in range(1, 156)])
    transport.close()
