"""OwnerShardedListWatch: the objects whose controller owner's uid hashes into the ranges.
Its decisions over a scripted lister-watcher (sync and async), then an informer over it
against the test server: the cache holds exactly the objects of the shard's owners, follows
adoption and orphaning, and set_ranges relists to exactly the new share."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from kgen_runtime.cache import ListWatch, SharedIndexInformer
from kgen_runtime.meta import ObjectMeta, OwnerReference
from kgen_runtime.rest import ListOptions
from kgen_runtime.sharding import (
    AsyncOwnerShardedListWatch,
    OwnerShardedListWatch,
    ShardRangesChangedError,
    controller_uid,
)
from kgen_runtime.watch import WatchEvent
from tests.cache._foo import Foo, foos, served
from tests.sharding.test_listwatch import FAST, Heard, cached, running, wait_until
from tests.sharding.test_listwatch_unit import HIGH, LOW, LOWER, UPPER, Scripted, page


@dataclass
class Obj:
    metadata: ObjectMeta


def ref(uid: str, controller: bool | None = True) -> OwnerReference:
    return OwnerReference(api_version="v1", kind="Owner", name=f"owner-{uid[:8]}", uid=uid,
                          controller=controller)


def owned(name: str, *refs: OwnerReference) -> Obj:
    return Obj(ObjectMeta(name=name, uid=f"uid-{name}", resource_version="7",
                          owner_references=list(refs) or None))


def names(items: Any) -> list[str]:
    return [item.metadata.name for item in items]


# Owned by a LOWER owner (kept); by an UPPER owner; by nothing; by a LOWER owner but not as
# its controller (only the controller counts: the UPPER controller places it).
IN = owned("in", ref(LOW[0]))
OUT = owned("out", ref(HIGH[0]))
ORPHAN = owned("orphan")
SECOND = owned("second", ref(LOW[1], controller=False), ref(HIGH[1]))
NOT_CONTROLLER = owned("not-controller", ref(LOW[2], controller=None))
EVERYONE = [IN, OUT, ORPHAN, SECOND, NOT_CONTROLLER]


def test_controller_uid_is_the_controller_references() -> None:
    assert [controller_uid(o.metadata) for o in EVERYONE] == [LOW[0], HIGH[0], None, HIGH[1],
                                                              None]


def test_a_list_keeps_the_objects_of_the_ranges_owners_and_asks_the_server_nothing() -> None:
    source = Scripted([page(EVERYONE)])
    lw = OwnerShardedListWatch(source, [LOWER])
    listed = lw.list(ListOptions(limit=5))
    assert names(listed.items) == ["in"]
    assert listed.metadata is not None and listed.metadata.resource_version == "7"
    assert source.calls == [("list", ListOptions(limit=5))]  # no shardSelector
    assert not lw.server_sharded
    assert names(OwnerShardedListWatch(Scripted([page(EVERYONE)]), [UPPER])
                 .list(ListOptions()).items) == ["out", "second"]


def orphaned(obj: Obj) -> Obj:
    return Obj(obj.metadata.model_copy(update={"owner_references": None}))


def adopted(obj: Obj, uid: str) -> Obj:
    return Obj(obj.metadata.model_copy(update={"owner_references": [ref(uid)]}))


# A watch after a list of [IN]: what comes, and what is delivered for it.
WATCH = [
    (WatchEvent("ADDED", owned("new-in", ref(LOW[1]))), "same"),
    (WatchEvent("ADDED", owned("new-out", ref(HIGH[2]))), None),       # never held: nothing
    (WatchEvent("BOOKMARK", Obj(ObjectMeta(resource_version="9"))), "same"),
    (WatchEvent("MODIFIED", OUT), None),                               # still elsewhere
    (WatchEvent("MODIFIED", adopted(ORPHAN, LOW[2])), "same"),         # adopted: enters
    (WatchEvent("MODIFIED", orphaned(IN)), "DELETED"),                 # orphaned: leaves
    (WatchEvent("DELETED", orphaned(IN)), None),                       # already gone
    (WatchEvent("MODIFIED", adopted(owned("new-in", ref(LOW[1])), HIGH[0])), "DELETED"),
    (WatchEvent("DELETED", adopted(ORPHAN, LOW[2])), "same"),          # held: passed on
    (WatchEvent("DELETED", OUT), None),
    (WatchEvent("ERROR", {"kind": "Status", "code": 410}), "same"),
]


def expected_deliveries() -> list[WatchEvent[Any]]:
    return [event if outcome == "same" else WatchEvent("DELETED", event.object)
            for event, outcome in WATCH if outcome is not None]


def test_a_watch_follows_adoption_and_orphaning_and_drops_what_it_never_held() -> None:
    source = Scripted([page(EVERYONE)], [event for event, _ in WATCH])
    lw = OwnerShardedListWatch(source, [LOWER])
    lw.list(ListOptions())
    assert list(lw.watch(ListOptions(resource_version="7"))) == expected_deliveries()
    assert source.calls[-1] == ("watch", ListOptions(resource_version="7"))


def test_a_streaming_watch_starts_from_nothing_held() -> None:
    events = [WatchEvent("ADDED", OUT), WatchEvent("ADDED", IN),
              WatchEvent("MODIFIED", orphaned(IN)), WatchEvent("DELETED", OUT)]
    lw = OwnerShardedListWatch(Scripted([page(EVERYONE)], events), [LOWER])
    lw.list(ListOptions())
    delivered = list(lw.watch(ListOptions(send_initial_events=True)))
    assert delivered == [events[1], WatchEvent("DELETED", orphaned(IN))]


def test_set_ranges_ends_the_watch_and_the_relist_holds_the_new_share() -> None:
    source = Scripted([page(EVERYONE), page(EVERYONE)],
                      [WatchEvent("ADDED", IN), WatchEvent("ADDED", IN)])
    lw = OwnerShardedListWatch(source, [LOWER])
    lw.list(ListOptions())
    watcher = iter(lw.watch(ListOptions()))
    assert next(watcher) == WatchEvent("ADDED", IN)
    lw.set_ranges([UPPER])
    with pytest.raises(ShardRangesChangedError):
        next(watcher)
    with pytest.raises(ShardRangesChangedError):  # not before the relist
        lw.watch(ListOptions())
    assert names(lw.list(ListOptions()).items) == ["out", "second"]
    # the relist forgot IN: its deletion under the new ranges is nothing to this shard
    source.events = [WatchEvent("DELETED", IN), WatchEvent("DELETED", OUT)]
    assert list(lw.watch(ListOptions())) == [WatchEvent("DELETED", OUT)]
    assert lw.ranges == (UPPER,)


def test_a_continued_list_keeps_its_first_pages_ranges() -> None:
    source = Scripted([page([IN], continue_="next"), page([OUT, owned("in-2", ref(LOW[1]))])])
    lw = OwnerShardedListWatch(source, [LOWER])
    assert names(lw.list(ListOptions(limit=1)).items) == ["in"]
    lw.set_ranges([UPPER])
    assert names(lw.list(ListOptions(limit=1, continue_="next")).items) == ["in-2"]
    with pytest.raises(ShardRangesChangedError):
        lw.watch(ListOptions())


def test_no_ranges_is_refused() -> None:
    with pytest.raises(ValueError, match="needs at least one range"):
        OwnerShardedListWatch(Scripted([]), [])


class AsyncScripted:
    """The asyncio face of :class:`Scripted`."""

    def __init__(self, sync: Scripted) -> None:
        self.sync = sync

    async def list(self, options: ListOptions) -> Any:
        return self.sync.list(options)

    async def watch(self, options: ListOptions) -> Any:
        return AsyncEvents(self.sync.watch(options))


class AsyncEvents:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __aiter__(self) -> AsyncIterator[WatchEvent[Any]]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent[Any]]:
        for event in self.inner:
            yield event

    def stop(self) -> None:
        self.inner.stop()


def test_the_async_twin_decides_the_same() -> None:
    async def scenario() -> None:
        source = Scripted([page(EVERYONE)], [event for event, _ in WATCH])
        lw = AsyncOwnerShardedListWatch(AsyncScripted(source), [LOWER])
        assert names((await lw.list(ListOptions())).items) == ["in"]
        watcher = await lw.watch(ListOptions())
        assert [event async for event in watcher] == expected_deliveries()
        lw.set_ranges([UPPER])
        with pytest.raises(ShardRangesChangedError):
            await lw.watch(ListOptions())

    asyncio.run(scenario())


# --- an informer over it, against the test server ------------------------------------------


def foo_owned_by(name: str, owner_uid: str | None) -> Foo:
    refs = None if owner_uid is None else [ref(owner_uid)]
    return Foo(metadata=ObjectMeta(name=name, namespace="default", owner_references=refs))


def test_an_informer_caches_the_objects_of_its_owners_and_follows_set_ranges() -> None:
    owners = {f"low-{i}": uid for i, uid in enumerate(LOW)} | {
        f"high-{i}": uid for i, uid in enumerate(HIGH)}
    with served() as (_, transport):
        client = foos(transport)
        for name, uid in owners.items():
            client.create(foo_owned_by(name, uid))
        client.create(foo_owned_by("orphan", None))
        lw: OwnerShardedListWatch[Foo] = OwnerShardedListWatch(
            ListWatch.from_client(client), [LOWER])
        informer = SharedIndexInformer(lw, name="owned", reflector_options=FAST)
        heard = Heard()
        informer.add_event_handler(heard.on_add, heard.on_update, heard.on_delete)
        lows = {f"low-{i}" for i in range(len(LOW))}
        highs = {f"high-{i}" for i in range(len(HIGH))}
        with running(informer):
            wait_until(lambda: cached(informer) == lows == heard.live, "the lower owners'")
            # orphaning takes an object out by an update; adoption brings one in
            client.patch("low-0", {"metadata": {"ownerReferences": None}})
            client.patch("orphan", {"metadata": {"ownerReferences": [
                ref(LOW[0]).model_dump(by_alias=True, exclude_none=True)]}})
            lows = lows - {"low-0"} | {"orphan"}
            wait_until(lambda: cached(informer) == lows == heard.live,
                       f"orphan in, low-0 out; heard {heard.log[-6:]}")
            lw.set_ranges([UPPER])
            wait_until(lambda: cached(informer) == highs == heard.live,
                       f"the upper owners'; heard {heard.log[-8:]}")
        assert heard.ever == lows | highs | {"low-0"}  # never high-… before the move
