"""AsyncHTTPTransport against the stub server: the sync transport's contract, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from kgen_runtime.rest import AsyncHTTPTransport, Config, Request
from kgen_runtime.util.clock_aio import FakeAsyncClock
from tests.rest.conftest import BOUND, StubServer
from tests.rest.test_transport import closed_port

R = TypeVar("R")


class AdvancingClock:
    """Time stands still until someone sleeps, which advances it at once; sleeps recorded."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, stop: asyncio.Event | None, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.time += seconds
        return stop is not None and stop.is_set()


def run(
    server_url: str,
    body: Callable[[AsyncHTTPTransport], Awaitable[R]],
    clock: Any = None,
    **config: Any,
) -> R:
    """Run ``body`` with a new transport on a new event loop, bounded in time."""
    config.setdefault("auth", lambda: {"Authorization": "Bearer t0ken"})

    async def main() -> R:
        transport = AsyncHTTPTransport(Config(host=server_url, **config), clock=clock)
        try:
            async with asyncio.timeout(BOUND * 2):
                return await body(transport)
        finally:
            await transport.aclose()

    return asyncio.run(main())


async def read(transport: AsyncHTTPTransport, request: Request) -> tuple[int, bytes]:
    response = await transport.send(request)
    return response.status, await response.read()


def test_request_line_headers_and_body(server: StubServer) -> None:
    server.reply(201, {"ok": True}, {"X-Extra": "1"})
    request = Request(
        "POST", "/apis/g/v1/namespaces/ns/foos", (("labelSelector", "app=a,tier!=db"),), b'{"a":1}'
    )
    assert run(server.url, lambda t: read(t, request)) == (201, b'{"ok": true}')
    seen = server.last
    assert (seen.method, seen.path, seen.body) == (
        "POST",
        "/apis/g/v1/namespaces/ns/foos",
        b'{"a":1}',
    )
    assert seen.query == [("labelSelector", "app=a,tier!=db")]
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["authorization"] == "Bearer t0ken"
    assert seen.headers["user-agent"] == "kgen-runtime/0.1"


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_retry_after_is_honoured_for_every_verb(server: StubServer, method: str) -> None:
    server.reply(429, {}, {"Retry-After": "3"})
    server.reply(503, {}, {"Retry-After": "1"})
    server.reply(200, {"done": 1})
    clock = AdvancingClock()
    assert run(server.url, lambda t: read(t, Request(method, "/x", (), b"{}")), clock) == (
        200,
        b'{"done": 1}',
    )
    assert clock.sleeps == [3.0, 1.0]
    assert [r.body for r in server.requests] == [b"{}"] * 3


def test_transient_5xx_retried_for_reads_only(server: StubServer) -> None:
    for status in (502, 503, 504):
        server.reply(status)
    clock = AdvancingClock()

    async def body(transport: AsyncHTTPTransport) -> list[int]:
        first = (await transport.send(Request("GET", "/x"))).status
        server.reply(503)
        second = (await transport.send(Request("PUT", "/x", (), b"{}"))).status
        return [first, second]

    assert run(server.url, body, clock) == [200, 503]
    assert clock.sleeps == [0.2, 0.4, 0.8]


def test_retries_are_bounded_and_backoff_capped(server: StubServer) -> None:
    for _ in range(20):
        server.reply(503)
    clock = AdvancingClock()
    assert run(server.url, lambda t: read(t, Request("GET", "/x")), clock, max_retries=7)[0] == 503
    assert len(server.requests) == 8
    assert clock.sleeps == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_connection_refused_is_retried_then_raised(method: str) -> None:
    clock = AdvancingClock()
    with pytest.raises(ConnectionError):
        run(
            f"http://127.0.0.1:{closed_port()}",
            lambda t: read(t, Request(method, "/x", (), b"{}")),
            clock,
            max_retries=3,
        )
    assert clock.sleeps == [0.2, 0.4, 0.8]


