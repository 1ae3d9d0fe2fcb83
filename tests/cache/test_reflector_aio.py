"""AsyncReflector against the test API server over real HTTP (AsyncHTTPTransport): paging,
watching, streaming lists, faults (dropped, broken, stalled watches, compaction), resync and
cancellation. The store must equal the server at the end, every time."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from kgen_runtime.cache import AsyncListWatch, AsyncReflector, Indexer, ReflectorOptions
from kgen_runtime.rest import AsyncHTTPTransport, AsyncResourceClient
from kgen_runtime.rest.errors import is_gone
from kgen_runtime.testing import ObjectTracker, TestAPIServer
from kgen_runtime.util.clock_aio import FakeAsyncClock
from tests.cache._foo import FOO, Foo, FooList, foo

WAIT = 10.0
R = TypeVar("R")

FAST = ReflectorOptions(
    page_size=2,
    watch_read_timeout=0.4,
    initial_backoff=0.05,
    max_backoff=0.2,
    rng=random.Random(5),
)

Client = AsyncResourceClient[Foo, FooList]


class CountingStore(Indexer[Foo]):
    """An indexer that counts resyncs and replaces."""

    def __init__(self) -> None:
        super().__init__()
        self.resyncs = 0
        self.replaces = 0

    def replace(self, objects: Any, resource_version: str = "") -> None:
        self.replaces += 1
        super().replace(objects, resource_version)

    def resync(self) -> None:
        self.resyncs += 1


def run(main: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        async with asyncio.timeout(WAIT * 3):
            return await main()

    return asyncio.run(bounded())


async def until(predicate: Callable[[], bool], what: str) -> None:
    """Poll ``predicate`` until it holds, at most ``WAIT`` seconds."""
    try:
        async with asyncio.timeout(WAIT):
            while not predicate():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"not within {WAIT}s: {what}") from None


def snapshot(store: Indexer[Foo]) -> dict[str, str | None]:
    return {
        f"{o.metadata.namespace}/{o.metadata.name}": o.metadata.resource_version
        for o in store.list()
    }


async def server_state(client: Client) -> dict[str, str | None]:
    return {
        f"{o.metadata.namespace}/{o.metadata.name}": o.metadata.resource_version
        for o in (await client.list()).items
    }


@asynccontextmanager
async def reflecting(
    options: ReflectorOptions = FAST, **kwargs: Any
) -> AsyncIterator[
    tuple[TestAPIServer, Client, CountingStore, AsyncReflector[Foo], list[BaseException]]
]:
    errors: list[BaseException] = []
    with TestAPIServer(bookmark_interval=0.2) as server:
        server.register(FOO)
        transport = AsyncHTTPTransport(server.config())
        writer: Client = AsyncResourceClient(transport, FOO, "default")
        everywhere: Client = AsyncResourceClient(transport, FOO, None)
        for name in ("a", "b", "c", "d", "e"):
            await writer.create(foo(name))
        store = CountingStore()
        reflector: AsyncReflector[Foo] = AsyncReflector(
            AsyncListWatch.from_client(everywhere),
            store,
            name="foos",
            options=options,
            watch_error_handler=lambda r, e: errors.append(e),
            **kwargs,
        )
        task = asyncio.create_task(reflector.run())
        try:
            yield server, writer, store, reflector, errors
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await transport.aclose()


async def in_step(store: Indexer[Foo], client: Client, what: str) -> None:
    """Wait until the store holds exactly the server's objects at their versions."""
    expected = await server_state(client)
    await until(lambda: snapshot(store) == expected, f"{what}: store == server {expected}")


def test_paged_list_then_watch_keeps_the_store_equal_to_the_server() -> None:
    async def main() -> None:
        async with reflecting() as (_, foos, store, reflector, errors):
            await in_step(store, foos, "after the paged list")
            await foos.create(foo("f"))
            await foos.patch("a", {"spec": {"x": 1}})
            await foos.delete("b")
            await in_step(store, foos, "after watched writes")
            assert reflector.last_sync_resource_version
            assert store.replaces == 1  # one list, then only the watch
            assert errors == []

    run(main)


