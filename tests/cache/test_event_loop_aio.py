"""The async informer and controller share one event loop without holding it.

An informer factory syncs 3,000 Foos from a test API server in a child process (paged lists
of 500, the reflector's default), an async controller reconciles every key through the async
client, and 200 writes stream through the watch meanwhile, to plain and async handlers: all
of it completes on one loop in debug mode. How long its steps take is measured by
``bench/event_loop_steps.py`` (CPU time per step: no timing bound holds on a loaded shared
machine); here, structurally, the reflector yields to the loop between the chunks of a page
it builds, before it replaces the store and after, so another task runs in between.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson

from kgen_runtime.cache import AsyncSharedInformerFactory, Indexer, meta_namespace_key_func
from kgen_runtime.cache._reflector_aio import AsyncReflector
from kgen_runtime.controller import AsyncController, AsyncReconcilerFunc
from kgen_runtime.rest import AsyncHTTPTransport, AsyncStatusClientMixin, Config, ListOptions
from tests.rest.conftest import BOUND, FOO_RESOURCE, Foo, FooList, FooSpec
from tests.rest.test_event_loop_aio import SEEDED, server_process


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


def test_an_informer_and_a_controller_under_load_finish_on_one_loop() -> None:
    with server_process() as url:
        assert asyncio.run(informer_and_controller(url), debug=True) == (SEEDED + 200,) * 2


PAGES, PAGE = 3, 250


class _Pages:
    """Three pages of 250 Foos, decoded from JSON as the client decodes them, handed over
    without awaiting anything: a reflector that did not yield
    itself would run the whole list in one loop step. Records the loop's tick count at each
    page request; its watch never delivers."""

    def __init__(self, ticks: list[int]) -> None:
        self._ticks = ticks
        self.requested: list[int] = []

    async def list(self, options: ListOptions) -> FooList:
        self.requested.append(self._ticks[0])
        page = len(self.requested)
        items = [{"metadata": {"name": f"foo-{page}-{index:03d}", "namespace": "load"},
                  "spec": {"deploymentName": "d"}} for index in range(PAGE)]
        return FooList.model_from_wire_json(orjson.dumps({
            "metadata": {"resourceVersion": "7",
                         **({"continue": str(page)} if page < PAGES else {})},
            "items": items}))

    async def watch(self, options: ListOptions) -> Any:
        await asyncio.Future()  # never opens: the test ends before


class _TickedStore(Indexer[Foo]):
    """An indexer noting the loop's tick count when the list replaces its contents."""

    def __init__(self, ticks: list[int]) -> None:
        super().__init__()
        self._ticks = ticks
        self.replaced_at: int | None = None

    def replace(self, objects: Any, resource_version: str = "") -> None:
        self.replaced_at = self._ticks[0]
        super().replace(objects, resource_version)


def test_the_reflector_yields_between_pages_and_before_the_replace() -> None:
    async def main() -> tuple[list[int], int | None]:
        ticks = [0]

        async def ticker() -> None:  # one tick per loop pass that lets another task run
            while True:
                ticks[0] += 1
                await asyncio.sleep(0)

        pages = _Pages(ticks)
        store = _TickedStore(ticks)
        ticking = asyncio.create_task(ticker())
        reflecting = asyncio.create_task(AsyncReflector(pages, store).run())
        while store.replaced_at is None:
            await asyncio.sleep(0)
        for task in (ticking, reflecting):
            task.cancel()
        await asyncio.gather(ticking, reflecting, return_exceptions=True)
        return pages.requested, store.replaced_at

    requested, replaced_at = asyncio.run(main())
    assert len(requested) == PAGES
    # other tasks run between one page's decode and the next page's request
    assert all(later > earlier for earlier, later in itertools.pairwise(requested))
    # the last page's decode, then the replace in a step of its own
    assert replaced_at is not None and replaced_at > requested[-1]
