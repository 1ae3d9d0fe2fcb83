"""AsyncSharedIndexInformer and AsyncSharedInformerFactory over real HTTP: plain and async
handlers, late handlers, listers, faults with tombstones, shutdown. Cache and handler state
must equal the server at the end, every run."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from kgen_runtime.cache import (
    AsyncGenericInformer,
    AsyncResourceEventHandlerFuncs,
    AsyncSharedInformerFactory,
    DeletedFinalStateUnknown,
    NamespacedLister,
    ReflectorOptions,
)
from kgen_runtime.cache._informer_aio import AsyncListener
from kgen_runtime.cache._processor import (
    AddAllNotification,
    AddNotification,
    DeleteNotification,
    UpdateNotification,
)
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest import AsyncHTTPTransport, AsyncResourceClient
from kgen_runtime.testing import ObjectTracker, TestAPIServer
from kgen_runtime.util.clock_aio import FakeAsyncClock
from tests.cache._foo import FOO, Foo, FooList, foo

WAIT = 10.0
FAST = ReflectorOptions(
    watch_read_timeout=0.4, initial_backoff=0.05, max_backoff=0.2, rng=random.Random(7)
)


def run(main: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        async with asyncio.timeout(WAIT * 3):
            return await main()

    return asyncio.run(bounded())


async def until(predicate: Callable[[], bool], what: str) -> None:
    try:
        async with asyncio.timeout(WAIT):
            while not predicate():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"not within {WAIT}s: {what}") from None


class Mirror:
    """Handler state: what a controller would believe from the notifications alone."""

    def __init__(self) -> None:
        self.objects: dict[str, str | None] = {}
        self.events: list[tuple[str, str]] = []
        self.tombstones = 0

    def on_add(self, obj: Foo) -> None:
        self.objects[obj.metadata.name or ""] = obj.metadata.resource_version
        self.events.append(("add", obj.metadata.name or ""))

    def on_update(self, old: Foo, new: Foo) -> None:
        self.objects[new.metadata.name or ""] = new.metadata.resource_version
        self.events.append(("update", new.metadata.name or ""))

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.tombstones += 1
            obj = obj.obj
        self.objects.pop(obj.metadata.name or "", None)
        self.events.append(("delete", obj.metadata.name or ""))


class AsyncMirror(Mirror):
    """The same, through ``async def`` handlers that yield to the loop on every event."""

    async def on_add_async(self, obj: Foo) -> None:
        await asyncio.sleep(0)
        self.on_add(obj)

    async def on_update_async(self, old: Foo, new: Foo) -> None:
        await asyncio.sleep(0)
        self.on_update(old, new)

    async def on_delete_async(self, obj: Any) -> None:
        await asyncio.sleep(0)
        self.on_delete(obj)


@asynccontextmanager
async def informing() -> AsyncIterator[Any]:
    with TestAPIServer(bookmark_interval=0.2) as server:
        server.register(FOO)
        transport = AsyncHTTPTransport(server.config())
        foos: AsyncResourceClient[Foo, FooList] = AsyncResourceClient(transport, FOO, "default")
        for name in ("a", "b", "c"):
            await foos.create(foo(name))
        factory = AsyncSharedInformerFactory(transport, reflector_options=FAST)
        informer = factory.informer_for(FOO)
        assert factory.informer_for(FOO) is informer
        informer.set_watch_error_handler(lambda r, e: None)
        plain, awaited = Mirror(), AsyncMirror()
        informer.add_event_handler(plain.on_add, plain.on_update, plain.on_delete)
        informer.add_event_handler(
            awaited.on_add_async, awaited.on_update_async, awaited.on_delete_async
        )
        factory.start()
        try:
            synced = await factory.wait_for_cache_sync(timeout=WAIT)
            assert synced == {FOO.gvr: True}
            yield server, foos, informer, plain, awaited
        finally:
            await factory.shutdown()
            await transport.aclose()


async def server_state(foos: AsyncResourceClient[Foo, FooList]) -> dict[str, str | None]:
    return {o.metadata.name or "": o.metadata.resource_version for o in (await foos.list()).items}


def cache_state(informer: Any) -> dict[str, str | None]:
    return {o.metadata.name: o.metadata.resource_version for o in informer.indexer.list()}


async def converged(foos: Any, informer: Any, *mirrors: Mirror) -> None:
    expected = await server_state(foos)
    await until(
        lambda: cache_state(informer) == expected and all(m.objects == expected for m in mirrors),
        f"cache and handlers == server {expected}",
    )


def test_plain_and_async_handlers_see_every_change_in_order() -> None:
    async def main() -> None:
        async with informing() as (_, foos, informer, plain, awaited):
            await foos.create(foo("d"))
            await foos.patch("a", {"spec": {"x": 1}})
            await foos.delete("b")
            await converged(foos, informer, plain, awaited)
            expected = [("add", "a"), ("add", "b"), ("add", "c"), ("add", "d")]
            expected += [("update", "a"), ("delete", "b")]
            assert sorted(plain.events[:3]) == expected[:3]  # the initial list, any order
            assert plain.events[3:] == expected[3:]
            assert awaited.events == plain.events
            lister = NamespacedLister(informer.indexer, FOO.gvr)
            assert sorted(f.metadata.name for f in lister.namespaced("default").list()) == [
                "a",
                "c",
                "d",
            ]

    run(main)


def test_a_late_handler_gets_the_cache_first_then_live_events() -> None:
    async def main() -> None:
        async with informing() as (_, foos, informer, _plain, _awaited):
            late = AsyncMirror()
            registration = informer.add_event_handler(
                late.on_add_async, late.on_update_async, late.on_delete_async
            )
            await until(registration.has_synced, "the late handler synced")
            assert sorted(late.events) == [("add", "a"), ("add", "b"), ("add", "c")]
            await foos.delete("a")
            await converged(foos, informer, late)
            assert late.events[-1] == ("delete", "a")

    run(main)


def test_chaos_cache_and_handlers_equal_the_server_every_time() -> None:
    """Dropped, cut and stalled watches, and objects deleted behind a stalled watch whose
    version is then compacted away (410 ⇒ relist ⇒ tombstones), with writes throughout."""

    async def main() -> None:
        async with informing() as (server, foos, informer, plain, awaited):
            tracker = ObjectTracker(server.core)
            rng = random.Random(11)
            faults = [server.drop_watches, server.drop_connections, server.stall_watches]
            for round_ in range(6):
                fault = rng.choice(faults)
                tracker.add(foo(f"r{round_}-before"))
                fault()
                tracker.add(foo(f"r{round_}-after"))
                tracker.delete(FOO.gvr, "default", f"r{round_}-before")
                await converged(foos, informer, plain, awaited)
            await until(lambda: informer.last_sync_resource_version != "", "a version")
            # Deletes the watch cannot see: a relist must report them as tombstones.
            await marker_through_watch(tracker, informer)
            server.stall_watches()
            tracker.delete(FOO.gvr, "default", "a")
            tracker.delete(FOO.gvr, "default", "b")
            server.compact()
            await converged(foos, informer, plain, awaited)
            assert plain.tombstones == 2 and awaited.tombstones == 2

    run(main)


async def marker_through_watch(tracker: ObjectTracker, informer: Any) -> None:
    """Return once a marker object reached the cache through an open watch."""
    for attempt in range(50):
        synced = informer.last_sync_resource_version
        added = tracker.add(foo(f"marker-{attempt}"))
        rv = added["metadata"]["resourceVersion"]
        await until(
            lambda key=f"marker-{attempt}": key in cache_state(informer), "the marker cached"
        )
        if informer.last_sync_resource_version == rv and synced != rv:
            return
    raise AssertionError("no watch stayed open long enough to deliver a marker")


def test_shutdown_leaves_no_task_behind() -> None:
    async def main() -> set[asyncio.Task[Any]]:
        async with informing():
            pass
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    assert run(main) == set()


def test_resync_redelivers_the_cache_to_handlers_due_on_the_clock() -> None:
    """The shared processor's per-handler resync, with async listeners: a handler with a
    30 s period hears every cached object again as an update; one without does not."""

    async def main() -> tuple[list[str], list[str]]:
        clock = FakeAsyncClock()
        with TestAPIServer(bookmark_interval=0.2) as server:
            server.register(FOO)
            transport = AsyncHTTPTransport(server.config())
            foos: AsyncResourceClient[Foo, FooList] = AsyncResourceClient(transport, FOO, "default")
            for name in ("a", "b"):
                await foos.create(foo(name))
            factory = AsyncSharedInformerFactory(transport, reflector_options=FAST, clock=clock)
            informer = factory.informer_for(FOO)
            resynced, quiet = AsyncMirror(), AsyncMirror()
            informer.add_event_handler(
                resynced.on_add_async,
                resynced.on_update_async,
                resynced.on_delete_async,
                resync_period=30.0,
            )
            informer.add_event_handler(
                quiet.on_add_async, quiet.on_update_async, quiet.on_delete_async
            )
            factory.start()
            try:
                assert (await factory.wait_for_cache_sync(timeout=WAIT)) == {FOO.gvr: True}
                await until(lambda: clock.sleeper_count() >= 1, "the resync timer")
                clock.step(30.0)
                await until(lambda: len(resynced.events) == 4, "two resync updates")
                # Handlers hear events in order: a resync update to the quiet handler would
                # come before this add.
                await foos.create(foo("c"))
                await until(lambda: ("add", "c") in quiet.events, "the quiet handler saw c")
                return resynced.events[2:4], quiet.events[2:]
            finally:
                await factory.shutdown()
                await transport.aclose()

    updates, quiet_events = run(main)
    assert sorted(updates) == [("update", "a"), ("update", "b")]
    assert quiet_events == [("add", "c")]


def test_failing_and_value_returning_handlers_are_logged_and_keep_receiving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A plain handler that raises, a coroutine handler that raises after awaiting, and a
    plain one returning a value that is not awaitable: each failure is logged, nothing is
    awaited that is not awaitable, and every later notification arrives, in order."""
    seen: list[tuple[str, Any]] = []

    def on_add(obj: str) -> Any:
        seen.append(("add", obj))
        if obj == "boom":
            raise ValueError("plain handler bug")
        return {"a value": obj}  # not awaitable: ignored

    async def on_update(old: str, new: str) -> None:
        await asyncio.sleep(0)
        seen.append(("update", new))
        if new == "boom":
            raise ValueError("async handler bug")

    def on_delete(obj: str) -> int:
        seen.append(("delete", obj))
        return 7

    async def main() -> None:
        listener = AsyncListener(
            AsyncResourceEventHandlerFuncs(on_add, on_update, on_delete), 0.0, 0.0, "test"
        )
        listener.start()
        listener.add([AddNotification("a", True), AddNotification("boom", True)])
        listener.add([UpdateNotification("a", "boom"), UpdateNotification("boom", "b")])
        listener.add([DeleteNotification("b"), AddNotification("c", False)])
        assert listener.pending_initial() == 2
        await until(lambda: len(seen) == 6, "every notification delivered")
        assert listener.pending_initial() == 0
        listener.stop()

    with caplog.at_level(logging.ERROR, logger="kgen_runtime.cache.informer"):
        run(main)
    assert seen == [
        ("add", "a"),
        ("add", "boom"),
        ("update", "boom"),
        ("update", "b"),
        ("delete", "b"),
        ("add", "c"),
    ]
    errors = [str(r.exc_info[1]) for r in caplog.records if r.exc_info]
    assert errors == ["plain handler bug", "async handler bug"]


