"""Informers over ShardedListWatch against the test server, with the ShardedListAndWatch gate
on (the server filters) and off (the parameter is ignored; the client filters): each informer
of N caches exactly its share of the objects, and its handlers never hear of another
shard's; set_ranges relists and leaves exactly the new share. Sync and async twins."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kgen_runtime.cache import (
    AsyncListWatch,
    AsyncSharedIndexInformer,
    DeletedFinalStateUnknown,
    ListWatch,
    ReflectorOptions,
    SharedIndexInformer,
)
from kgen_runtime.rest import AsyncHTTPTransport, AsyncResourceClient
from kgen_runtime.rest.transport import HTTPTransport
from kgen_runtime.sharding import (
    HASH_SPACE,
    AsyncShardedListWatch,
    HashRange,
    ShardedListWatch,
    fnv1a64,
    format_selector,
)
from kgen_runtime.testing import TestAPIServer
from tests.cache._foo import FOO, Foo, FooList, foo, foos, served
from tests.cache.test_informer_aio import until as async_until

WAIT = 15.0
SHARDS = 3
FAST = ReflectorOptions(watch_read_timeout=2.0, initial_backoff=0.05, max_backoff=0.2,
                        rng=random.Random(5))
LOWER = HashRange(0, HASH_SPACE // 2)
UPPER = HashRange(HASH_SPACE // 2, HASH_SPACE)


def shard_ranges() -> list[HashRange]:
    step = HASH_SPACE // SHARDS
    return [HashRange(i * step, HASH_SPACE if i == SHARDS - 1 else (i + 1) * step)
            for i in range(SHARDS)]


def share(uids: dict[str, str], hash_range: HashRange) -> set[str]:
    """The brute-force answer: the names whose uid hashes into ``hash_range``."""
    return {name for name, uid in uids.items() if fnv1a64(uid) in hash_range}


def wait_until(predicate: Callable[[], bool], what: str) -> None:
    done = threading.Event()
    for _ in range(int(WAIT / 0.01)):
        if predicate():
            return
        done.wait(0.01)
    raise AssertionError(f"not within {WAIT}s: {what}")


class Heard:
    """The names a handler was told of: added and not deleted since, and everything added."""

    def __init__(self) -> None:
        self.live: set[str] = set()
        self.ever: set[str] = set()
        self.log: list[tuple[str, str]] = []  # for failure messages

    def on_add(self, obj: Foo) -> None:
        self.live.add(obj.metadata.name or "")
        self.ever.add(obj.metadata.name or "")
        self.log.append(("add", obj.metadata.name or ""))

    def on_update(self, old: Foo, new: Foo) -> None:
        self.ever.add(new.metadata.name or "")
        self.log.append(("update", new.metadata.name or ""))

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self.live.discard(obj.metadata.name or "")
        self.log.append(("delete", obj.metadata.name or ""))


def cached(informer: Any) -> set[str]:
    return {obj.metadata.name for obj in informer.indexer.list()}


def uids_of(transport: HTTPTransport) -> dict[str, str]:
    return {o.metadata.name or "": o.metadata.uid or "" for o in foos(transport).list().items}


@contextmanager
def running(*informers: SharedIndexInformer[Foo]) -> Iterator[None]:
    stop = threading.Event()
    threads = [threading.Thread(target=i.run, args=(stop,), daemon=True) for i in informers]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: all(i.has_synced() for i in informers), "informers synced")
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(WAIT)


def sharded_informer(
    transport: HTTPTransport, ranges: list[HashRange], name: str
) -> tuple[SharedIndexInformer[Foo], ShardedListWatch[Foo], Heard]:
    lw: ShardedListWatch[Foo] = ShardedListWatch(ListWatch.from_client(foos(transport)), ranges)
    informer = SharedIndexInformer(lw, name=name, reflector_options=FAST)
    heard = Heard()
    informer.add_event_handler(heard.on_add, heard.on_update, heard.on_delete)
    return informer, lw, heard


@pytest.mark.parametrize("gate", [True, False], ids=["server-filters", "client-filters"])
def test_each_informer_caches_exactly_its_share(gate: bool) -> None:
    with served(sharded_list_and_watch=gate) as (server, transport):
        client = foos(transport)
        created: dict[str, str] = {}  # every uid, of the deleted objects too
        for index in range(30):
            made = client.create(foo(f"before-{index}"))
            created[made.metadata.name or ""] = made.metadata.uid or ""
        shards = [sharded_informer(transport, [r], f"shard-{i}")
                  for i, r in enumerate(shard_ranges())]
        with running(*(informer for informer, _, _ in shards)):
            for index in range(30):
                made = client.create(foo(f"after-{index}"))
                created[made.metadata.name or ""] = made.metadata.uid or ""
            for index in range(0, 30, 3):
                client.delete(f"before-{index}")
                client.patch(f"after-{index}", {"spec": {"touched": True}})
            uids = uids_of(transport)
            for (informer, _, heard), hash_range in zip(shards, shard_ranges(), strict=True):
                expected = share(uids, hash_range)
                wait_until(lambda i=informer, h=heard, e=expected:  # type: ignore[misc]
                           cached(i) == e == h.live,
                           f"{informer.name} caches and its handler holds {sorted(expected)}")
        for (_, lw, heard), hash_range in zip(shards, shard_ranges(), strict=True):
            # every object of the shard was heard of, and none of another shard
            assert heard.ever == share(created, hash_range)
            assert lw.server_sharded is gate
        caches = [cached(informer) for informer, _, _ in shards]
        assert sorted(n for c in caches for n in c) == sorted(uids)
        requests = [r for r in server.sharding_requests() if r.selector is not None]
        assert {r.selector for r in requests} == {format_selector([r]) for r in shard_ranges()}
        assert {r.verb for r in requests} == {"list", "watch"}
        assert all(r.applied is gate for r in requests)


@pytest.mark.parametrize("gate", [True, False], ids=["server-filters", "client-filters"])
def test_set_ranges_relists_and_the_cache_holds_the_new_share(gate: bool) -> None:
    with served(sharded_list_and_watch=gate) as (server, transport):
        client = foos(transport)
        for index in range(40):
            client.create(foo(f"foo-{index}"))
        uids = uids_of(transport)
        informer, lw, heard = sharded_informer(transport, [LOWER], "mover")
        with running(informer):
            wait_until(lambda: cached(informer) == share(uids, LOWER) == heard.live,
                       "the lower half cached")
            lw.set_ranges([UPPER])
            assert lw.selector == format_selector([UPPER])
            wait_until(lambda: cached(informer) == share(uids, UPPER) == heard.live,
                       "the upper half cached")
            late = int(client.create(foo("late")).metadata.resource_version or "")
            uids = uids_of(transport)
            # past the late object's version (bookmarks carry it) whichever half it is in
            wait_until(lambda: int(informer.last_sync_resource_version or 0) >= late,
                       "the watch past the late object")
            wait_until(lambda: cached(informer) == share(uids, UPPER) == heard.live,
                       f"the late object placed; heard {heard.log[-12:]}")
        lists = [r.selector for r in server.sharding_requests() if r.verb == "list" and r.selector]
        assert lists[0] == format_selector([LOWER])
        assert lists[-1] == format_selector([UPPER])  # the relist


def test_set_ranges_to_the_same_ranges_keeps_the_watch() -> None:
    with served(sharded_list_and_watch=True) as (server, transport):
        informer, lw, _ = sharded_informer(transport, [LOWER, UPPER], "same")
        with running(informer):
            lw.set_ranges([HashRange(0, HASH_SPACE)])  # merged, these are the same ranges
            foos(transport).create(foo("x"))
            wait_until(lambda: cached(informer) == {"x"}, "x cached")
        assert [r.verb for r in server.sharding_requests()] == ["list", "watch"]


# --- the asyncio twin ---------------------------------------------------------------------


@pytest.mark.parametrize("gate", [True, False], ids=["server-filters", "client-filters"])
def test_async_informers_cache_their_share_and_follow_set_ranges(gate: bool) -> None:
    async def main() -> None:
        with TestAPIServer(bookmark_interval=0.2, sharded_list_and_watch=gate) as server:
            server.register(FOO)
            transport = AsyncHTTPTransport(server.config())
            client: AsyncResourceClient[Foo, FooList] = AsyncResourceClient(
                transport, FOO, "default")
            for index in range(30):
                await client.create(foo(f"foo-{index}"))
            shards = []
            for index, hash_range in enumerate([LOWER, UPPER]):
                lw: AsyncShardedListWatch[Foo] = AsyncShardedListWatch(
                    AsyncListWatch.from_client(client), [hash_range])
                informer = AsyncSharedIndexInformer(lw, name=f"async-{index}",
                                                    reflector_options=FAST)
                heard = Heard()
                informer.add_event_handler(heard.on_add, heard.on_update, heard.on_delete)
                shards.append((informer, lw, heard))
            tasks = [asyncio.create_task(informer.run()) for informer, _, _ in shards]
            try:
                await client.create(foo("late"))
                await client.delete("foo-0")
                uids = {o.metadata.name or "": o.metadata.uid or ""
                        for o in (await client.list()).items}
                for (informer, lw, heard), hash_range in zip(shards, [LOWER, UPPER],
                                                             strict=True):
                    await async_until(
                        lambda i=informer, h=heard, r=hash_range:  # type: ignore[misc]
                        cached(i) == share(uids, r) == h.live,
                        f"{informer.name} caches its half")
                    assert lw.server_sharded is gate
                lower, lower_lw, lower_heard = shards[0]
                lower_lw.set_ranges([UPPER])
                await async_until(lambda: cached(lower) == share(uids, UPPER) == lower_heard.live,
                                  "the lower informer moved to the upper half")
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await transport.aclose()
            lists = [r.selector for r in server.sharding_requests()
                     if r.verb == "list" and r.selector]
            assert lists.count(format_selector([UPPER])) >= 2
            assert all(r.applied is gate for r in server.sharding_requests() if r.selector)

    asyncio.run(main())
