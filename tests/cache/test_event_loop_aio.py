"""No async informer or controller operation holds the event loop over 50 ms (CPU) under load.

The same detector as ``tests/rest/test_event_loop_aio.py`` (every loop step timed by the
thread's CPU time, debug mode on, the process heap frozen first): an informer factory syncs
3,000 Foos from a test API server in a child process (paged lists of 500, the reflector's
default), an async controller reconciles every key through the async client, and 200 writes
stream through the watch meanwhile, to plain and async handlers.
"""

from __future__ import annotations

import asyncio

import pytest

from kgen_runtime.cache import AsyncSharedInformerFactory, meta_namespace_key_func
from kgen_runtime.controller import AsyncController, AsyncReconcilerFunc
from kgen_runtime.rest import AsyncHTTPTransport, AsyncStatusClientMixin, Config
from tests.rest.conftest import BOUND, FOO_RESOURCE, Foo, FooList, FooSpec
from tests.rest.test_event_loop_aio import (
    SEEDED,
    SlowSteps,
    frozen_heap,
    server_process,
    slow_steps,
)

__all__ = ["frozen_heap", "slow_steps"]  # fixtures, used by name


async def informer_and_controller(url: str) -> tuple[int, int]:
    transport = AsyncHTTPTransport(Config(host=url, qps=0.0))
    foos = AsyncStatusClientMixin[Foo, FooList](transport, FOO_RESOURCE, "load")
    factory = AsyncSharedInformerFactory(transport)
    informer = factory.informer_for(FOO_RESOURCE)
    reconciled: set[str] = set()

    async def reconcile(key: str) -> None:
        name = key.split("/")[1]
        obj = informer.indexer.get_by_key(key)
        if obj is not None and name.startswith("new-"):
            await foos.patch(name, {"metadata": {"labels": {"seen": "yes"}}})
        reconciled.add(key)

    controller = AsyncController(
        "load", AsyncReconcilerFunc(reconcile), cache_synced=[informer.has_synced]
    )
    added: list[str] = []

    async def on_add(obj: Foo) -> None:
        added.append(obj.metadata.name or "")

    informer.add_event_handler(on_add=lambda obj: controller.enqueue(meta_namespace_key_func(obj)))
    informer.add_event_handler(on_add=on_add)
    factory.start()
    running = asyncio.create_task(controller.run(workers=8))
    try:
        async with asyncio.timeout(BOUND * 3):
            assert (await factory.wait_for_cache_sync()) == {FOO_RESOURCE.gvr: True}
            for batch in range(10):  # 20 writes in flight at a time
                async with asyncio.TaskGroup() as writes:
                    for index in range(batch * 20, batch * 20 + 20):
                        new = Foo(metadata={"name": f"new-{index:03d}"}, spec=FooSpec())
                        writes.create_task(foos.create(new))
            while len(reconciled) < SEEDED + 200 or len(added) < SEEDED + 200:
                await asyncio.sleep(0.01)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await factory.shutdown()
        await transport.aclose()
    return len(reconciled), len(added)


@pytest.mark.usefixtures("frozen_heap")
def test_no_informer_or_controller_step_holds_the_loop_over_50ms(slow_steps: SlowSteps) -> None:
    with server_process() as url:
        assert asyncio.run(informer_and_controller(url), debug=True) == (SEEDED + 200,) * 2
    assert slow_steps.seen == []