@asynccontextmanager
async def factory_over_one_foo() -> AsyncIterator[AsyncSharedInformerFactory]:
    """A factory over a test API server holding Foo ``default/a``; shut down on exit."""
    with TestAPIServer() as server:
        server.register(FOO)
        transport = AsyncHTTPTransport(server.config())
        foos: AsyncResourceClient[Foo, FooList] = AsyncResourceClient(transport, FOO, "default")
        await foos.create(foo("a"))
        factory = AsyncSharedInformerFactory(transport, reflector_options=FAST)
        try:
            yield factory
        finally:
            await factory.shutdown()
            await transport.aclose()


def test_store_accessors_indexers_and_stopped_as_on_the_blocking_informer() -> None:
    # get_store/get_indexer/add_indexers/is_stopped of SharedIndexInformer, on the async twin
    # (found missing by tests/test_twins.py).
    async def main() -> None:
        async with factory_over_one_foo() as factory:
            informer = factory.informer_for(FOO)
            assert informer.get_store() is informer.indexer
            assert informer.get_indexer() is informer.indexer
            factory.start()
            assert await factory.wait_for_cache_sync(timeout=WAIT) == {FOO.gvr: True}
            assert not informer.is_stopped
            # Added after the sync: the cached object is indexed at once.
            informer.add_indexers({"by-name": lambda o: [o.metadata.name]})
            assert [o.metadata.name for o in informer.indexer.by_index("by-name", "a")] == ["a"]
        assert informer.is_stopped

    run(main)


