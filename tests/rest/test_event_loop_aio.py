"""Async client operations share one event loop, under load.

Against the test API server (real HTTP, in a child process so its threads do not compete with
the loop for the GIL), paged lists of 3,000 Foos, a hundred writes, five watches and the
dynamic client all run at once on a loop in debug mode (never-awaited coroutines and the
like are reported), and all complete. How long the loop's steps take is what
``bench/event_loop_steps.py`` measures with these same loads (CPU time per step, the longest
printed): a bound on it in this suite failed at load 3-8 on the shared 2-core machine. (An
unpaged list of thousands of objects does hold the loop for its decode, ~20 µs an object:
see ``kgen_runtime.rest.client_aio``.)
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

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


def test_client_operations_under_load_finish_on_one_loop() -> None:
    with server_process() as url:
        assert asyncio.run(load(url), debug=True) == (6, 100, 5)