def test_streaming_list_fills_the_store_then_watches() -> None:
    async def main() -> None:
        options = ReflectorOptions(use_watch_list=True, watch_read_timeout=5.0)
        async with reflecting(options) as (_, foos, store, _reflector, errors):
            await in_step(store, foos, "after the streaming list")
            await foos.delete("c")
            await in_step(store, foos, "after a watched delete")
            assert errors == []

    run(main)


def test_faults_never_leave_the_store_behind_the_server() -> None:
    """Dropped watches, cut connections, a compaction (410 ⇒ relist) and stalled watches
    (re-opened after the read timeout), each with writes around it. The writes go straight
    into the server's store: over a connection the fault just cut they could fail, and they
    are not what is under test."""

    async def main() -> None:
        async with reflecting() as (server, foos, store, _reflector, errors):
            await in_step(store, foos, "initially")
            tracker = ObjectTracker(server.core)
            faults = [server.drop_watches, server.drop_connections, server.stall_watches]
            for round_, fault in enumerate(faults):
                tracker.add(foo(f"before-{round_}"))
                fault()
                tracker.add(foo(f"after-{round_}"))
                tracker.delete(FOO.gvr, "default", f"before-{round_}")
                await in_step(store, foos, f"after {fault.__name__}")
            # (A watch cut within a second of opening, before any event, counts as failed and
            # the next round relists, as in client-go; how many rounds that takes varies.)
            await watch_is_open(tracker, store)
            replaces = store.replaces
            # A stalled watch whose version is compacted away meanwhile: re-opening it gets
            # 410 Gone, which ends the round; the next round relists.
            server.stall_watches()
            tracker.add(foo("while-stalled"))
            server.compact()
            await in_step(store, foos, "after a compaction behind a stalled watch")
            assert any(is_gone(e) for e in errors), errors
            assert store.replaces > replaces

    run(main)


async def watch_is_open(tracker: ObjectTracker, store: CountingStore) -> None:
    """Return once a marker object reached the store through a watch rather than a list."""
    for attempt in range(50):
        replaces = store.replaces
        marker = f"default/marker-{attempt}"
        tracker.add(foo(f"marker-{attempt}"))
        await until(lambda key=marker: key in store.list_keys(), f"{marker} in the store")
        if store.replaces == replaces:
            return
    raise AssertionError("no watch stayed open long enough to deliver a marker")


def test_resync_runs_on_the_clock() -> None:
    async def main() -> None:
        clock = FakeAsyncClock()
        async with reflecting(resync_period=30.0, clock=clock) as (_, foos, store, _r, _e):
            await in_step(store, foos, "initially")
            await until(lambda: clock.sleeper_count() >= 1, "the resync task sleeps")
            clock.step(30.0)
            await until(lambda: store.resyncs == 1, "one resync")
            clock.step(30.0)
            await until(lambda: store.resyncs == 2, "a second resync")

    run(main)


def test_cancelling_the_task_stops_everything_promptly() -> None:
    async def main() -> set[asyncio.Task[Any]]:
        async with reflecting() as (_, foos, store, _reflector, _errors):
            await in_step(store, foos, "initially")
        # Leaving the block cancelled the reflector mid-watch; nothing of it is left running.
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    assert run(main) == set()


class _RefusingListerWatcher:
    """Every list fails as a refused connection does; the reflector never gets to watch."""

    async def list(self, options: Any) -> Any:
        raise ConnectionError("connection refused")

    async def watch(self, options: Any) -> Any:
        raise AssertionError("a reflector watches only after a list succeeded")


def test_set_watch_error_handler_replaces_the_constructor_hook() -> None:
    # The blocking Reflector's set_watch_error_handler, on the async twin (issue 20).
    async def main() -> None:
        constructor_hook: list[BaseException] = []
        errors: list[tuple[object, BaseException]] = []
        reflector: AsyncReflector[Foo] = AsyncReflector(
            _RefusingListerWatcher(),
            Indexer(),
            name="refused",
            options=FAST,
            watch_error_handler=lambda r, e: constructor_hook.append(e),
            clock=FakeAsyncClock(),
        )
        reflector.set_watch_error_handler(lambda r, e: errors.append((r, e)))
        task = asyncio.create_task(reflector.run())
        try:
            await until(lambda: bool(errors), "the first round's error")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert [(r, type(e), str(e)) for r, e in errors] == [
            (reflector, ConnectionError, "connection refused")
        ]
        assert constructor_hook == []

    run(main)