def test_factory_for_resource_uses_the_dynamic_client() -> None:
    # SharedInformerFactory.for_resource, on the async twin (issue 20).
    async def main() -> None:
        async with factory_over_one_foo() as factory:
            generic = factory.for_resource(FOO.gvr)
            assert isinstance(generic, AsyncGenericInformer)
            assert factory.for_resource(FOO.gvr).informer is generic.informer
            typed: Any = factory.informer_for(FOO)
            assert generic.informer is not typed  # typed and dynamic informers are distinct
            factory.start()
            # Both informers of the resource count: synced only when both are.
            assert await factory.wait_for_cache_sync(timeout=WAIT) == {FOO.gvr: True}
            got = generic.lister.namespaced("default").get("a")
            assert isinstance(got, Unstructured)
            assert got.metadata.name == "a"
            assert got["kind"] == "Foo"
            assert [o.metadata.name for o in typed.indexer.list()] == ["a"]

    run(main)


def test_a_batch_of_adds_reaches_a_coroutine_handler_one_by_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An ``AddAllNotification`` (a relist into an empty cache, or a late handler's feed) is
    an add per object: a failure is logged and the rest arrive, each initial add counted off
    as it is handled."""
    seen: list[str] = []
    pending: list[int] = []

    async def on_add(obj: str) -> None:
        await asyncio.sleep(0)
        seen.append(obj)
        pending.append(listener.pending_initial())
        if obj == "boom":
            raise ValueError("async handler bug")

    listener = AsyncListener(AsyncResourceEventHandlerFuncs(on_add), 0.0, 0.0, "test")

    async def main() -> None:
        listener.start()
        listener.add([AddAllNotification(["a", "boom", "c"], True), AddNotification("d", False)])
        assert listener.pending_initial() == 3
        await until(lambda: len(seen) == 4, "every add delivered")
        assert listener.pending_initial() == 0
        listener.stop()

    with caplog.at_level(logging.ERROR, logger="kgen_runtime.cache.informer"):
        run(main)
    assert seen == ["a", "boom", "c", "d"]
    assert pending == [3, 2, 1, 0]
    assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == ["async handler bug"]


def test_a_listener_lets_other_tasks_run_between_chunks_of_a_relists_adds() -> None:
    """A plain handler's calls never await: the listener yields to the loop after every
    1,000 of them, so a relist's adds are several loop steps, not one long one."""
    seen: list[str] = []
    observed: list[int] = []
    listener = AsyncListener(AsyncResourceEventHandlerFuncs(seen.append), 0.0, 0.0, "test")

    async def main() -> None:
        listener.start()
        listener.add([AddAllNotification([f"o{i}" for i in range(2500)], True)])
        while len(seen) < 2500:
            observed.append(len(seen))
            await asyncio.sleep(0)
        listener.stop()

    run(main)
    assert seen == [f"o{i}" for i in range(2500)]
    assert sorted(set(observed)) == [0, 1000, 2000]