def test_silent_server_raises_timeout_without_retry() -> None:
    clock = AdvancingClock()

    async def body(transport: AsyncHTTPTransport) -> None:
        writers: list[asyncio.StreamWriter] = []
        server = await asyncio.start_server(lambda r, w: writers.append(w), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            silent = AsyncHTTPTransport(Config(host=f"http://127.0.0.1:{port}", read_timeout=0.2))
            try:
                await silent.send(Request("GET", "/x"))
            finally:
                await silent.aclose()
                for writer in writers:
                    writer.close()
                    await writer.wait_closed()

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        run("http://unused", body, clock)
    assert time.monotonic() - started < BOUND
    assert clock.sleeps == []


def test_qps_and_burst_throttle_requests_in_arrival_order(server: StubServer) -> None:
    clock = AdvancingClock()

    async def body(transport: AsyncHTTPTransport) -> None:
        for _ in range(5):
            (await transport.send(Request("GET", "/x"))).close()

    run(server.url, body, clock, qps=2.0, burst=2)
    assert clock.sleeps == [0.5, 0.5, 0.5]
    assert len(server.requests) == 5


def test_aclose_wakes_throttled_callers(server: StubServer) -> None:
    clock = FakeAsyncClock()

    async def body(transport: AsyncHTTPTransport) -> list[BaseException | int]:
        await read(transport, Request("GET", "/x"))
        calls = [asyncio.create_task(read(transport, Request("GET", "/x"))) for _ in range(8)]
        await clock.wait_for_sleepers(8)
        await transport.aclose()
        results = await asyncio.gather(*calls, return_exceptions=True)
        return [r if isinstance(r, BaseException) else r[0] for r in results]

    results = run(server.url, body, clock, qps=1.0, burst=1)
    assert all(isinstance(r, ConnectionError) and "closed" in str(r) for r in results)
    assert len(server.requests) == 1


def test_cancelling_the_caller_cancels_a_retry_wait(server: StubServer) -> None:
    server.reply(503, {}, {"Retry-After": "100"})
    clock = FakeAsyncClock()

    async def body(transport: AsyncHTTPTransport) -> None:
        call = asyncio.create_task(transport.send(Request("GET", "/x")))
        await clock.wait_for_sleepers(1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert clock.sleeper_count() == 0

    run(server.url, body, clock)
    assert len(server.requests) == 1


def test_many_concurrent_requests_all_arrive(server: StubServer) -> None:
    async def body(transport: AsyncHTTPTransport) -> list[int]:
        at_once = asyncio.Semaphore(16)  # the stub server's listen backlog is small

        async def call(i: int) -> int:
            async with at_once:
                return (await read(transport, Request("GET", f"/item/{i}")))[0]

        return list(await asyncio.gather(*(call(i) for i in range(200))))

    assert run(server.url, body, qps=0.0) == [200] * 200
    assert sorted(r.path for r in server.requests) == sorted(f"/item/{i}" for i in range(200))


async def lines_of(transport: AsyncHTTPTransport, read_timeout: float = BOUND) -> list[bytes]:
    response = await transport.send(Request("GET", "/w"), stream=True, read_timeout=read_timeout)
    try:
        return [line async for line in response.aiter_lines()]
    finally:
        response.close()
        response.close()


def test_stream_yields_lines_as_they_come(server: StubServer) -> None:
    server.stream([b'{"n":1}\n{"n"', b":2}\n\n", b'{"n":3}'])
    assert run(server.url, lines_of) == [b'{"n":1}', b'{"n":2}', b'{"n":3}']


def test_stalled_stream_raises_timeout_within_read_timeout(server: StubServer) -> None:
    server.stream([b'{"n":1}\n'], hold=True)

    async def body(transport: AsyncHTTPTransport) -> float:
        response = await transport.send(Request("GET", "/w"), stream=True, read_timeout=0.3)
        lines = response.aiter_lines()
        assert await anext(lines) == b'{"n":1}'
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await anext(lines)
        return time.monotonic() - started

    assert 0.25 <= run(server.url, body) < 3.0


def test_close_ends_a_waiting_stream_reader(server: StubServer) -> None:
    server.stream([b'{"n":1}\n'], hold=True)

    async def body(transport: AsyncHTTPTransport) -> list[bytes]:
        response = await transport.send(Request("GET", "/w"), stream=True, read_timeout=BOUND * 2)
        got: list[bytes] = []
        first = asyncio.Event()

        async def consume() -> None:
            async for line in response.aiter_lines():
                got.append(line)
                first.set()

        reader = asyncio.create_task(consume())
        await first.wait()
        response.close()
        async with asyncio.timeout(2.0):
            await reader
        return got

    assert run(server.url, body) == [b'{"n":1}']


def test_broken_stream_ends_quietly_and_the_transport_carries_on(server: StubServer) -> None:
    server.stream([b'{"n":1}\n', b'{"n":2}\n'], broken=True)

    async def body(transport: AsyncHTTPTransport) -> tuple[list[bytes], int]:
        lines = await lines_of(transport)
        return lines, (await transport.send(Request("GET", "/after"))).status

    assert run(server.url, body) == ([b'{"n":1}', b'{"n":2}'], 200)


def test_server_warnings_are_logged(server: StubServer, caplog: pytest.LogCaptureFixture) -> None:
    server.reply(200, {}, {"Warning": '299 - "v1alpha1 Foo is deprecated"'})
    with caplog.at_level("WARNING", logger="kgen_runtime.rest.transport"):
        run(server.url, lambda t: read(t, Request("GET", "/apis/g/v1alpha1/foos")))
    assert [r.getMessage() for r in caplog.records] == [
        'GET /apis/g/v1alpha1/foos: server warning: 299 - "v1alpha1 Foo is deprecated"'
    ]


def test_auth_headers_are_fetched_per_request_off_the_loop(server: StubServer) -> None:
    tokens = iter(f"Bearer t{i}" for i in range(100))
    loops: list[bool] = []

    def auth() -> dict[str, str]:
        try:
            asyncio.get_running_loop()
            loops.append(True)
        except RuntimeError:
            loops.append(False)
        return {"Authorization": next(tokens)}

    server.reply(503, {}, {"Retry-After": "1"})

    async def body(transport: AsyncHTTPTransport) -> None:
        for _ in range(2):
            await read(transport, Request("GET", "/x"))

    run(server.url, body, AdvancingClock(), auth=auth)
    assert [r.headers["authorization"] for r in server.requests] == [
        "Bearer t0",
        "Bearer t1",
        "Bearer t2",
    ]
    assert loops == [False, False, False]  # called in a worker thread, never on the loop
