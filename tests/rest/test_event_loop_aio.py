"""No async client operation blocks the event loop: asyncio's slow-callback detector, under load.

The loop runs in debug mode (never-awaited coroutines and the like are reported) and every
callback or task step that computes for more than 50 ms on the loop's thread is recorded
(:class:`SlowSteps`: asyncio's slow-callback check, timed by CPU rather than wall time).
Against the test API server (real HTTP, in a
child process so its threads do not compete with the loop for the GIL), paged lists of 3,000
Foos, a hundred writes, five watches and the dynamic client all run at once; any such log
record fails the test. (An unpaged list of thousands of objects does hold the loop for its
decode, ~20 µs an object: see ``kgen_runtime.rest.client_aio``.)
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest
import yaml

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.rest import (
    AsyncDynamicClient,
    AsyncHTTPTransport,
    AsyncStatusClientMixin,
    Config,
    ListOptions,
)
from kgen_runtime.testing import ObjectTracker, TestAPIServer
from tests.rest.conftest import BOUND, FOO_RESOURCE, Foo, FooList, FooSpec

SLOW = 0.05
SEEDED = 3_000
CRD = yaml.safe_load((Path(__file__).parents[2] / "examples/foo-crd/crds/foo.yaml").read_text())
FOOS_GVR = GroupVersionResource("samplecontroller.k8s.io", "v1alpha1", "foos")


class SlowSteps:
    """Every loop step (callback or task step) that spent ``SLOW`` seconds of CPU time.

    asyncio's own debug check times ``Handle._run`` by the wall clock; on a shared machine
    (2 cores, load average above 10) that mostly measures the OS preempting the process: a
    page decode of 0.8 ms CPU was reported at 50-60 ms. Timing the same ``Handle._run`` by
    the thread's CPU time sees what the loop itself did — decoding, GC pauses, blocking
    work — and not the other processes.
    """

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._run = asyncio.events.Handle._run

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        run = self._run
        seen = self.seen

        def timed_run(handle: asyncio.Handle) -> None:
            start = time.thread_time()
            try:
                run(handle)
            finally:
                spent = time.thread_time() - start
                if spent >= SLOW:
                    seen.append(f"{spent * 1000:.0f} ms CPU in {_described(handle)}")

        monkeypatch.setattr(asyncio.events.Handle, "_run", timed_run)


def _described(handle: asyncio.Handle) -> str:
    """The task a step ran (its coroutine's name and line), else the callback."""
    owner = getattr(getattr(handle, "_callback", None), "__self__", None)
    if isinstance(owner, asyncio.Task):
        frame = owner.get_coro().cr_frame  # type: ignore[union-attr]
        where = f" at line {frame.f_lineno}" if frame is not None else ""
        return f"task {owner.get_coro()!r}{where}"
    return repr(handle)[:300]


@pytest.fixture
def slow_steps(monkeypatch: pytest.MonkeyPatch) -> SlowSteps:
    steps = SlowSteps()
    steps.install(monkeypatch)
    return steps


def serve(conn: Connection) -> None:
    """The child process: a test API server with ``SEEDED`` Foos until the parent says stop."""
    with TestAPIServer() as server:
        server.install_crd(CRD)
        tracker = ObjectTracker(server.core)
        for index in range(SEEDED):
            tracker.add(
                {
                    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                    "kind": "Foo",
                    "metadata": {"name": f"seed-{index:05d}", "namespace": "load"},
                    "spec": {"deploymentName": f"d-{index}", "replicas": 1 + index % 10},
                }
            )
        conn.send(server.url)
        conn.recv()


@contextmanager
def server_process() -> Iterator[str]:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=serve, args=(child,), daemon=True)
    process.start()
    try:
        assert parent.poll(BOUND * 3), "the server process did not start"
        yield parent.recv()
    finally:
        parent.send("stop")
        process.join(BOUND)


async def list_all(client: Any) -> int:
    """How many objects there are, listed in pages of 100 (and dropped, as a cache would
    keep them elsewhere)."""
    count = 0
    options = ListOptions(limit=100)
    while True:
        page = await client.list(options)
        count += len(page.items)
        if not page.metadata.continue_:
            return count
        options = ListOptions(limit=100, continue_=page.metadata.continue_)


async def load(url: str) -> tuple[int, int, int]:
    transport = AsyncHTTPTransport(Config(host=url, qps=0.0))
    foos = AsyncStatusClientMixin[Foo, FooList](transport, FOO_RESOURCE, "load")
    dynamic = AsyncDynamicClient(transport).resource(FOOS_GVR).namespace("load")
    start = (await foos.list(ListOptions(limit=1))).metadata.resource_version
    try:
        async with asyncio.timeout(BOUND * 3), asyncio.TaskGroup() as tasks:
            watched = [tasks.create_task(watch_count(foos, start, 100)) for _ in range(5)]
            lists = [tasks.create_task(list_all(foos)) for _ in range(6)]
            dynamic_list = tasks.create_task(list_all(dynamic))
            writes = [tasks.create_task(write(foos, index)) for index in range(100)]
    finally:
        await transport.aclose()
    assert all(task.result() >= SEEDED for task in lists)
    assert dynamic_list.result() >= SEEDED
    assert all(task.result() == 100 for task in watched)
    return len(lists), len(writes), len(watched)


async def write(foos: AsyncStatusClientMixin[Foo, FooList], index: int) -> None:
    created = await foos.create(
        Foo(metadata={"name": f"new-{index:03d}"}, spec=FooSpec(replicas=1))
    )
    assert created.metadata.name == f"new-{index:03d}"


async def watch_count(
    foos: AsyncStatusClientMixin[Foo, FooList], start: str | None, wanted: int
) -> int:
    seen = 0
    async with foos.watch(ListOptions(resource_version=start), read_timeout=BOUND) as watch:
        async for event in watch:
            assert event.type == "ADDED"
            seen += 1
            if seen == wanted:
                break
    return seen


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """Everything allocated so far (pytest, every imported module) moved out of the
    collector's sight, as a latency-minded service does with ``gc.freeze()`` after start-up:
    a full collection then costs what the operations under test keep alive, not what the
    test process carries (measured: 40-80 ms CPU per full collection otherwise)."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("frozen_heap")
def test_no_client_operation_holds_the_loop_over_50ms(slow_steps: SlowSteps) -> None:
    with server_process() as url:
        assert asyncio.run(load(url), debug=True) == (6, 100, 5)
    assert slow_steps.seen == []


def test_the_detector_sees_a_blocking_step(slow_steps: SlowSteps) -> None:
    """The check above can fail: a step that computes for 100 ms is reported, once."""

    async def main() -> None:
        deadline = time.thread_time() + SLOW * 2
        while time.thread_time() < deadline:
            pass
        await asyncio.sleep(0)

    asyncio.run(main(), debug=True)
    assert len(slow_steps.seen) == 1, slow_steps.seen
